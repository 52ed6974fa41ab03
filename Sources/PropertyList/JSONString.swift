/// Text written as a JSON string literal: the one escaper of every JSON
/// document AppHome writes (typed JSON, `plutil -convert json`, the Settings
/// app's page data, the small documents commands write).
///
/// `"` and `\` are escaped, and so are the control characters (`\n`, `\r`,
/// `\t`, `\b`, `\f`, the others as `\u00XX`); the options add what one
/// reader or another needs on top. Every other character is written as its
/// UTF-8 bytes.
public enum JSONString {
    /// Characters escaped beyond those JSON requires.
    public struct Escapes: OptionSet, Sendable {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }

        /// `/` as `\/`, as macOS's `plutil -convert json` writes it.
        public static let solidus = Escapes(rawValue: 1)
        /// `<`, `>`, `&`, U+2028 and U+2029 as `\u` escapes: the literal can
        /// stand in an HTML page or a script and never closes a tag or ends a
        /// JavaScript string.
        public static let html = Escapes(rawValue: 2)
    }

    /// Appends `text` to `out` as a quoted JSON string literal.
    ///
    /// - Parameters:
    ///   - text: the string.
    ///   - escaping: what is escaped beyond what JSON requires.
    ///   - out: the UTF-8 bytes written so far.
    public static func append(_ text: String, escaping: Escapes = [], to out: inout [UInt8]) {
        var text = text
        out.append(UInt8(ascii: "\""))
        text.withUTF8 { bytes in
            // Runs of bytes that need no escape are copied whole.
            var plainFrom = 0
            var i = 0
            while i < bytes.count {
                let length = escapedLength(bytes, at: i, escaping)
                guard length > 0 else {
                    i += 1
                    continue
                }
                out.append(contentsOf: bytes[plainFrom..<i])
                appendEscape(of: bytes, at: i, length: length, to: &out)
                i += length
                plainFrom = i
            }
            out.append(contentsOf: bytes[plainFrom..<bytes.count])
        }
        out.append(UInt8(ascii: "\""))
    }

    /// How many bytes at `i` make one character to escape (U+2028 and U+2029
    /// are three), or 0 when the byte there is written as it is.
    private static func escapedLength(_ bytes: UnsafeBufferPointer<UInt8>, at i: Int, _ escaping: Escapes) -> Int {
        switch bytes[i] {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), 0x00..<0x20: return 1
        case UInt8(ascii: "/"): return escaping.contains(.solidus) ? 1 : 0
        case UInt8(ascii: "<"), UInt8(ascii: ">"), UInt8(ascii: "&"): return escaping.contains(.html) ? 1 : 0
        case 0xE2 where escaping.contains(.html) && i + 2 < bytes.count && bytes[i + 1] == 0x80 && (bytes[i + 2] == 0xA8 || bytes[i + 2] == 0xA9):
            return 3
        default: return 0
        }
    }

    private static func appendEscape(of bytes: UnsafeBufferPointer<UInt8>, at i: Int, length: Int, to out: inout [UInt8]) {
        let c = bytes[i]
        switch c {
        case UInt8(ascii: "\""): out.append(contentsOf: "\\\"".utf8)
        case UInt8(ascii: "\\"): out.append(contentsOf: "\\\\".utf8)
        case UInt8(ascii: "/"): out.append(contentsOf: "\\/".utf8)
        case 0x0A: out.append(contentsOf: "\\n".utf8)
        case 0x0D: out.append(contentsOf: "\\r".utf8)
        case 0x09: out.append(contentsOf: "\\t".utf8)
        case 0x08: out.append(contentsOf: "\\b".utf8)
        case 0x0C: out.append(contentsOf: "\\f".utf8)
        default:
            // A control character, `<`, `>`, `&` (one byte each), or U+2028/9 (E2 80 A8/A9).
            let scalar = length == 3 ? 0x2000 | UInt16(bytes[i + 2] - 0x80) : UInt16(c)
            out.append(contentsOf: "\\u".utf8)
            for shift in [12, 8, 4, 0] { out.append(hexDigits[Int(scalar >> UInt16(shift) & 0xF)]) }
        }
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)
}
