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

    public static func == (a: JSON, b: JSON) -> Bool { a.bytes == b.bytes }

    /// The value as compact JSON text.
    public var text: String { String(decoding: bytes, as: UTF8.self) }

    /// The value as UTF-8 bytes.
    public var bytes: [UInt8] {
        var out: [UInt8] = []
        write(into: &out)
        return out
    }

    func write(into out: inout [UInt8]) {
        switch self {
        case .null: out += "null".utf8
        case .bool(let b): out += (b ? "true" : "false").utf8
        case .integer(let i): out += String(i).utf8
        case .number(let d):
            if d.isFinite {
                out += (d == d.rounded() && abs(d) < 1e15 ? String(Int64(d)) + ".0" : String(d)).utf8
            } else {
                out += "null".utf8
            }
        case .string(let s): JSONString.append(s, escaping: .html, to: &out)
        case .array(let items):
            out.append(UInt8(ascii: "["))
            for (i, item) in items.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                item.write(into: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let entries):
            out.append(UInt8(ascii: "{"))
            for (i, (k, v)) in entries.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                JSONString.append(k, escaping: .html, to: &out)
                out.append(UInt8(ascii: ":"))
                v.write(into: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
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
