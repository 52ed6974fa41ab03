#if canImport(Glibc)
import Glibc
#endif

/// Strict parsers for the scalar values users type on command lines.
///
/// Unlike macOS `defaults` (which turns `12ab` into 12 and junk into 0),
/// each parser accepts only a complete, well-formed value and returns `nil`
/// otherwise, so the caller can report the exact argument.
public enum ScalarParsing {
    /// A whole number in `Int64.min ... UInt64.max`, decimal, with an
    /// optional sign.
    public static func integer(_ text: String) -> Int128? {
        var utf8 = Substring(text).utf8[...]
        var negative = false
        if let first = utf8.first, first == UInt8(ascii: "-") || first == UInt8(ascii: "+") {
            negative = first == UInt8(ascii: "-")
            utf8 = utf8.dropFirst()
        }
        guard !utf8.isEmpty, utf8.count <= 20 else { return nil }
        var value: Int128 = 0
        for b in utf8 {
            guard b >= 0x30 && b <= 0x39 else { return nil }
            value = value * 10 + Int128(b - 0x30)
        }
        if negative { value = -value }
        return PlistValue.integerRange.contains(value) ? value : nil
    }

    /// A decimal or exponent real as `strtod` reads it, consumed whole;
    /// `inf`, `-inf` and `nan` are accepted.
    public static func real(_ text: String) -> Double? {
        guard !text.isEmpty, let first = text.utf8.first, first != 0x20 && first != 0x09 && first != 0x0A else { return nil }
        return text.withCString { ptr -> Double? in
            var end: UnsafeMutablePointer<CChar>? = nil
            let value = strtod(ptr, &end)
            guard let end, end.pointee == 0, end != UnsafeMutablePointer(mutating: ptr) else { return nil }
            // Reject hexadecimal floats: they are not what a user means by a float.
            if text.lowercased().contains("0x") { return nil }
            // An overflow (1e400) is not infinity unless the user wrote it.
            if value.isInfinite && !text.lowercased().contains("inf") { return nil }
            return value
        }
    }

    /// `true`, `false`, `yes` or `no` in any case, as `defaults -bool` takes.
    public static func bool(_ text: String) -> Bool? {
        switch text.lowercased() {
        case "true", "yes": return true
        case "false", "no": return false
        default: return nil
        }
    }

    /// Hex digits in either case, as `defaults -data` takes: two per byte.
    /// An odd count is refused (as the literal `<abc>` is), so no digit is
    /// silently taken for a byte of its own. Whitespace is not allowed.
    public static func hexData(_ text: String) -> [UInt8]? {
        var nibbles: [UInt8] = []
        nibbles.reserveCapacity(text.utf8.count)
        for b in text.utf8 {
            switch b {
            case 0x30...0x39: nibbles.append(b - 0x30)
            case 0x61...0x66: nibbles.append(b - 0x61 + 10)
            case 0x41...0x46: nibbles.append(b - 0x41 + 10)
            default: return nil
            }
        }
        guard nibbles.count % 2 == 0 else { return nil }
        var out: [UInt8] = []
        var i = 0
        while i < nibbles.count { out.append(nibbles[i] << 4 | nibbles[i + 1]); i += 2 }
        return out
    }

    /// A date in `YYYY-MM-DD HH:MM:SS ±HHMM` (the form `defaults` prints and
    /// `NSDate` reads) or ISO 8601 (`YYYY-MM-DDTHH:MM:SS[.fff](Z|±HH:MM)`,
    /// or a bare `YYYY-MM-DD`, taken as midnight UTC).
    public static func date(_ text: String) -> PlistDate? {
        var s = Array(text.utf8)[...]
        func number(_ digits: Int) -> Int? {
            guard s.count >= digits else { return nil }
            var v = 0
            for b in s.prefix(digits) { guard b >= 0x30 && b <= 0x39 else { return nil }; v = v * 10 + Int(b - 0x30) }
            s = s.dropFirst(digits)
            return v
        }
        func take(_ c: Character) -> Bool {
            if let f = s.first, f == c.asciiValue! { s = s.dropFirst(); return true }
            return false
        }
        guard let year = number(4), take("-"), let month = number(2), take("-"), let day = number(2) else { return nil }
        var t = CivilTime(year: year, month: month, day: day)
        if s.isEmpty { return t.isValid ? t.date : nil }
        let iso: Bool
        if take("T") { iso = true } else if take(" ") { iso = false } else { return nil }
        guard let h = number(2), take(":"), let m = number(2) else { return nil }
        t.hour = h; t.minute = m
        if take(":") { guard let sec = number(2) else { return nil }; t.second = sec }
        if take(".") {
            var scale = 0.1, frac = 0.0, any = false
            while let b = s.first, b >= 0x30 && b <= 0x39 { frac += Double(b - 0x30) * scale; scale /= 10; s = s.dropFirst(); any = true }
            guard any else { return nil }
            t.fraction = frac
        }
        guard t.isValid else { return nil }
        if !iso { guard take(" ") else { return nil } }
        var offset = 0
        if take("Z") {
            guard iso else { return nil }
        } else if let sign = s.first, sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") {
            s = s.dropFirst()
            guard let oh = number(2) else { return nil }
            _ = take(":")
            guard let om = number(2), oh < 24, om < 60 else { return nil }
            offset = (oh * 3600 + om * 60) * (sign == UInt8(ascii: "-") ? -1 : 1)
        } else {
            return nil
        }
        guard s.isEmpty else { return nil }
        let utc = t.date
        return PlistDate(secondsSinceReferenceDate: utc.secondsSinceReferenceDate - Double(offset))
    }
}
