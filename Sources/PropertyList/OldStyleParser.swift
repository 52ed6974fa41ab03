/// Reads NeXTSTEP ("old-style") property-list text: the literals users type
/// after `defaults write`, `.strings` files and old-style plist files.
///
/// Grammar: a dictionary `{ key = value; … }`, an array `( a, b, )`, data
/// `<0fa1 …>`, a quoted string with C escapes (`\n`, `\"`, `\\`, octal
/// `\012`, read as NeXTSTEP Latin above `\177`; `\U20ac`), or an unquoted string of letters, digits and
/// `_ $ + / : . -`. Every scalar is a string, as in Core Foundation.
/// `//` and `/* */` comments are skipped. A file whose top level is a run of
/// `key = value;` pairs without braces (a `.strings` file) reads as a
/// dictionary. Errors carry the line and column.
enum OldStyleParser {
    static func parse(_ bytes: [UInt8]) throws(PlistError) -> PlistValue {
        var scanner = OldStyleScanner(bytes)
        return try scanner.parseDocument()
    }
}

/// Public entry points for old-style text that commands need directly.
public enum OldStyleText {
    /// Parses a complete old-style literal, such as the argument of
    /// `defaults write D '<dict>'`.
    ///
    /// - Throws: ``PlistError/malformed(format:detail:)`` with the line and
    ///   column of the first problem.
    public static func parse(_ text: String) throws(PlistError) -> PlistValue {
        try OldStyleParser.parse(Array(text.utf8))
    }

    /// Interprets backslash escapes as an old-style quoted string would,
    /// which is what `defaults write D K value` does with a plain value.
    public static func unescape(_ text: String) throws(PlistError) -> String {
        var scanner = OldStyleScanner(Array(text.utf8))
        return try scanner.unescapedRemainder()
    }

    /// Whether `byte` may appear in an unquoted string (letters, digits and
    /// `_ $ + / : . -`), for scanners of old-style text such as `.strings`.
    public static func isUnquotedCharacter(_ byte: UInt8) -> Bool {
        OldStyleScanner.isUnquotedCharacter(byte)
    }
}

struct OldStyleScanner {
    private let bytes: [UInt8]
    private var pos = 0

    init(_ bytes: [UInt8]) {
        // Skip a UTF-8 byte-order mark.
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { self.bytes = Array(bytes.dropFirst(3)) } else { self.bytes = bytes }
    }

    private func error(_ message: String, at offset: Int? = nil) -> PlistError {
        let at = min(offset ?? pos, bytes.count)
        var line = 1, column = 1
        for b in bytes[..<at] { if b == 0x0A { line += 1; column = 1 } else { column += 1 } }
        return .malformed(format: "old-style", detail: "\(message) at line \(line), column \(column)")
    }

    mutating func parseDocument() throws(PlistError) -> PlistValue {
        skipSpaceAndComments()
        guard pos < bytes.count else { throw error("empty input") }
        // A .strings file: `key = value;` pairs with no enclosing braces.
        let start = pos
        if bytes[pos] != UInt8(ascii: "{") && bytes[pos] != UInt8(ascii: "(") && bytes[pos] != UInt8(ascii: "<") {
            _ = try? parseString()
            skipSpaceAndComments()
            let isStrings = pos < bytes.count && bytes[pos] == UInt8(ascii: "=")
            pos = start
            if isStrings { return try parseDictionaryBody(closing: nil, depth: 1) }
        }
        let value = try parseValue(depth: 0)
        skipSpaceAndComments()
        guard pos == bytes.count else { throw error("unexpected text after the value") }
        return value
    }

    mutating func unescapedRemainder() throws(PlistError) -> String {
        var out: [UInt8] = []
        while pos < bytes.count {
            if bytes[pos] == UInt8(ascii: "\\") { try appendEscape(to: &out) } else { out.append(bytes[pos]); pos += 1 }
        }
        return String(decoding: out, as: UTF8.self)
    }

    private mutating func skipSpaceAndComments() {
        while pos < bytes.count {
            let b = bytes[pos]
            if b == 0x20 || b == 0x09 || b == 0x0A || b == 0x0D || b == 0x0C || b == 0x0B {
                pos += 1
            } else if b == UInt8(ascii: "/") && pos + 1 < bytes.count && bytes[pos + 1] == UInt8(ascii: "/") {
                while pos < bytes.count && bytes[pos] != 0x0A { pos += 1 }
            } else if b == UInt8(ascii: "/") && pos + 1 < bytes.count && bytes[pos + 1] == UInt8(ascii: "*") {
                pos += 2
                while pos + 1 < bytes.count && !(bytes[pos] == UInt8(ascii: "*") && bytes[pos + 1] == UInt8(ascii: "/")) { pos += 1 }
                pos = min(pos + 2, bytes.count)
            } else {
                return
            }
        }
    }

