/// Standard base64 (RFC 4648 alphabet, `=` padding) for the XML and JSON
/// formats, written here because the module does not import Foundation.
public enum Base64 {
    private static let alphabet: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// Maps an ASCII byte to its 6-bit value; 0xFF for bytes outside the alphabet.
    private static let reverse: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (i, c) in alphabet.enumerated() { table[Int(c)] = UInt8(i) }
        return table
    }()

    /// Appends the encoding of `bytes` to `out`.
    ///
    /// - Parameters:
    ///   - lineLength: when non-nil, a newline (followed by `linePrefix`)
    ///     is started before every run of `lineLength` characters; must be a
    ///     multiple of 4. When nil the encoding is one unbroken run.
    ///   - linePrefix: bytes written at the start of every line (the XML
    ///     writer's tabs). Ignored when `lineLength` is nil.
    static func encode(_ bytes: [UInt8], into out: inout [UInt8], lineLength: Int? = nil, linePrefix: [UInt8] = []) {
        let table = alphabet
        let groups = (bytes.count + 2) / 3
        let perLine = (lineLength ?? Int.max) / 4
        out.reserveCapacity(out.count + groups * 4 + (lineLength == nil ? 0 : (groups / max(perLine, 1) + 1) * (linePrefix.count + 1)))
        bytes.withUnsafeBufferPointer { src in
            var i = 0
            var groupInLine = 0
            while i < src.count {
                if lineLength != nil && groupInLine == 0 {
                    out.append(contentsOf: linePrefix)
                }
                let b0 = src[i]
                let b1: UInt8 = i + 1 < src.count ? src[i + 1] : 0
                let b2: UInt8 = i + 2 < src.count ? src[i + 2] : 0
                out.append(table[Int(b0 >> 2)])
                out.append(table[Int((b0 & 0x03) << 4 | b1 >> 4)])
                out.append(i + 1 < src.count ? table[Int((b1 & 0x0F) << 2 | b2 >> 6)] : UInt8(ascii: "="))
                out.append(i + 2 < src.count ? table[Int(b2 & 0x3F)] : UInt8(ascii: "="))
                i += 3
                if lineLength != nil {
                    groupInLine += 1
                    if groupInLine == perLine || i >= src.count {
                        out.append(UInt8(ascii: "\n"))
                        groupInLine = 0
                    }
                }
            }
        }
    }

    /// The encoding of `bytes` as a single line.
    public static func encode(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        encode(bytes, into: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Decodes base64 text, skipping ASCII whitespace anywhere.
    ///
    /// Padding is optional at the very end (as Apple's reader allows) but
    /// nothing may follow it.
    ///
    /// - Returns: the bytes, or `nil` when a character is outside the
    ///   alphabet, padding is misplaced, or the length leaves a lone 6-bit
    ///   group.
    public static func decode<C: Collection>(_ text: C) -> [UInt8]? where C.Element == UInt8 {
        let reverse = self.reverse
        var out: [UInt8] = []
        out.reserveCapacity(text.count / 4 * 3 + 3)
        var accumulator: UInt32 = 0
        var pending = 0
        var padding = 0
        for c in text {
            switch c {
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"), 0x0C:
                continue
            case UInt8(ascii: "="):
                padding += 1
                if pending + padding > 4 || pending < 2 { return nil }
                continue
            default:
                let v = reverse[Int(c)]
                if v == 0xFF || padding > 0 { return nil }
                accumulator = accumulator << 6 | UInt32(v)
                pending += 1
                if pending == 4 {
                    out.append(UInt8(truncatingIfNeeded: accumulator >> 16))
                    out.append(UInt8(truncatingIfNeeded: accumulator >> 8))
                    out.append(UInt8(truncatingIfNeeded: accumulator))
                    accumulator = 0
                    pending = 0
                }
            }
        }
        if padding > 0 && pending + padding != 4 { return nil }
        switch pending {
        case 0: break
        case 2:
            out.append(UInt8(truncatingIfNeeded: accumulator >> 4))
        case 3:
            out.append(UInt8(truncatingIfNeeded: accumulator >> 10))
            out.append(UInt8(truncatingIfNeeded: accumulator >> 2))
        default:
            return nil
        }
        return out
    }
}
