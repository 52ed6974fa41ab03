/// A lossless, typed JSON form of property lists (described for users in
/// `Schemas/plist-json.md`).
///
/// Plain JSON loses plist types (integer vs. real, dates, data), so values
/// that JSON cannot tell apart carry a one-key tag object:
///
/// | plist value | JSON |
/// |---|---|
/// | string | JSON string |
/// | integer | number without `.` or exponent: `42`, `-1`, `18446744073709551615` |
/// | real | number with a `.` or exponent: `1.0`, `-0.0`, `0.1`, `1e-07` |
/// | real, not finite | `{"$real": "nan"}`, `{"$real": "inf"}`, `{"$real": "-inf"}` |
/// | boolean | `true`, `false` |
/// | date | `{"$date": "2001-01-01T00:00:00.25Z"}` (ISO 8601, UTC, fraction only when nonzero) |
/// | data | `{"$data": "<base64>"}` |
/// | array | JSON array |
/// | dictionary | JSON object, keys sorted by code point |
/// | dictionary of one key starting with `$` | `{"$dict": {…}}`, the inner object taken literally |
///
/// An object with exactly one member whose name starts with `$` is always a
/// tag; an unknown tag is an error. Output is indented by two spaces, tag
/// objects on one line, and ends with a newline. The reader also takes
/// plain JSON (without tags); `null` is an error because plists have no
/// null.
///
/// Nesting is limited to ``PlistValue/maximumDepth`` + 1 JSON levels (a tag
/// object is a level, and so is a `$dict` wrapper); the writer refuses to
/// produce what the reader would refuse.
enum JSONPlist {
    static let maximumNesting = PlistValue.maximumDepth + 1

    // MARK: - Writing