    private mutating func parseValue(depth: Int) throws(PlistError) -> PlistValue {
        skipSpaceAndComments()
        guard pos < bytes.count else { throw error("unexpected end of input") }
        switch bytes[pos] {
        case UInt8(ascii: "{"):
            guard depth < PlistValue.maximumDepth else { throw .tooDeep(limit: PlistValue.maximumDepth) }
            pos += 1
            return try parseDictionaryBody(closing: UInt8(ascii: "}"), depth: depth + 1)
        case UInt8(ascii: "("):
            guard depth < PlistValue.maximumDepth else { throw .tooDeep(limit: PlistValue.maximumDepth) }
            pos += 1
            return try parseArrayBody(depth: depth + 1)
        case UInt8(ascii: "<"):
            pos += 1
            return .data(try parseDataBody())
        default:
            return .string(try parseString())
        }
    }

    private mutating func parseDictionaryBody(closing: UInt8?, depth: Int) throws(PlistError) -> PlistValue {
        var dict: [PlistKey: PlistValue] = [:]
        while true {
            skipSpaceAndComments()
            if pos >= bytes.count {
                if closing == nil { return .dictionary(dict) }
                throw error("missing '}' at end of dictionary")
            }
            if let c = closing, bytes[pos] == c { pos += 1; return .dictionary(dict) }
            let key = try parseString()
            skipSpaceAndComments()
            guard pos < bytes.count, bytes[pos] == UInt8(ascii: "=") else {
                throw error("expected '=' after dictionary key \"\(key)\"")
            }
            pos += 1
            let value = try parseValue(depth: depth)
            skipSpaceAndComments()
            guard pos < bytes.count, bytes[pos] == UInt8(ascii: ";") else {
                throw error("expected ';' after the value of key \"\(key)\"")
            }
            pos += 1
            dict[key] = value
        }
    }

    private mutating func parseArrayBody(depth: Int) throws(PlistError) -> PlistValue {
        var items: [PlistValue] = []
        skipSpaceAndComments()
        if pos < bytes.count && bytes[pos] == UInt8(ascii: ")") { pos += 1; return .array(items) }
        while true {
            items.append(try parseValue(depth: depth))
            skipSpaceAndComments()
            guard pos < bytes.count else { throw error("missing ')' at end of array") }
            if bytes[pos] == UInt8(ascii: ")") { pos += 1; return .array(items) }
            guard bytes[pos] == UInt8(ascii: ",") else { throw error("expected ',' or ')' in array") }
            pos += 1
            skipSpaceAndComments()
            if pos < bytes.count && bytes[pos] == UInt8(ascii: ")") { pos += 1; return .array(items) }
        }
    }

    private mutating func parseDataBody() throws(PlistError) -> [UInt8] {
        var out: [UInt8] = []
        var high: UInt8? = nil
        while pos < bytes.count {
            let b = bytes[pos]
            if b == UInt8(ascii: ">") {
                guard high == nil else { throw error("odd number of hex digits in data") }
                pos += 1
                return out
            }
            pos += 1
            if b == 0x20 || b == 0x09 || b == 0x0A || b == 0x0D { continue }
            guard let nibble = hexValue(b) else { throw error("invalid character in data", at: pos - 1) }
            if let h = high { out.append(h << 4 | nibble); high = nil } else { high = nibble }
        }
        throw error("missing '>' at end of data")
    }

    private mutating func parseString() throws(PlistError) -> String {
        guard pos < bytes.count else { throw error("unexpected end of input") }
        let quote = bytes[pos]
        if quote == UInt8(ascii: "\"") || quote == UInt8(ascii: "'") {
            let start = pos
            pos += 1
            var out: [UInt8] = []
            while pos < bytes.count {
                let b = bytes[pos]
                if b == quote { try requireUTF8(start + 1..<pos); pos += 1; return String(decoding: out, as: UTF8.self) }
                if b == UInt8(ascii: "\\") { try appendEscape(to: &out) } else { out.append(b); pos += 1 }
            }
            throw error("unterminated quoted string", at: start)
        }
        let start = pos
        while pos < bytes.count && Self.isUnquotedCharacter(bytes[pos]) { pos += 1 }
        guard pos > start else {
            throw error("unexpected character '\(String(decoding: [bytes[pos]], as: UTF8.self))'")
        }
        try requireUTF8(start..<pos)
        return String(decoding: bytes[start..<pos], as: UTF8.self)
    }

