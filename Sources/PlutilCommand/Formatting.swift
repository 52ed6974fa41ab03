import AppHomeSystem
import PropertyList

/// The text forms `plutil` writes: `-p`'s listing, Foundation's JSON,
/// Swift and Objective-C literals, and `-extract … raw`.
enum Formatting {
    // MARK: - Key order

    /// The order `plutil` lists keys in: case-insensitive, runs of digits by
    /// their value ("item2" before "Item10"), ties by code point.
    static func keyPrecedes(_ a: String, _ b: String) -> Bool {
        if let answer = asciiKeyPrecedes(a, b) { return answer }
        let x = Array(a.unicodeScalars), y = Array(b.unicodeScalars)
        var i = 0, j = 0
        while i < x.count, j < y.count {
            if isDigit(x[i]), isDigit(y[j]) {
                var ei = i, ej = j
                while ei < x.count, isDigit(x[ei]) { ei += 1 }
                while ej < y.count, isDigit(y[ej]) { ej += 1 }
                var si = i, sj = j
                while si < ei - 1, x[si] == "0" { si += 1 }
                while sj < ej - 1, y[sj] == "0" { sj += 1 }
                if ei - si != ej - sj { return ei - si < ej - sj }
                for (p, q) in zip(x[si..<ei], y[sj..<ej]) where p != q { return p.value < q.value }
                i = ei; j = ej
                continue
            }
            let p = folded(x[i]), q = folded(y[j])
            if p != q { return p < q }
            i += 1; j += 1
        }
        if x.count - i != y.count - j { return x.count - i < y.count - j }
        return PlistKey(a) < PlistKey(b)
    }

    /// ``keyPrecedes(_:_:)`` for two ASCII keys (most keys), on their bytes without
    /// copying them: the same order; `nil` when either key is not ASCII.
    private static func asciiKeyPrecedes(_ a: String, _ b: String) -> Bool? {
        let answer: Bool?? = a.utf8.withContiguousStorageIfAvailable { x -> Bool? in
            let inner: Bool?? = b.utf8.withContiguousStorageIfAvailable { y -> Bool? in asciiPrecedes(x, y) }
            return inner ?? nil
        }
        return answer ?? nil
    }

    private static func asciiPrecedes(_ x: UnsafeBufferPointer<UInt8>, _ y: UnsafeBufferPointer<UInt8>) -> Bool? {
        func digit(_ c: UInt8) -> Bool { c >= 0x30 && c <= 0x39 }
        func fold(_ c: UInt8) -> UInt8 { c >= 0x41 && c <= 0x5A ? c + 0x20 : c }
        var i = 0, j = 0
        while i < x.count, j < y.count {
            let p = x[i], q = y[j]
            if p >= 0x80 || q >= 0x80 { return nil }
            if digit(p), digit(q) {
                var ei = i, ej = j
                while ei < x.count, digit(x[ei]) { ei += 1 }
                while ej < y.count, digit(y[ej]) { ej += 1 }
                var si = i, sj = j
                while si < ei - 1, x[si] == 0x30 { si += 1 }
                while sj < ej - 1, y[sj] == 0x30 { sj += 1 }
                if ei - si != ej - sj { return ei - si < ej - sj }
                var k = 0
                while k < ei - si {
                    if x[si + k] != y[sj + k] { return x[si + k] < y[sj + k] }
                    k += 1
                }
                i = ei; j = ej
                continue
            }
            let fp = fold(p), fq = fold(q)
            if fp != fq { return fp < fq }
            i += 1; j += 1
        }
        if x[i...].contains(where: { $0 >= 0x80 }) || y[j...].contains(where: { $0 >= 0x80 }) { return nil }
        if x.count - i != y.count - j { return x.count - i < y.count - j }
        return x.lexicographicallyPrecedes(y)
    }

    private static func isDigit(_ s: Unicode.Scalar) -> Bool { s.value >= 0x30 && s.value <= 0x39 }

    private static func folded(_ s: Unicode.Scalar) -> UInt32 {
        s.properties.lowercaseMapping.unicodeScalars.first?.value ?? s.value
    }

    static func sortedKeys(_ d: [PlistKey: PlistValue]) -> [PlistKey] {
        d.keys.sorted { keyPrecedes($0.string, $1.string) }
    }

    /// The entries of `d` in that order (no second look-up of each key).
    static func sortedEntries(_ d: [PlistKey: PlistValue]) -> [(key: PlistKey, value: PlistValue)] {
        d.sorted { keyPrecedes($0.key.string, $1.key.string) }
    }

    // MARK: - Numbers

    /// A real as Foundation describes an `NSNumber`: integral values without
    /// a fraction ("2"), others in the shortest form that reads back.
    static func real(_ r: Double) -> String {
        if r.isNaN { return "nan" }
        if r.isInfinite { return r < 0 ? "-inf" : "inf" }
        if r == r.rounded(), abs(r) < 1e15 { return String(Int64(r)) }
        return "\(r)"
    }

