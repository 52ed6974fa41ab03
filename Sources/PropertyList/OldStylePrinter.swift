/// Prints values the way macOS `defaults read` does: NeXTSTEP-style text as
/// produced by Core Foundation's `description`.
///
/// The output is for people and for scripts written against macOS; it is not
/// a lossless format (booleans print as `1`/`0`, long data is shortened).
/// The layout rules are in `shared/reference/defaults.md` §1.4:
/// - dictionaries print keys sorted by code point, four spaces per level;
/// - a nested collection's text begins with its own indentation, which is
///   why `key =     (` has five spaces after the `=`;
/// - scalars are quoted unless they consist only of ASCII letters and digits.
public enum OldStylePrinter {
    /// The text `defaults read` prints for a whole value (a domain, or a
    /// collection read by key).
    public static func describe(_ value: PlistValue) -> String {
        var out = ""
        append(value, level: 0, to: &out)
        return out
    }

    /// The text `defaults read D K` prints: a string bare and unescaped, a
    /// date unquoted, anything else as ``describe(_:)``.
    public static func describeTopLevel(_ value: PlistValue) -> String {
        switch value {
        case .string(let s): return s
        case .date(let d): return dateText(d)
        case .integer(let n): return String(n)
        case .real(let x): return realText(x)
        case .uid(let n): return uidText(n)
        default: return describe(value)
        }
    }

    /// `YYYY-MM-DD HH:MM:SS +0000` in UTC, as `defaults` prints dates.
    public static func dateText(_ date: PlistDate) -> String {
        CivilTime(date)?.descriptionFormat ?? String(date.secondsSinceReferenceDate)
    }

    /// A real printed in its shortest round-trip form without a trailing
    /// `.0`, as Core Foundation prints `1800` and `0.25`.
    public static func realText(_ x: Double) -> String {
        if x.isNaN { return "nan" }
        if x.isInfinite { return x < 0 ? "-inf" : "inf" }
        var s = x.description
        if s.hasSuffix(".0") { s.removeLast(2) }
        return s
    }

    /// Quotes `text` unless it is non-empty and only ASCII letters and digits.
    public static func quoted(_ text: String) -> String {
        var plain = !text.isEmpty
        for b in text.utf8 where !isAlphanumeric(b) { plain = false; break }
        if plain { return text }
        var out = "\""
        for unit in text.unicodeScalars {
            switch unit {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            case "\r": out += "\\r"
            default:
                if unit.value >= 0x20 && unit.value < 0x7F {
                    out.unicodeScalars.append(unit)
                } else {
                    // macOS shows non-ASCII as \\Uxxxx per UTF-16 unit.
                    for u in String(unit).utf16 { out += "\\\\U" + hex4(u) }
                }
            }
        }
        out += "\""
        return out
    }

    private static func isAlphanumeric(_ b: UInt8) -> Bool {
        (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A)
    }

    private static func hex4(_ u: UInt16) -> String {
        let digits = Array("0123456789abcdef")
        return String([digits[Int(u >> 12) & 15], digits[Int(u >> 8) & 15], digits[Int(u >> 4) & 15], digits[Int(u) & 15]])
    }

    static func indent(_ level: Int) -> String { String(repeating: " ", count: 4 * level) }

    private static func append(_ value: PlistValue, level: Int, to out: inout String) {
        switch value {
        case .dictionary(let entries):
            out += indent(level)
            out += "{\n"
            for key in entries.keys.sorted() {
                out += indent(level + 1)
                out += quoted(key.string)
                out += " = "
                appendInner(entries[key]!, level: level + 1, to: &out)
                out += ";\n"
            }
            out += indent(level)
            out += "}"
        case .array(let items):
            out += indent(level)
            out += "(\n"
            for (i, item) in items.enumerated() {
                out += indent(level + 1)
                appendInner(item, level: level + 1, to: &out)
                out += i == items.count - 1 ? "\n" : ",\n"
            }
            out += indent(level)
            out += ")"
        default:
            out += scalarText(value)
        }
    }

    private static func appendInner(_ value: PlistValue, level: Int, to out: inout String) {
        switch value {
        case .array, .dictionary: append(value, level: level, to: &out)
        default: out += scalarText(value)
        }
    }

    /// The description of a scalar inside a collection (quoted when needed).
    static func scalarText(_ value: PlistValue) -> String {
        switch value {
        case .string(let s): return quoted(s)
        case .integer(let n): return quoted(String(n))
        case .real(let x): return quoted(realText(x))
        case .bool(let b): return b ? "1" : "0"
        case .date(let d): return quoted(dateText(d))
        case .data(let bytes): return dataText(bytes)
        case .uid(let n): return quoted(uidText(n))
        case .array, .dictionary: return describe(value)
        }
    }

    /// `<CFKeyedArchiverUID 0x0 [0x0]>{value = N}`: the description macOS
    /// prints for a keyed-archiver UID, with the two addresses of the
    /// object and its allocator (which exist only in a running macOS
    /// process) printed as `0x0` so that the text stays the same from run
    /// to run. Scripts written for macOS read the `{value = N}` part.
    public static func uidText(_ n: UInt64) -> String {
        "<CFKeyedArchiverUID 0x0 [0x0]>{value = \(n)}"
    }

    /// `{length = N, bytes = 0x…}`; data longer than 24 bytes is shortened to
    /// its first 16 and last 8 bytes, as macOS does.
    public static func dataText(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef")
        func hex(_ slice: ArraySlice<UInt8>) -> String {
            var s = ""
            s.reserveCapacity(slice.count * 2)
            for b in slice { s.append(digits[Int(b >> 4)]); s.append(digits[Int(b & 15)]) }
            return s
        }
        if bytes.count <= 24 {
            return "{length = \(bytes.count), bytes = 0x\(hex(bytes[...]))}"
        }
        let head = stride(from: 0, to: 16, by: 4).map { hex(bytes[$0 ..< $0 + 4]) }.joined(separator: " ")
        let n = bytes.count
        let tail = hex(bytes[n - 8 ..< n - 4]) + " " + hex(bytes[n - 4 ..< n])
        return "{length = \(n), bytes = 0x\(head) ... \(tail) }"
    }
}
