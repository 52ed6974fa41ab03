/// Hexadecimal text of bytes and numbers: the one encoder every layer uses.
public enum Hex {
    private static let lower = Array("0123456789abcdef".utf8)
    private static let upper = Array("0123456789ABCDEF".utf8)

    /// `bytes` as hex digits, two a byte (lower case unless `uppercase`).
    public static func encode<C: Collection>(_ bytes: C, uppercase: Bool = false) -> String where C.Element == UInt8 {
        if let s = bytes.withContiguousStorageIfAvailable({ encode(UnsafeRawBufferPointer($0), uppercase: uppercase) }) { return s }
        let digits = uppercase ? upper : lower
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for b in bytes {
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 15)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The bytes at `source` as hex digits, written straight into the
    /// string's storage (the common case: a digest named as a file).
    private static func encode(_ source: UnsafeRawBufferPointer, uppercase: Bool) -> String {
        let a: UInt8 = uppercase ? 0x41 - 10 : 0x61 - 10
        return String(unsafeUninitializedCapacity: source.count * 2) { out in
            for i in 0..<source.count {
                let hi = source[i] >> 4, lo = source[i] & 15
                out[2 * i] = hi < 10 ? 0x30 + hi : a + hi
                out[2 * i + 1] = lo < 10 ? 0x30 + lo : a + lo
            }
            return source.count * 2
        }
    }

    /// `value` as exactly `width` hex digits (the low ones), lower case unless `uppercase`.
    public static func digits<T: FixedWidthInteger>(_ value: T, width: Int, uppercase: Bool = false) -> String {
        let table = uppercase ? upper : lower
        var out = [UInt8](repeating: 0, count: width)
        var v = UInt64(truncatingIfNeeded: value)
        for i in stride(from: width - 1, through: 0, by: -1) {
            out[i] = table[Int(v & 15)]
            v >>= 4
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The value of one hex digit (either case), or `nil`.
    @inline(__always)
    public static func value(of digit: UInt8) -> UInt8? {
        switch digit {
        case 0x30...0x39: return digit - 0x30
        case 0x41...0x46: return digit - 0x41 + 10
        case 0x61...0x66: return digit - 0x61 + 10
        default: return nil
        }
    }

    /// The bytes of an even-length string of hex digits, or `nil`.
    public static func decode(_ text: String) -> [UInt8]? {
        let u = Array(text.utf8)
        guard u.count % 2 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(u.count / 2)
        var i = 0
        while i < u.count {
            guard let hi = value(of: u[i]), let lo = value(of: u[i + 1]) else { return nil }
            out.append(hi << 4 | lo)
            i += 2
        }
        return out
    }

    /// Writes the hex digits of `source` into `out` (which holds twice as
    /// many bytes), lower case, without making a `String`: for secrets that
    /// live in locked memory.
    public static func encode(_ source: UnsafeRawBufferPointer, into out: UnsafeMutableRawBufferPointer) {
        precondition(out.count >= source.count * 2)
        for i in 0..<source.count {
            out[2 * i] = lower[Int(source[i] >> 4)]
            out[2 * i + 1] = lower[Int(source[i] & 15)]
        }
    }

    /// Reads the hex digits of `source` into `out` (half as many bytes);
    /// false when a character is not a hex digit.
    public static func decode(_ source: UnsafeRawBufferPointer, into out: UnsafeMutableRawBufferPointer) -> Bool {
        guard source.count % 2 == 0, out.count >= source.count / 2 else { return false }
        for i in 0..<(source.count / 2) {
            guard let hi = value(of: source[2 * i]), let lo = value(of: source[2 * i + 1]) else { return false }
            out[i] = hi << 4 | lo
        }
        return true
    }
}