    /// A real as `%f` prints it (`-extract … raw`, Swift and Objective-C literals).
    static func fixed(_ r: Double) -> String {
        if r.isNaN { return "nan" }
        if r.isInfinite { return r < 0 ? "-inf" : "inf" }
        let negative = r < 0 || (r == 0 && r.sign == .minus)
        let scaled = (abs(r) * 1_000_000).rounded(.toNearestOrEven)
        if scaled < 1e18 {
            let n = UInt64(scaled)
            let frac = String(n % 1_000_000)
            return (negative ? "-" : "") + "\(n / 1_000_000)." + String(repeating: "0", count: 6 - frac.count) + frac
        }
        // Beyond 18 digits: the integral part exactly, as %f does.
        var digits = "", v = abs(r).rounded(.towardZero)
        while v >= 1 {
            let q = (v / 10).rounded(.towardZero)
            digits = String(Int(v - q * 10)) + digits
            v = q
        }
        return (negative ? "-" : "") + digits + ".000000"
    }

    // MARK: - Dates

    /// `2001-01-01 00:00:00 +0000`, as `-p` shows a date.
    static func dateDescription(_ d: PlistDate) -> String {
        let t = civil(d)
        return "\(pad(t.year, 4))-\(pad(t.month, 2))-\(pad(t.day, 2)) \(pad(t.hour, 2)):\(pad(t.minute, 2)):\(pad(t.second, 2)) +0000"
    }

    /// `2001-01-01T00:00:00Z`, as `-extract … raw` writes a date.
    static func iso8601(_ d: PlistDate) -> String {
        let t = civil(d)
        return "\(pad(t.year, 4))-\(pad(t.month, 2))-\(pad(t.day, 2))T\(pad(t.hour, 2)):\(pad(t.minute, 2)):\(pad(t.second, 2))Z"
    }

    private static func pad(_ n: Int64, _ width: Int) -> String {
        let s = String(abs(n))
        return (n < 0 ? "-" : "") + String(repeating: "0", count: max(0, width - s.count)) + s
    }

    private static func civil(_ d: PlistDate) -> (year: Int64, month: Int64, day: Int64, hour: Int64, minute: Int64, second: Int64) {
        let s = d.secondsSince1970
        let whole = s.isFinite ? Int64(max(-1e17, min(1e17, s.rounded(.down)))) : 0
        var days = whole >= 0 ? whole / 86400 : (whole - 86399) / 86400
        let secs = whole - days * 86400
        // Howard Hinnant's days-to-civil.
        days += 719_468
        let era = (days >= 0 ? days : days - 146_096) / 146_097
        let doe = days - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        let year = yoe + era * 400 + (month <= 2 ? 1 : 0)
        return (year, month, day, secs / 3600, secs % 3600 / 60, secs % 60)
    }

    // MARK: - Data

    private static let hex = Array("0123456789abcdef".utf8)

    /// `{length = 3, bytes = 0x010203}`; beyond 24 bytes the first 16 in groups
    /// of four, `...`, the last 8, as macOS's `-p` and `defaults read` show data.
    static func dataDescription(_ d: [UInt8]) -> String {
        var out = Array("{length = \(d.count), bytes = 0x".utf8)
        func put(_ b: UInt8) { out.append(hex[Int(b >> 4)]); out.append(hex[Int(b & 15)]) }
        if d.count <= 24 {
            d.forEach(put)
        } else {
            for (k, b) in d.prefix(16).enumerated() {
                if k > 0 && k % 4 == 0 { out.append(0x20) }
                put(b)
            }
            out.append(contentsOf: " ... ".utf8)
            for (k, b) in d.suffix(8).enumerated() {
                if k > 0 && k % 4 == 0 { out.append(0x20) }
                put(b)
            }
            out.append(0x20)
        }
        out.append(UInt8(ascii: "}"))
        return String(decoding: out, as: UTF8.self)
    }

    // MARK: - -p

    /// The listing of `-p`: dictionaries as `"key" => value` sorted, arrays as `index => value`.
    /// For a terminal (`forTerminal`), control characters in keys and strings are
    /// escaped (`\u001b`): a file cannot send the terminal an escape sequence.
    static func printed(_ value: PlistValue, forTerminal: Bool = false) -> String {
        var out = ""
        printed(value, indent: 2, shown: forTerminal ? { FileNames.escaped($0, notation: .terminal) } : { $0 }, into: &out)
        return out
    }