    /// Refuses text that is not valid UTF-8 (a stray byte, an encoded
    /// surrogate, an overlong form), at its first bad byte: it is never
    /// read as U+FFFD. Escapes only add valid UTF-8, so the raw bytes decide.
    private func requireUTF8(_ range: Range<Int>) throws(PlistError) {
        var parser = Unicode.UTF8.ForwardParser()
        var iterator = bytes[range].makeIterator()
        var offset = range.lowerBound
        while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid(let encoded): offset += encoded.count
            case .error: throw error("string is not valid UTF-8", at: offset)
            case .emptyInput: return
            }
        }
    }

    static func isUnquotedCharacter(_ b: UInt8) -> Bool {
        switch b {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        case UInt8(ascii: "_"), UInt8(ascii: "$"), UInt8(ascii: "+"), UInt8(ascii: "/"), UInt8(ascii: ":"), UInt8(ascii: "."), UInt8(ascii: "-"):
            return true
        default:
            return b >= 0x80  // non-ASCII text is allowed unquoted, as CF allows
        }
    }

    /// Decodes one backslash escape at `pos` and appends its UTF-8.
    private mutating func appendEscape(to out: inout [UInt8]) throws(PlistError) {
        pos += 1
        guard pos < bytes.count else { throw error("backslash at end of string") }
        let c = bytes[pos]
        pos += 1
        switch c {
        case UInt8(ascii: "n"): out.append(0x0A)
        case UInt8(ascii: "t"): out.append(0x09)
        case UInt8(ascii: "r"): out.append(0x0D)
        case UInt8(ascii: "a"): out.append(0x07)
        case UInt8(ascii: "b"): out.append(0x08)
        case UInt8(ascii: "f"): out.append(0x0C)
        case UInt8(ascii: "v"): out.append(0x0B)
        case UInt8(ascii: "0")...UInt8(ascii: "7"):
            var value = UInt32(c - 0x30)
            var n = 1
            while n < 3 && pos < bytes.count && bytes[pos] >= 0x30 && bytes[pos] <= 0x37 {
                value = value * 8 + UInt32(bytes[pos] - 0x30); pos += 1; n += 1
            }
            // An octal escape names a byte of NeXTSTEP Latin, the encoding
            // of old-style text, as Core Foundation reads it (\200 is U+00A0).
            appendScalar(UInt32(NeXTSTEPLatin.scalar(UInt8(value & 0xFF))), to: &out)
        case UInt8(ascii: "U"), UInt8(ascii: "u"):
            var value: UInt32 = 0
            var n = 0
            while n < 4 && pos < bytes.count, let d = hexValue(bytes[pos]) { value = value * 16 + UInt32(d); pos += 1; n += 1 }
            guard n > 0 else { throw error("\\U must be followed by hex digits") }
            // A UTF-16 surrogate pair written as two \U escapes.
            if (0xD800...0xDBFF).contains(value), pos + 1 < bytes.count, bytes[pos] == UInt8(ascii: "\\"),
               bytes[pos + 1] == UInt8(ascii: "U") || bytes[pos + 1] == UInt8(ascii: "u") {
                let save = pos
                pos += 2
                var low: UInt32 = 0
                var m = 0
                while m < 4 && pos < bytes.count, let d = hexValue(bytes[pos]) { low = low * 16 + UInt32(d); pos += 1; m += 1 }
                if m == 4, (0xDC00...0xDFFF).contains(low) {
                    value = 0x10000 + ((value - 0xD800) << 10) + (low - 0xDC00)
                } else {
                    pos = save
                }
            }
            // A lone surrogate names no character: refused, never stored as U+FFFD.
            guard Unicode.Scalar(value) != nil else {
                throw error("unpaired UTF-16 surrogate \\U\(Hex4.digits(value)) in a string")
            }
            appendScalar(value, to: &out)
        default:
            out.append(c)  // \" \\ \' and any other character stand for themselves
        }
    }

    private func appendScalar(_ value: UInt32, to out: inout [UInt8]) {
        let scalar = Unicode.Scalar(value) ?? "\u{FFFD}"
        out.append(contentsOf: String(scalar).utf8)
    }
}

/// Four upper-case hex digits, for messages.
fileprivate enum Hex4 {
    static func digits(_ value: UInt32) -> String {
        let s = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, 4 - s.count)) + s
    }
}

fileprivate func hexValue(_ b: UInt8) -> UInt8? {
    switch b {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): return b - 0x30
    case UInt8(ascii: "a")...UInt8(ascii: "f"): return b - 0x61 + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): return b - 0x41 + 10
    default: return nil
    }
}
