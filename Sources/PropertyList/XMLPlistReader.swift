/// Reads Apple XML property lists.
///
/// A small recursive-descent reader for the subset of XML that plists use,
/// rather than libplist: libplist 2.2's API cannot tell -1 from
/// `UInt64.max` and keeps dates in 32-bit seconds. It is strict about
/// structure (every element closed, keys paired with values, known element
/// names only) and tolerant of what XML allows around it: an optional
/// UTF-8 byte-order mark, `<?xml … ?>` and other processing instructions,
/// `<!DOCTYPE …>`, comments anywhere between elements, attributes, the
/// five predefined entities, numeric character references and CDATA
/// sections. Line ends in text are normalised as XML requires (CR LF and
/// lone CR become LF); a CR written as `&#13;` survives.
///
/// Numeric character references are accepted for every Unicode scalar,
/// including the C0 controls XML 1.0 forbids, because that is how
/// ``XMLPlistWriter`` carries such characters losslessly.
///
/// Errors carry the line and the column (in Unicode scalars, from 1).
struct XMLPlistReader {
    private let p: UnsafeBufferPointer<UInt8>
    private var i = 0
    /// Whether a key twice in one `<dict>` is an error (Core Foundation keeps the last).
    private var refuseDuplicateKeys = false

    /// Decodes a whole XML property list.
    ///
    /// - Throws: ``PlistError/malformed(format:detail:)`` starting with
    ///   `line L, column C:`, or ``PlistError/tooDeep(limit:)``.
    /// - Parameter refuseDuplicateKeys: a key twice in one `<dict>` is an
    ///   error instead of the last one winning (as Core Foundation reads it).
    static func decode(_ bytes: [UInt8], refuseDuplicateKeys: Bool = false) throws(PlistError) -> PlistValue {
        let result: Result<PlistValue, PlistError> = bytes.withUnsafeBufferPointer { buffer in
            do throws(PlistError) {
                var reader = XMLPlistReader(p: buffer)
                reader.refuseDuplicateKeys = refuseDuplicateKeys
                return .success(try reader.document())
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    private init(p: UnsafeBufferPointer<UInt8>) {
        self.p = p
    }

    // MARK: - Errors

    private func error(_ message: String, at position: Int? = nil) -> PlistError {
        let at = min(position ?? i, p.count)
        var line = 1
        var lineStart = 0
        for k in 0..<at where p[k] == UInt8(ascii: "\n") {
            line += 1
            lineStart = k + 1
        }
        var column = 1
        for k in lineStart..<at where p[k] & 0xC0 != 0x80 { column += 1 }
        return .malformed(format: "XML", detail: "line \(line), column \(column): \(message)")
    }

    // MARK: - Scanning helpers

    private var atEnd: Bool { i >= p.count }

    private func peek(_ offset: Int = 0) -> UInt8 {
        i + offset < p.count ? p[i + offset] : 0
    }

    private func looking(at literal: StaticString) -> Bool {
        let n = literal.utf8CodeUnitCount
        guard i + n <= p.count else { return false }
        let s = literal.utf8Start
        for k in 0..<n where p[i + k] != s[k] { return false }
        return true
    }

    private static func isSpace(_ c: UInt8) -> Bool {
        c == 0x20 || c == 0x09 || c == 0x0A || c == 0x0D
    }

    private mutating func skipSpace() {
        while i < p.count, Self.isSpace(p[i]) { i += 1 }
    }

    /// Skips to just past `terminator`, or throws `message` at `start`.
    private mutating func skip(past terminator: StaticString, unterminated message: String, from start: Int) throws(PlistError) {
        while i < p.count {
            if looking(at: terminator) {
                i += terminator.utf8CodeUnitCount
                return
            }
            i += 1
        }
        throw error(message, at: start)
    }

    /// Skips whitespace, comments and processing instructions (and, in the
    /// prolog, a document type declaration).
    private mutating func skipMisc(allowDoctype: Bool) throws(PlistError) {
        while true {
            skipSpace()
            let start = i
            if looking(at: "<!--") {
                i += 4
                try skip(past: "-->", unterminated: "unterminated comment", from: start)
            } else if looking(at: "<?") {
                i += 2
                try skip(past: "?>", unterminated: "unterminated processing instruction", from: start)
            } else if allowDoctype && looking(at: "<!DOCTYPE") {
                i += 9
                // An internal subset (`[ … ]`) can declare entities that expand without bound and
                // change what the document means; Core Foundation and swift-foundation refuse it.
                var quote: UInt8 = 0
                while true {
                    guard i < p.count else { throw error("unterminated <!DOCTYPE", at: start) }
                    let c = p[i]
                    if quote != 0 {
                        if c == quote { quote = 0 }
                    } else if c == UInt8(ascii: "\"") || c == UInt8(ascii: "'") {
                        quote = c
                    } else if c == UInt8(ascii: "[") {
                        throw error("<!DOCTYPE> with an internal subset ([ … ]) is not allowed in a property list")
                    } else if c == UInt8(ascii: ">") {
                        i += 1
                        break
                    }
                    i += 1
                }
            } else {
                return
            }
        }
    }

    // MARK: - Tags

    private struct Tag {
        var name: String
        var selfClosing: Bool
        var position: Int
    }

    private static func isNameByte(_ c: UInt8) -> Bool {
        !(isSpace(c) || c == UInt8(ascii: "/") || c == UInt8(ascii: ">") || c == UInt8(ascii: "<") || c == UInt8(ascii: "="))
    }

    /// Reads a start tag at the current `<`, skipping its attributes.
    private mutating func startTag() throws(PlistError) -> Tag {
        let start = i
        guard peek() == UInt8(ascii: "<") else {
            if atEnd { throw error("unexpected end of file where an element was expected") }
            throw error("text where an element was expected")
        }
        i += 1
        let nameStart = i
        while i < p.count, Self.isNameByte(p[i]) { i += 1 }
        guard i > nameStart else { throw error("malformed tag", at: start) }
        let name = String(decoding: UnsafeBufferPointer(rebasing: p[nameStart..<i]), as: UTF8.self)
        var selfClosing = false
        let unterminated = "unterminated <\(name)> tag"
        try scanOutsideQuotes(unterminated: unterminated, from: start) { c, next in
            if c == UInt8(ascii: "<") { return nil }
            if c == UInt8(ascii: "/") && next == UInt8(ascii: ">") { selfClosing = true; return true }
            return c == UInt8(ascii: ">")
        }
        if selfClosing { i += 1 }
        return Tag(name: name, selfClosing: selfClosing, position: start)
    }

    /// Advances byte by byte, passing over quoted text (`"…"`, `'…'`) whole,
    /// until `stop` says so of an unquoted byte (it also sees the byte after
    /// it, or 0 at the end); `unterminated` is the error when the input ends
    /// first or `stop` answers `nil`.
    private mutating func scanOutsideQuotes(unterminated: String, from start: Int, _ stop: (UInt8, UInt8) -> Bool?) throws(PlistError) {
        var quote: UInt8 = 0
        while true {
            guard i < p.count else { throw error(unterminated, at: start) }
            let c = p[i]
            i += 1
            if quote != 0 {
                if c == quote { quote = 0 }
            } else if c == UInt8(ascii: "\"") || c == UInt8(ascii: "'") {
                quote = c
            } else if let done = stop(c, i < p.count ? p[i] : 0) {
                if done { return }
            } else {
                throw error(unterminated, at: start)
            }
        }
    }

    /// Reads `</name>` at the current position.
    private mutating func endTag(_ name: String, opened: Tag) throws(PlistError) {
        let start = i
        guard looking(at: "</") else {
            throw error("<\(name)> opened at \(where_(opened.position)) is not closed", at: start)
        }
        i += 2
        let nameStart = i
        while i < p.count, Self.isNameByte(p[i]) { i += 1 }
        let found = String(decoding: UnsafeBufferPointer(rebasing: p[nameStart..<i]), as: UTF8.self)
        skipSpace()
        guard peek() == UInt8(ascii: ">") else { throw error("malformed end tag </\(found)", at: start) }
        i += 1
        guard found == name else {
            throw error("</\(found)> does not close <\(name)> opened at \(where_(opened.position))", at: start)
        }
    }

    private func where_(_ position: Int) -> String {
        if case .malformed(_, let detail) = error("", at: position),
           let colon = detail.lastIndex(of: ":") {
            return String(detail[..<colon])
        }
        return "offset \(position)"
    }

    // MARK: - Document and values

    private mutating func document() throws(PlistError) -> PlistValue {
        if p.count >= 3 && p[0] == 0xEF && p[1] == 0xBB && p[2] == 0xBF { i = 3 }
        try skipMisc(allowDoctype: true)
        if atEnd { throw error("no root element") }
        let root = try startTag()
        let value: PlistValue
        if root.name == "plist" {
            guard !root.selfClosing else { throw error("<plist/> holds no value", at: root.position) }
            try skipMisc(allowDoctype: false)
            if looking(at: "</") { throw error("<plist> holds no value") }
            let tag = try startTag()
            value = try self.value(tag, depth: 0)
            try skipMisc(allowDoctype: false)
            try endTag("plist", opened: root)
        } else {
            value = try self.value(root, depth: 0)
        }
        try skipMisc(allowDoctype: false)
        guard atEnd else { throw error("content after the end of the property list") }
        return value
    }

    private mutating func value(_ tag: Tag, depth: Int) throws(PlistError) -> PlistValue {
        switch tag.name {
        case "dict":
            return try dictionary(tag, depth: depth + 1)
        case "array":
            return try array(tag, depth: depth + 1)
        default:
            return try scalar(tag)
        }
    }

    @inline(never)
    private mutating func array(_ tag: Tag, depth: Int) throws(PlistError) -> PlistValue {
        guard depth <= PlistValue.maximumDepth else { throw .tooDeep(limit: PlistValue.maximumDepth) }
        var items: [PlistValue] = []
        if tag.selfClosing { return .array(items) }
        while true {
            try skipMisc(allowDoctype: false)
            if looking(at: "</") { break }
            let child = try startTag()
            if child.name == "key" { throw error("<key> inside <array>", at: child.position) }
            items.append(try value(child, depth: depth))
        }
        try endTag("array", opened: tag)
        return .array(items)
    }

    @inline(never)
    private mutating func dictionary(_ tag: Tag, depth: Int) throws(PlistError) -> PlistValue {
        guard depth <= PlistValue.maximumDepth else { throw .tooDeep(limit: PlistValue.maximumDepth) }
        var entries: [PlistKey: PlistValue] = [:]
        if tag.selfClosing { return .dictionary(entries) }
        while true {
            try skipMisc(allowDoctype: false)
            if looking(at: "</") { break }
            let keyTag = try startTag()
            guard keyTag.name == "key" else {
                throw error("<\(keyTag.name)> in <dict> where a <key> was expected", at: keyTag.position)
            }
            let key = try text(keyTag)
            try skipMisc(allowDoctype: false)
            if looking(at: "</") || atEnd { throw error("key \"\(key)\" has no value") }
            let valueTag = try startTag()
            if valueTag.name == "key" { throw error("key \"\(key)\" has no value", at: valueTag.position) }
            if refuseDuplicateKeys && entries[key] != nil {
                throw error("key \"\(key)\" appears twice in one <dict>", at: keyTag.position)
            }
            entries[key] = try value(valueTag, depth: depth)
        }
        try endTag("dict", opened: tag)
        // Core Foundation writes a keyed-archiver UID as a dictionary with
        // the one key CF$UID, and reads such a dictionary back as a UID.
        if entries.count == 1, case .integer(let n)? = entries["CF$UID"], (0...Int128(UInt64.max)).contains(n) {
            return .uid(UInt64(n))
        }
        return .dictionary(entries)
    }

    @inline(never)
    private mutating func scalar(_ tag: Tag) throws(PlistError) -> PlistValue {
        switch tag.name {
        case "string":
            return .string(try text(tag))
        case "integer":
            let t = try text(tag)
            guard let v = Self.integer(Array(t.utf8)) else {
                throw error("\"\(t)\" is not an integer between \(Int64.min) and \(UInt64.max)", at: tag.position)
            }
            return .integer(v)
        case "real":
            let t = try text(tag)
            guard let v = Self.real(t) else { throw error("\"\(t)\" is not a real number", at: tag.position) }
            return .real(v)
        case "true", "false":
            if !tag.selfClosing {
                try skipMisc(allowDoctype: false)
                try endTag(tag.name, opened: tag)
            }
            return .bool(tag.name == "true")
        case "date":
            let t = try text(tag)
            guard let d = ISO8601.parse(Array(t.utf8)) else {
                throw error("\"\(t)\" is not a date of the form YYYY-MM-DDTHH:MM:SSZ", at: tag.position)
            }
            return .date(d)
        case "data":
            let t = try text(tag)
            guard let bytes = Base64.decode(t.utf8) else { throw error("<data> is not valid base64", at: tag.position) }
            return .data(bytes)
        case "key":
            throw error("<key> outside <dict>", at: tag.position)
        default:
            throw error("unknown element <\(tag.name)>", at: tag.position)
        }
    }

    // MARK: - Text

    /// The character data of `tag` up to its end tag, with entities and
    /// CDATA resolved and comments dropped; nested elements are errors.
    private mutating func text(_ tag: Tag) throws(PlistError) -> String {
        if tag.selfClosing { return "" }
        var bytes: [UInt8] = []
        while true {
            // Copy a run of plain text in one go.
            let runStart = i
            while i < p.count {
                let c = p[i]
                if c == UInt8(ascii: "<") || c == UInt8(ascii: "&") || c == 0x0D { break }
                i += 1
            }
            if i > runStart { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: p[runStart..<i])) }
            guard i < p.count else { throw error("<\(tag.name)> opened at \(where_(tag.position)) is not closed") }
            let c = p[i]
            if c == 0x0D {
                bytes.append(0x0A)
                i += 1
                if peek() == 0x0A { i += 1 }
            } else if c == UInt8(ascii: "&") {
                try entity(into: &bytes)
            } else if looking(at: "<![CDATA[") {
                let start = i
                i += 9
                let contentStart = i
                try skip(past: "]]>", unterminated: "unterminated CDATA section", from: start)
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: p[contentStart..<(i - 3)]))
            } else if looking(at: "<!--") {
                let start = i
                i += 4
                try skip(past: "-->", unterminated: "unterminated comment", from: start)
            } else if looking(at: "</") {
                try endTag(tag.name, opened: tag)
                break
            } else {
                throw error("element inside <\(tag.name)>")
            }
        }
        guard let s = String(validating: bytes, as: UTF8.self) else {
            throw error("<\(tag.name)> is not valid UTF-8", at: tag.position)
        }
        return s
    }

    private mutating func entity(into bytes: inout [UInt8]) throws(PlistError) {
        let start = i
        i += 1
        let nameStart = i
        while i < p.count, p[i] != UInt8(ascii: ";"), i - nameStart < 12 { i += 1 }
        guard i < p.count, p[i] == UInt8(ascii: ";") else { throw error("unterminated entity reference", at: start) }
        let name = Array(p[nameStart..<i])
        i += 1
        switch name {
        case Array("lt".utf8): bytes.append(UInt8(ascii: "<"))
        case Array("gt".utf8): bytes.append(UInt8(ascii: ">"))
        case Array("amp".utf8): bytes.append(UInt8(ascii: "&"))
        case Array("quot".utf8): bytes.append(UInt8(ascii: "\""))
        case Array("apos".utf8): bytes.append(UInt8(ascii: "'"))
        default:
            guard name.first == UInt8(ascii: "#"), name.count >= 2 else {
                throw error("unknown entity &\(String(decoding: name, as: UTF8.self));", at: start)
            }
            var digits = name.dropFirst()
            var radix: UInt32 = 10
            if digits.first == UInt8(ascii: "x") {
                radix = 16
                digits = digits.dropFirst()
            }
            var v: UInt32 = 0
            for d in digits {
                guard let dv = Self.digit(d, radix: radix), v <= 0x10FFFF else {
                    throw error("malformed character reference", at: start)
                }
                v = v * radix + dv
            }
            guard !digits.isEmpty, let scalar = Unicode.Scalar(v) else {
                throw error("character reference to an invalid code point", at: start)
            }
            bytes.append(contentsOf: UTF8.encode(scalar)!)
        }
    }

    private static func digit(_ c: UInt8, radix: UInt32) -> UInt32? {
        let v: UInt32
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): v = UInt32(c - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): v = UInt32(c - UInt8(ascii: "a") + 10)
        case UInt8(ascii: "A")...UInt8(ascii: "F"): v = UInt32(c - UInt8(ascii: "A") + 10)
        default: return nil
        }
        return v < radix ? v : nil
    }

    // MARK: - Scalars

    /// Parses `[+-]digits` or `[+-]0xhex`, surrounding whitespace allowed,
    /// within ``PlistValue/integerRange``.
    static func integer(_ text: [UInt8]) -> Int128? {
        var t = text[...]
        while let c = t.first, isSpace(c) { t = t.dropFirst() }
        while let c = t.last, isSpace(c) { t = t.dropLast() }
        var negative = false
        if let c = t.first, c == UInt8(ascii: "-") || c == UInt8(ascii: "+") {
            negative = c == UInt8(ascii: "-")
            t = t.dropFirst()
        }
        var radix: UInt32 = 10
        if t.count > 2, t.first == UInt8(ascii: "0"), t.dropFirst().first == UInt8(ascii: "x") || t.dropFirst().first == UInt8(ascii: "X") {
            radix = 16
            t = t.dropFirst(2)
        }
        guard !t.isEmpty else { return nil }
        var magnitude: Int128 = 0
        let limit = Int128(UInt64.max)
        for c in t {
            guard let d = digit(c, radix: radix) else { return nil }
            magnitude = magnitude * Int128(radix) + Int128(d)
            if magnitude > limit { return nil }
        }
        let v = negative ? -magnitude : magnitude
        return PlistValue.integerRange.contains(v) ? v : nil
    }

    /// Parses a decimal real (`1`, `-2.5`, `.5`, `1e-07`) or one of the
    /// names `nan`, `inf`, `infinity` with an optional sign, in any case.
    ///
    /// Whitespace may come before the number but not after it: Core
    /// Foundation scans the number from the start and refuses the element
    /// when anything is left over (`<real>1.5  </real>`).
    static func real(_ text: String) -> Double? {
        var t = Array(text.utf8)[...]
        while let c = t.first, isSpace(c) { t = t.dropFirst() }
        let lower = String(decoding: t, as: UTF8.self).lowercased()
        switch lower {
        case "nan", "+nan", "-nan": return .nan
        case "inf", "+inf", "infinity", "+infinity": return .infinity
        case "-inf", "-infinity": return -.infinity
        default: break
        }
        // Validate the decimal grammar ourselves: Double(_:) also takes hex
        // floats and `nan(…)` forms that no plist writer produces.
        var k = t.startIndex
        func digits() -> Int {
            let s = k
            while k < t.endIndex, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(t[k]) { k += 1 }
            return k - s
        }
        if k < t.endIndex, t[k] == UInt8(ascii: "+") || t[k] == UInt8(ascii: "-") { k += 1 }
        var mantissaDigits = digits()
        if k < t.endIndex, t[k] == UInt8(ascii: ".") {
            k += 1
            mantissaDigits += digits()
        }
        guard mantissaDigits > 0 else { return nil }
        if k < t.endIndex, t[k] == UInt8(ascii: "e") || t[k] == UInt8(ascii: "E") {
            k += 1
            if k < t.endIndex, t[k] == UInt8(ascii: "+") || t[k] == UInt8(ascii: "-") { k += 1 }
            guard digits() > 0 else { return nil }
        }
        guard k == t.endIndex else { return nil }
        return Double(String(decoding: t, as: UTF8.self))
    }
}