    private static func printed(_ value: PlistValue, indent: Int, shown: (String) -> String, into out: inout String) {
        let inner = String(repeating: " ", count: indent)
        let outer = String(repeating: " ", count: indent - 2)
        switch value {
        case .dictionary(let d):
            out += "{\n"
            for key in sortedKeys(d) {
                out += inner + "\"" + shown(key.string) + "\" => "
                printed(d[key]!, indent: indent + 2, shown: shown, into: &out)
            }
            out += outer + "}\n"
        case .array(let a):
            out += "[\n"
            for (i, item) in a.enumerated() {
                out += inner + "\(i) => "
                printed(item, indent: indent + 2, shown: shown, into: &out)
            }
            out += outer + "]\n"
        case .string(let s): out += "\"" + shown(s) + "\"\n"
        case .integer(let n): out += "\(n)\n"
        case .real(let r): out += real(r) + "\n"
        case .bool(let b): out += b ? "true\n" : "false\n"
        case .date(let d): out += dateDescription(d) + "\n"
        case .data(let d): out += dataDescription(d) + "\n"
        case .uid(let u): out += "<CFKeyedArchiverUID>{value = \(u)}\n"
        }
    }

    // MARK: - JSON, as JSONSerialization writes it

    /// Foundation's JSON of a value: compact, or indented by two with `" : "`
    /// and keys sorted when `readable`. Only arrays and dictionaries of strings,
    /// numbers and booleans can be written; a string, number or boolean alone
    /// too when `fragments` (a graph form's root may be one).
    static func json(_ value: PlistValue, readable: Bool, fragments: Bool = false, sizeHint: Int = 0) throws(PlutilError) -> [UInt8] {
        switch value {
        case .array, .dictionary: break
        default: if !fragments { throw .message("Invalid object in plist for JSON format") }
        }
        var out: [UInt8] = []
        out.reserveCapacity(sizeHint)
        try json(value, readable: readable, indent: 0, into: &out)
        return out
    }

    private static func json(_ value: PlistValue, readable: Bool, indent: Int, into out: inout [UInt8]) throws(PlutilError) {
        func newline(_ n: Int) {
            guard readable else { return }
            out.append(0x0A)
            out.append(contentsOf: repeatElement(0x20, count: n))
        }
        switch value {
        case .string(let s): JSONString.append(s, escaping: .solidus, to: &out)
        case .integer(let n): out.append(contentsOf: "\(n)".utf8)
        case .real(let r):
            guard r.isFinite else { throw .message("Invalid object in plist for JSON format") }
            out.append(contentsOf: real(r).utf8)
        case .bool(let b): out.append(contentsOf: (b ? "true" : "false").utf8)
        case .date, .data, .uid: throw .message("Invalid object in plist for JSON format")
        case .array(let a):
            out.append(UInt8(ascii: "["))
            for (k, item) in a.enumerated() {
                if k > 0 { out.append(UInt8(ascii: ",")) }
                newline(indent + 2)
                try json(item, readable: readable, indent: indent + 2, into: &out)
            }
            newline(indent)
            out.append(UInt8(ascii: "]"))
        case .dictionary(let d):
            out.append(UInt8(ascii: "{"))
            for (k, entry) in sortedEntries(d).enumerated() {
                if k > 0 { out.append(UInt8(ascii: ",")) }
                newline(indent + 2)
                JSONString.append(entry.key.string, escaping: .solidus, to: &out)
                out.append(contentsOf: (readable ? " : " : ":").utf8)
                try json(entry.value, readable: readable, indent: indent + 2, into: &out)
            }
            newline(indent)
            out.append(UInt8(ascii: "}"))
        }
    }

    // MARK: - Raw

    /// `-extract … raw`: a scalar as text, an array's count, a dictionary's keys one a line.
    static func raw(_ value: PlistValue) -> String {
        switch value {
        case .string(let s): return s
        case .integer(let n): return "\(n)"
        case .real(let r): return fixed(r)
        case .bool(let b): return b ? "true" : "false"
        case .date(let d): return iso8601(d)
        case .data(let d): return Base64.encode(d)
        case .array(let a): return "\(a.count)"
        case .dictionary(let d): return sortedKeys(d).map(\.string).joined(separator: "\n")
        case .uid(let u): return "\(u)"
        }
    }

    /// The type names of `-type` and `-expect`.
    static func typeName(_ value: PlistValue) -> String {
        switch value {
        case .bool: return "bool"
        case .integer: return "integer"
        case .real: return "float"
        case .string: return "string"
        case .date: return "date"
        case .data: return "data"
        case .array: return "array"
        case .dictionary: return "dictionary"
        case .uid: return "uid"
        }
    }

    static let typeNames: Set<String> = ["bool", "integer", "float", "string", "date", "data", "dictionary", "array"]

    // MARK: - Literals