    /// Encodes `value` as typed JSON.
    ///
    /// - Throws: ``PlistError/tooDeep(limit:)``, or
    ///   ``PlistError/unrepresentable(_:)`` for a date outside
    ///   ``ISO8601/limit`` or an integer outside ``PlistValue/integerRange``.
    static func encode(_ value: PlistValue) throws(PlistError) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(4096)
        try write(value, indent: 0, nesting: 0, to: &out)
        out.append(0x0A)
        return out
    }

    private static func newline(_ indent: Int, _ out: inout [UInt8]) {
        out.append(0x0A)
        for _ in 0..<indent { out.append(0x20) }
    }

    private static func tag(_ name: String, _ text: String, _ out: inout [UInt8]) {
        out.append(contentsOf: "{\"\(name)\": \"\(text)\"}".utf8)
    }

    private static func write(_ value: PlistValue, indent: Int, nesting: Int, to out: inout [UInt8]) throws(PlistError) {
        switch value {
        case .string(let s):
            JSONString.append(s, to: &out)
        case .integer(let v):
            guard PlistValue.integerRange.contains(v) else {
                throw .unrepresentable("integer \(v) in a property list (outside \(Int64.min)...\(UInt64.max))")
            }
            out.append(contentsOf: v.description.utf8)
        case .real(let d):
            if d.isNaN {
                try checkNesting(nesting + 1)
                tag("$real", "nan", &out)
            } else if d.isInfinite {
                try checkNesting(nesting + 1)
                tag("$real", d < 0 ? "-inf" : "inf", &out)
            } else {
                // Swift's shortest form always has a "." or an exponent.
                out.append(contentsOf: d.description.utf8)
            }
        case .bool(let b):
            out.append(contentsOf: (b ? "true" : "false").utf8)
        case .date(let d):
            try checkNesting(nesting + 1)
            tag("$date", try ISO8601.format(d), &out)
        case .data(let bytes):
            try checkNesting(nesting + 1)
            out.append(contentsOf: "{\"$data\": \"".utf8)
            Base64.encode(bytes, into: &out)
            out.append(contentsOf: "\"}".utf8)
        case .uid(let n):
            try checkNesting(nesting + 1)
            out.append(contentsOf: "{\"$uid\": \(n)}".utf8)
        case .array(let items):
            // A collection is one plist level: at most maximumDepth of them.
            if nesting + 1 > PlistValue.maximumDepth { throw .tooDeep(limit: PlistValue.maximumDepth) }
            if items.isEmpty {
                out.append(contentsOf: "[]".utf8)
                return
            }
            out.append(UInt8(ascii: "["))
            for (k, item) in items.enumerated() {
                if k > 0 { out.append(UInt8(ascii: ",")) }
                newline(indent + 2, &out)
                try write(item, indent: indent + 2, nesting: nesting + 1, to: &out)
            }
            newline(indent, &out)
            out.append(UInt8(ascii: "]"))
        case .dictionary(let entries):
            if entries.count == 1, entries.first!.key.string.hasPrefix("$") {
                try checkNesting(nesting + 1)
                out.append(contentsOf: "{".utf8)
                newline(indent + 2, &out)
                out.append(contentsOf: "\"$dict\": ".utf8)
                try object(entries, indent: indent + 2, nesting: nesting + 1, to: &out)
                newline(indent, &out)
                out.append(contentsOf: "}".utf8)
            } else {
                try object(entries, indent: indent, nesting: nesting, to: &out)
            }
        }
    }

    private static func object(_ entries: [PlistKey: PlistValue], indent: Int, nesting: Int, to out: inout [UInt8]) throws(PlistError) {
        if nesting + 1 > PlistValue.maximumDepth { throw .tooDeep(limit: PlistValue.maximumDepth) }
        if entries.isEmpty {
            out.append(contentsOf: "{}".utf8)
            return
        }
        out.append(UInt8(ascii: "{"))
        var first = true
        for (key, item) in entries.sorted(by: { $0.key < $1.key }) {
            if !first { out.append(UInt8(ascii: ",")) }
            first = false
            newline(indent + 2, &out)
            JSONString.append(key.string, to: &out)
            out.append(contentsOf: ": ".utf8)
            try write(item, indent: indent + 2, nesting: nesting + 1, to: &out)
        }
        newline(indent, &out)
        out.append(UInt8(ascii: "}"))
    }

    private static func checkNesting(_ n: Int) throws(PlistError) {
        if n > maximumNesting { throw .tooDeep(limit: PlistValue.maximumDepth) }
    }

    // MARK: - Reading

    /// Decodes typed (or plain) JSON.
    ///
    /// - Throws: ``PlistError/malformed(format:detail:)`` with the line and
    ///   column, or ``PlistError/tooDeep(limit:)``.
    static func decode(_ bytes: [UInt8], plain: Bool = false) throws(PlistError) -> PlistValue {
        var parser = Parser(bytes)
        parser.plain = plain
        return try parser.document()
    }

    /// A JSON value before tags are interpreted; a tag's meaning depends
    /// on how many members its object has, known only at the closing brace.
    private indirect enum Node {
        case string(String)
        case number(String, isReal: Bool, at: Int)
        case bool(Bool)
        case array([Node])
        case object([(String, Node)], at: Int)
    }

    private struct Parser {
        let p: [UInt8]
        var i = 0
        /// Plain JSON: no member is a tag.
        var plain = false

        init(_ bytes: [UInt8]) { p = bytes }

        func error(_ message: String, at position: Int? = nil) -> PlistError {
            let at = min(position ?? i, p.count)
            var line = 1
            var lineStart = 0
            for k in 0..<at where p[k] == 0x0A {
                line += 1
                lineStart = k + 1
            }
            var column = 1
            for k in lineStart..<at where p[k] & 0xC0 != 0x80 { column += 1 }
            return .malformed(format: "JSON", detail: "line \(line), column \(column): \(message)")
        }

        mutating func skipSpace() {
            while i < p.count, p[i] == 0x20 || p[i] == 0x09 || p[i] == 0x0A || p[i] == 0x0D { i += 1 }
        }

        mutating func document() throws(PlistError) -> PlistValue {
            if p.starts(with: [0xEF, 0xBB, 0xBF]) { i = 3 }
            let start = i
            let node = try value(nesting: 0)
            skipSpace()
            guard i == p.count else { throw error("content after the end of the JSON value") }
            return try convert(node, depth: 0, at: start)
        }

        mutating func value(nesting: Int) throws(PlistError) -> Node {
            skipSpace()
            guard i < p.count else { throw error("unexpected end of input where a value was expected") }
            switch p[i] {
            case UInt8(ascii: "{"):
                guard nesting < JSONPlist.maximumNesting else { throw .tooDeep(limit: PlistValue.maximumDepth) }
                return try object(nesting: nesting + 1)
            case UInt8(ascii: "["):
                guard nesting < JSONPlist.maximumNesting else { throw .tooDeep(limit: PlistValue.maximumDepth) }
                return try array(nesting: nesting + 1)
            case UInt8(ascii: "\""):
                return .string(try string())
            case UInt8(ascii: "t"):
                try literal("true")
                return .bool(true)
            case UInt8(ascii: "f"):
                try literal("false")
                return .bool(false)
            case UInt8(ascii: "n"):
                throw error("null has no property-list equivalent")
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                return try number()
            default:
                throw error("unexpected character where a value was expected")
            }
        }

        mutating func literal(_ word: String) throws(PlistError) {
            let w = Array(word.utf8)
            guard i + w.count <= p.count, Array(p[i..<(i + w.count)]) == w else {
                throw error("unexpected character where a value was expected")
            }
            i += w.count
        }

        @inline(never)
        mutating func array(nesting: Int) throws(PlistError) -> Node {
            i += 1
            var items: [Node] = []
            skipSpace()
            if i < p.count, p[i] == UInt8(ascii: "]") {
                i += 1
                return .array(items)
            }
            while true {
                items.append(try value(nesting: nesting))
                skipSpace()
                guard i < p.count else { throw error("unterminated array") }
                if p[i] == UInt8(ascii: ",") { i += 1; continue }
                if p[i] == UInt8(ascii: "]") { i += 1; return .array(items) }
                throw error("expected , or ] in array")
            }
        }

        @inline(never)
        mutating func object(nesting: Int) throws(PlistError) -> Node {
            let start = i
            i += 1
            var members: [(String, Node)] = []
            skipSpace()
            if i < p.count, p[i] == UInt8(ascii: "}") {
                i += 1
                return .object(members, at: start)
            }
            while true {
                skipSpace()
                guard i < p.count, p[i] == UInt8(ascii: "\"") else { throw error("expected a member name in object") }
                let name = try string()
                skipSpace()
                guard i < p.count, p[i] == UInt8(ascii: ":") else { throw error("expected : after member name") }
                i += 1
                members.append((name, try value(nesting: nesting)))
                skipSpace()
                guard i < p.count else { throw error("unterminated object") }
                if p[i] == UInt8(ascii: ",") { i += 1; continue }
                if p[i] == UInt8(ascii: "}") { i += 1; return .object(members, at: start) }
                throw error("expected , or } in object")
            }
        }

        mutating func number() throws(PlistError) -> Node {
            let start = i
            var isReal = false
            if p[i] == UInt8(ascii: "-") { i += 1 }
            func digits(_ i: inout Int) -> Int {
                let s = i
                while i < p.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(p[i]) { i += 1 }
                return i - s
            }
            let intStart = i
            let n = digits(&i)
            guard n > 0, !(n > 1 && p[intStart] == UInt8(ascii: "0")) else { throw error("malformed number", at: start) }
            if i < p.count, p[i] == UInt8(ascii: ".") {
                isReal = true
                i += 1
                guard digits(&i) > 0 else { throw error("malformed number", at: start) }
            }
            if i < p.count, p[i] == UInt8(ascii: "e") || p[i] == UInt8(ascii: "E") {
                isReal = true
                i += 1
                if i < p.count, p[i] == UInt8(ascii: "+") || p[i] == UInt8(ascii: "-") { i += 1 }
                guard digits(&i) > 0 else { throw error("malformed number", at: start) }
            }
            return .number(String(decoding: p[start..<i], as: UTF8.self), isReal: isReal, at: start)
        }

        mutating func string() throws(PlistError) -> String {
            let start = i
            i += 1
            var bytes: [UInt8] = []
            while true {
                guard i < p.count else { throw error("unterminated string", at: start) }
                let c = p[i]
                i += 1
                switch c {
                case UInt8(ascii: "\""):
                    guard let s = String(validating: bytes, as: UTF8.self) else {
                        throw error("string is not valid UTF-8", at: start)
                    }
                    return s
                case UInt8(ascii: "\\"):
                    guard i < p.count else { throw error("unterminated string", at: start) }
                    let e = p[i]
                    i += 1
                    switch e {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): bytes.append(e)
                    case UInt8(ascii: "b"): bytes.append(0x08)
                    case UInt8(ascii: "f"): bytes.append(0x0C)
                    case UInt8(ascii: "n"): bytes.append(0x0A)
                    case UInt8(ascii: "r"): bytes.append(0x0D)
                    case UInt8(ascii: "t"): bytes.append(0x09)
                    case UInt8(ascii: "u"):
                        var scalar = UInt32(try hex4())
                        if (0xD800..<0xDC00).contains(scalar) {
                            guard i + 1 < p.count, p[i] == UInt8(ascii: "\\"), p[i + 1] == UInt8(ascii: "u") else {
                                throw error("unpaired surrogate in \\u escape", at: i - 6)
                            }
                            i += 2
                            let low = UInt32(try hex4())
                            guard (0xDC00..<0xE000).contains(low) else {
                                throw error("unpaired surrogate in \\u escape", at: i - 12)
                            }
                            scalar = 0x10000 + ((scalar - 0xD800) << 10 | (low - 0xDC00))
                        }
                        guard let u = Unicode.Scalar(scalar) else {
                            throw error("unpaired surrogate in \\u escape", at: i - 6)
                        }
                        bytes.append(contentsOf: UTF8.encode(u)!)
                    default:
                        throw error("unknown escape \\\(Character(Unicode.Scalar(e)))", at: i - 2)
                    }
                case 0x00..<0x20:
                    throw error("unescaped control character in string", at: i - 1)
                default:
                    bytes.append(c)
                }
            }
        }

        mutating func hex4() throws(PlistError) -> UInt16 {
            guard i + 4 <= p.count else { throw error("malformed \\u escape") }
            var v: UInt16 = 0
            for _ in 0..<4 {
                let c = p[i]
                let d: UInt16
                switch c {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): d = UInt16(c - UInt8(ascii: "0"))
                case UInt8(ascii: "a")...UInt8(ascii: "f"): d = UInt16(c - UInt8(ascii: "a") + 10)
                case UInt8(ascii: "A")...UInt8(ascii: "F"): d = UInt16(c - UInt8(ascii: "A") + 10)
                default: throw error("malformed \\u escape")
                }
                v = v << 4 | d
                i += 1
            }
            return v
        }

        /// Interprets tags; `at` is only for error positions.
        func convert(_ node: Node, depth: Int, at: Int) throws(PlistError) -> PlistValue {
            switch node {
            case .string(let s):
                return .string(s)
            case .bool(let b):
                return .bool(b)
            case .number(let text, let isReal, let at):
                if isReal {
                    guard let d = Double(text) else { throw error("malformed number \(text)", at: at) }
                    return .real(d)
                }
                guard let v = XMLPlistReader.integer(Array(text.utf8)) else {
                    throw error("integer \(text) is outside \(Int64.min)...\(UInt64.max)", at: at)
                }
                return .integer(v)
            case .array(let items):
                guard depth < PlistValue.maximumDepth else { throw .tooDeep(limit: PlistValue.maximumDepth) }
                var out: [PlistValue] = []
                out.reserveCapacity(items.count)
                for item in items { out.append(try convert(item, depth: depth + 1, at: at)) }
                return .array(out)
            case .object(let members, let at):
                if !plain, members.count == 1, members[0].0.hasPrefix("$") {
                    return try tagged(members[0].0, members[0].1, depth: depth, at: at)
                }
                return try dictionary(members, depth: depth, at: at)
            }
        }

        func dictionary(_ members: [(String, Node)], depth: Int, at: Int) throws(PlistError) -> PlistValue {
            guard depth < PlistValue.maximumDepth else { throw .tooDeep(limit: PlistValue.maximumDepth) }
            var out: [PlistKey: PlistValue] = [:]
            out.reserveCapacity(members.count)
            for (name, node) in members {
                guard out[name] == nil else { throw error("duplicate key \"\(name)\"", at: at) }
                out[name] = try convert(node, depth: depth + 1, at: at)
            }
            return .dictionary(out)
        }

        func tagged(_ name: String, _ node: Node, depth: Int, at: Int) throws(PlistError) -> PlistValue {
            switch (name, node) {
            case ("$real", .string(let s)):
                switch s {
                case "nan": return .real(.nan)
                case "inf": return .real(.infinity)
                case "-inf": return .real(-.infinity)
                default: throw error("\"$real\" must be \"nan\", \"inf\" or \"-inf\", not \"\(s)\"", at: at)
                }
            case ("$date", .string(let s)):
                guard let d = ISO8601.parse(Array(s.utf8)) else {
                    throw error("\"\(s)\" is not a date of the form YYYY-MM-DDTHH:MM:SSZ", at: at)
                }
                return .date(d)
            case ("$data", .string(let s)):
                guard let bytes = Base64.decode(s.utf8) else { throw error("\"$data\" is not valid base64", at: at) }
                return .data(bytes)
            case ("$dict", .object(let members, _)):
                return try dictionary(members, depth: depth, at: at)
            case ("$uid", .number(let text, false, _)):
                guard let v = XMLPlistReader.integer(Array(text.utf8)), v >= 0 else {
                    throw error("\"$uid\" must be an integer between 0 and \(UInt64.max), not \(text)", at: at)
                }
                return .uid(UInt64(v))
            case ("$uid", _):
                throw error("the value of \"$uid\" must be an integer between 0 and \(UInt64.max)", at: at)
            case ("$real", _), ("$date", _), ("$data", _):
                throw error("the value of \"\(name)\" must be a string", at: at)
            case ("$dict", _):
                throw error("the value of \"$dict\" must be an object", at: at)
            default:
                throw error("unknown tag \"\(name)\" (a one-key dictionary whose key starts with $ must be wrapped in {\"$dict\": …})", at: at)
            }
        }
    }
}