/// ISO 8601 dates as XML and JSON plists write them:
/// `[-]YYYY-MM-DDTHH:MM:SS[.fraction]Z`; written with four or more year
/// digits, read with one or more.
///
/// Conversion goes through whole seconds and a separate fraction so that
/// it is exact: the fraction is printed as the shortest decimal that reads
/// back as the same `Double`, and the whole seconds are integers well
/// inside the 53 bits a `Double` holds exactly.
enum ISO8601 {
    /// Furthest date written as a calendar date: about 31 million years.
    /// Beyond 2^53 seconds a `Double` has no fraction left and the
    /// calendar arithmetic would stop being exact.
    static let limit: Double = 1e15

    /// The text of `date`, with a fraction only when it has one, or in
    /// whole seconds (rounded down, as Core Foundation writes XML dates).
    ///
    /// - Throws: ``PlistError/unrepresentable(_:)`` for a non-finite date
    ///   or one further than ``limit`` seconds from 2001.
    static func format(_ date: PlistDate, wholeSeconds: Bool = false) throws(PlistError) -> String {
        let s = date.secondsSinceReferenceDate
        guard s.isFinite, abs(s) <= limit else {
            throw .unrepresentable("date \(s) seconds from 2001-01-01 as a calendar date")
        }
        let whole = s.rounded(.down)
        let fraction = s - whole
        guard let civil = CivilTime(PlistDate(secondsSinceReferenceDate: whole)) else {
            throw .unrepresentable("date \(s) seconds from 2001-01-01 as a calendar date")
        }
        var text = civil.iso8601
        if fraction != 0 && !wholeSeconds {
            text.removeLast()
            text += "." + fractionDigits(fraction) + "Z"
        }
        return text
    }

