import PropertyList

/// The JSON the page reads: a value tree written as UTF-8 text, with every
/// string escaped for a `<script>`-free page (`<`, `>`, `&` and U+2028/9 as
/// `\u` escapes, so a value can never close a tag or a JavaScript string).
public indirect enum JSON: Equatable, Sendable {
    case null
    case bool(Bool)
    case number(Double)
    case integer(Int128)
    case string(String)
    case array([JSON])
    /// Keys in the order given (the page relies on none, tests read it easily).
    case object([(String, JSON)])

    public static func == (a: JSON, b: JSON) -> Bool { a.text == b.text }

    /// The value as compact JSON text.
    public var text: String {
        var out = ""
        write(into: &out)
        return out
    }

    /// The value as UTF-8 bytes.
    public var bytes: [UInt8] { Array(text.utf8) }

    func write(into out: inout String) {
        switch self {
        case .null: out += "null"
        case .bool(let b): out += b ? "true" : "false"
        case .integer(let i): out += String(i)
        case .number(let d):
            if d.isFinite {
                out += d == d.rounded() && abs(d) < 1e15 ? String(Int64(d)) + ".0" : String(d)
            } else {
                out += "null"
            }
        case .string(let s): Self.quote(s, into: &out)
        case .array(let items):
            out += "["
            for (i, item) in items.enumerated() {
                if i > 0 { out += "," }
                item.write(into: &out)
            }
            out += "]"
        case .object(let entries):
            out += "{"
            for (i, (k, v)) in entries.enumerated() {
                if i > 0 { out += "," }
                Self.quote(k, into: &out)
                out += ":"
                v.write(into: &out)
            }
            out += "}"
        }
    }

    static func quote(_ s: String, into out: inout String) {
        out += "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "<", ">", "&", "\u{2028}", "\u{2029}":
                out += "\\u" + hex4(scalar.value)
            default:
                if scalar.value < 0x20 { out += "\\u" + hex4(scalar.value) } else { out.unicodeScalars.append(scalar) }
            }
        }
        out += "\""
    }

    static func hex4(_ v: UInt32) -> String {
        let digits = Array("0123456789abcdef")
        return String([digits[Int(v >> 12 & 0xF)], digits[Int(v >> 8 & 0xF)], digits[Int(v >> 4 & 0xF)], digits[Int(v & 0xF)]])
    }

    /// A preference value as the page sees it: strings, numbers and
    /// booleans as themselves; anything else as `null` (the raw view shows
    /// it as text).
    public init(value: PlistValue?) {
        switch value {
        case .string(let s)?: self = .string(s)
        case .integer(let i)?: self = .integer(i)
        case .real(let d)?: self = .number(d)
        case .bool(let b)?: self = .bool(b)
        default: self = .null
        }
    }
}
