/// Sizes as people type and read them: `500M`, `1.5G`, `4096`.
///
/// Units are powers of 1024 (as `du -h` and `df -h` print them): `K`, `M`,
/// `G`, `T`, with an optional `B` or `iB` after them (`500MiB`), in either
/// case; a bare number is bytes.
public enum ByteCount {
    static let units: [(letter: Character, shift: Int)] = [("K", 10), ("M", 20), ("G", 30), ("T", 40)]

    /// Parses `text`, or returns `nil` for anything that is not a size
    /// (an empty string, a negative number, an unknown unit, an overflow).
    public static func parse(_ text: String) -> UInt64? {
        var body = Substring(text.uppercased())
        var needsUnit = false
        if body.hasSuffix("IB") {
            body = body.dropLast(2)
            needsUnit = true
        } else if body.hasSuffix("B") {
            body = body.dropLast()
        }
        var shift = 0
        if let last = body.last, let unit = units.first(where: { $0.letter == last }) {
            shift = unit.shift
            body = body.dropLast()
        } else if needsUnit {
            return nil
        }
        guard !body.isEmpty, body.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }),
              body.filter({ $0 == "." }).count <= 1, body.first != ".", body.last != "." else { return nil }
        if let whole = UInt64(body) {
            let (value, overflow) = whole.multipliedReportingOverflow(by: UInt64(1) << shift)
            return overflow ? nil : value
        }
        // A fraction (`1.5G`): exact enough in a Double below 2^53 bytes.
        guard shift > 0, let fraction = Double(body) else { return nil }
        let value = (fraction * Double(UInt64(1) << shift)).rounded()
        return value < 9.0e15 ? UInt64(value) : nil
    }

    /// `bytes` for people: `512 bytes`, `1.5 KiB`, `500 MiB`, `12 GiB` (one
    /// decimal below 10 of a unit, none above).
    public static func human(_ bytes: UInt64) -> String {
        guard bytes >= 1024 else { return bytes == 1 ? "1 byte" : "\(bytes) bytes" }
        var unit = 0
        var value = Double(bytes)
        while value >= 1024, unit < units.count {
            value /= 1024
            unit += 1
        }
        let name = "\(units[unit - 1].letter)iB"
        if value < 10 {
            let tenths = Int((value * 10).rounded())
            return tenths % 10 == 0 ? "\(tenths / 10) \(name)" : "\(tenths / 10).\(tenths % 10) \(name)"
        }
        return "\(Int(value.rounded())) \(name)"
    }
}