    /// The digits after "0." of the shortest decimal for `f` in (0, 1).
    private static func fractionDigits(_ f: Double) -> String {
        let d = f.description
        guard let e = d.firstIndex(of: "e") else {
            return String(d.dropFirst(2))  // "0.25" -> "25"
        }
        let mantissa = d[..<e].filter { $0 != "." }
        let exponent = Int(d[d.index(after: e)...])!  // negative
        return String(repeating: "0", count: -exponent - 1) + mantissa
    }

    /// Parses the forms ``format(_:)`` writes (surrounding whitespace allowed).
    static func parse(_ text: [UInt8]) -> PlistDate? {
        var t = text[...]
        while let c = t.first, c == 0x20 || c == 0x09 || c == 0x0A || c == 0x0D { t = t.dropFirst() }
        while let c = t.last, c == 0x20 || c == 0x09 || c == 0x0A || c == 0x0D { t = t.dropLast() }
        var k = t.startIndex
        func number(min: Int, max: Int) -> Int? {
            let s = k
            var v = 0
            while k < t.endIndex, k - s < max, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(t[k]) {
                v = v * 10 + Int(t[k] - UInt8(ascii: "0"))
                k += 1
            }
            return k - s >= min ? v : nil
        }
        func expect(_ c: Character) -> Bool {
            guard k < t.endIndex, t[k] == c.asciiValue! else { return false }
            k += 1
            return true
        }
        let negative = expect("-")
        // Fewer than four digits is not ISO 8601, but libplist 2.2 writes year 1 as "1-01-01".
        guard var year = number(min: 1, max: 11) else { return nil }
        if negative { year = -year }
        guard expect("-"), let month = number(min: 2, max: 2), expect("-"), let day = number(min: 2, max: 2),
              expect("T"), let hour = number(min: 2, max: 2), expect(":"), let minute = number(min: 2, max: 2),
              expect(":"), let second = number(min: 2, max: 2) else { return nil }
        var fraction = 0.0
        if expect(".") {
            let s = k
            while k < t.endIndex, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(t[k]) { k += 1 }
            guard k > s, let f = Double("0." + String(decoding: t[s..<k], as: UTF8.self)) else { return nil }
            fraction = f
        }
        guard expect("Z"), k == t.endIndex else { return nil }
        let civil = CivilTime(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
        guard civil.isValid else { return nil }
        return PlistDate(secondsSinceReferenceDate: civil.date.secondsSinceReferenceDate + fraction)
    }
}