    /// A file's name without folder and extension, with `-` and spaces as `_`
    /// and other symbols dropped: the variable of a literal.
    static func variableName(_ path: String) -> String {
        var name = Substring(path.split(separator: "/").last ?? "")
        if let dot = name.lastIndex(of: "."), dot != name.startIndex { name = name[..<dot] }
        var out = ""
        for s in name.unicodeScalars {
            if s == "-" || s == " " { out += "_"; continue }
            if s.properties.generalCategory == .control || [.mathSymbol, .currencySymbol, .modifierSymbol, .otherSymbol].contains(s.properties.generalCategory) { continue }
            out.unicodeScalars.append(s)
        }
        return out
    }

    static func lastComponent(_ path: String) -> String {
        path == "-" ? "-" : String(path.split(separator: "/").last ?? Substring(path))
    }

    private static func literalString(_ s: String) -> String {
        var out = ""
        for c in s {
            switch c {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            default: out.append(c)
            }
        }
        return out
    }

    /// A Swift literal file of a value (`-convert swift`).
    static func swiftLiteral(_ value: PlistValue, sourcePath: String) throws(PlutilError) -> String {
        var out = "/// Generated from \(lastComponent(sourcePath))\nlet \(variableName(sourcePath))"
        switch value {
        case .dictionary(let d) where Set(d.values.map(typeName)).count > 1: out += " : [String : Any]"
        case .array(let a) where Set(a.map(typeName)).count > 1: out += " : [Any]"
        default: break
        }
        out += " = "
        try literal(value, .swift, depth: 0, indent: false, into: &out)
        return out + "\n"
    }

    /// An Objective-C literal file of a value (`-convert objc`).
    static func objcLiteral(_ value: PlistValue, sourcePath: String, outputPath: String) throws(PlutilError) -> String {
        let type: String
        switch value {
        case .string: type = "NSString"
        case .integer, .real, .bool: type = "NSNumber"
        case .array: type = "NSArray"
        case .dictionary: type = "NSDictionary"
        default: throw .message("Input contains an object that cannot be represented in Obj-C literal syntax")
        }
        var out = ""
        if outputPath != "-" {
            var stem = Substring(lastComponent(outputPath))
            if let dot = stem.lastIndex(of: "."), dot != stem.startIndex { stem = stem[..<dot] }
            out += "#import \"\(stem).h\"\n\n"
        }
        out += "/// Generated from \(lastComponent(sourcePath))\n__attribute__((visibility(\"hidden\")))\n"
        out += "\(type) * const \(variableName(sourcePath)) = "
        try literal(value, .objc, depth: 0, indent: false, into: &out)
        return out + ";\n"
    }

    /// What tells a Swift literal from an Objective-C one; one writer serves both.
    private struct LiteralSyntax {
        /// Before a string, a number and a collection: `@` in Objective-C.
        var marker: String
        var yes: String, no: String
        var dictionaryOpen: String, dictionaryClose: String
        /// Whether a line end in a string value is written `\n`.
        var escapesNewlines: Bool
        var language: String

        static let swift = LiteralSyntax(marker: "", yes: "true", no: "false", dictionaryOpen: "[", dictionaryClose: "]",
                                         escapesNewlines: true, language: "Swift")
        static let objc = LiteralSyntax(marker: "@", yes: "@YES", no: "@NO", dictionaryOpen: "{", dictionaryClose: "}",
                                        escapesNewlines: false, language: "Obj-C")
    }

    private static func literal(_ value: PlistValue, _ syntax: LiteralSyntax, depth: Int, indent: Bool, into out: inout String) throws(PlutilError) {
        let pad = String(repeating: "    ", count: depth)
        if indent { out += pad }
        switch value {
        case .string(let s): out += syntax.marker + "\"" + (syntax.escapesNewlines ? literalString(s).replacingNewlines() : literalString(s)) + "\""
        case .integer(let n): out += syntax.marker + "\(n)"
        case .real(let r): out += syntax.marker + fixed(r)
        case .bool(let b): out += b ? syntax.yes : syntax.no
        case .array(let a):
            out += syntax.marker + "[\n"
            for item in a {
                try literal(item, syntax, depth: depth + 1, indent: true, into: &out)
                out += ",\n"
            }
            out += pad + "]"
        case .dictionary(let d):
            out += syntax.marker + syntax.dictionaryOpen + "\n"
            for (key, item) in sortedEntries(d) {
                out += pad + "    " + syntax.marker + "\"" + literalString(key.string) + "\" : "
                try literal(item, syntax, depth: depth + 1, indent: false, into: &out)
                out += ",\n"
            }
            out += pad + syntax.dictionaryClose
        case .date, .data, .uid:
            throw .message("Input contains an object that cannot be represented in \(syntax.language) literal syntax")
        }
    }
}

extension String {
    fileprivate func replacingNewlines() -> String {
        var out = ""
        for c in self { if c == "\n" { out += "\\n" } else { out.append(c) } }
        return out
    }
}
