/// Writes Apple-style XML property lists.
///
/// The layout follows Apple's: the XML declaration, Apple's DOCTYPE line,
/// `<plist version="1.0">`, one element per line indented with tabs, keys
/// sorted by code point, `<array/>` and `<dict/>` for empty collections,
/// and data as base64 in lines of `76 - 8 × indent` characters (at least
/// 16, a multiple of 4: 68 at the first level), each indented like the
/// `<data>` element.
///
/// Where the output deliberately differs from Apple's:
///
/// - Characters XML 1.0 cannot carry (the C0 controls other than tab and
///   line feed, and U+FFFE, U+FFFF) are written as numeric character
///   references such as `&#x1;`, and carriage return as `&#xD;` so that
///   XML line-end normalisation cannot turn it into a line feed. Apple
///   writes them raw, which no conforming parser accepts either; the
///   references at least round-trip through ``XMLPlistReader`` (and Core
///   Foundation and libplist, which do not police XML character ranges).
///   Python's expat-based `plistlib` rejects both forms.
/// - Reals are the shortest text that reads back as the same `Double`
///   (`0.1`, `1e-07`), where Apple prints 17 significant digits; whole
///   numbers have no `.0` (`1800`), as Apple writes them; and `nan`,
///   `+infinity`, `-infinity`.
///
/// As Apple writes them: dates in whole seconds, the fraction dropped
/// (rounded down), because Core Foundation and plistlib cannot read a
/// fraction back (binary and JSON keep it); keys ordered by their UTF-16
/// code units, which differs from code-point order only for characters
/// above U+FFFF against U+E000–U+FFFF; a UID as the dictionary
/// `{CF$UID = n}`.
enum XMLPlistWriter {
    static let header = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        <plist version="1.0">

        """

    /// Encodes `value` as a complete XML document.
    ///
    /// - Throws: ``PlistError/tooDeep(limit:)``, or
    ///   ``PlistError/unrepresentable(_:)`` for a date outside
    ///   ``ISO8601/limit`` or an integer outside ``PlistValue/integerRange``.
    static func encode(_ value: PlistValue) throws(PlistError) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(4096)
        out.append(contentsOf: header.utf8)
        try write(value, indent: 0, depth: 0, to: &out)
        out.append(contentsOf: "</plist>\n".utf8)
        return out
    }

    private static func tabs(_ n: Int, _ out: inout [UInt8]) {
        for _ in 0..<n { out.append(0x09) }
    }

    private static func element(_ name: String, _ content: String, indent: Int, _ out: inout [UInt8]) {
        tabs(indent, &out)
        out.append(contentsOf: "<\(name)>".utf8)
        out.append(contentsOf: content.utf8)
        out.append(contentsOf: "</\(name)>\n".utf8)
    }

    private static func write(_ value: PlistValue, indent: Int, depth: Int, to out: inout [UInt8]) throws(PlistError) {
        switch value {
        case .array(let items):
            guard depth < PlistValue.maximumDepth else { throw .tooDeep(limit: PlistValue.maximumDepth) }
            tabs(indent, &out)
            if items.isEmpty {
                out.append(contentsOf: "<array/>\n".utf8)
                return
            }
            out.append(contentsOf: "<array>\n".utf8)
            for item in items {
                try write(item, indent: indent + 1, depth: depth + 1, to: &out)
            }
            tabs(indent, &out)
            out.append(contentsOf: "</array>\n".utf8)
        case .dictionary(let entries):
            guard depth < PlistValue.maximumDepth else { throw .tooDeep(limit: PlistValue.maximumDepth) }
            tabs(indent, &out)
            if entries.isEmpty {
                out.append(contentsOf: "<dict/>\n".utf8)
                return
            }
            out.append(contentsOf: "<dict>\n".utf8)
            for (key, item) in entries.sorted(by: { utf16Precedes($0.key.string, $1.key.string) }) {
                tabs(indent + 1, &out)
                out.append(contentsOf: "<key>".utf8)
                escape(key.string, into: &out)
                out.append(contentsOf: "</key>\n".utf8)
                try write(item, indent: indent + 1, depth: depth + 1, to: &out)
            }
            tabs(indent, &out)
            out.append(contentsOf: "</dict>\n".utf8)
        default:
            try scalar(value, indent: indent, to: &out)
        }
    }

    @inline(never)
    private static func scalar(_ value: PlistValue, indent: Int, to out: inout [UInt8]) throws(PlistError) {
        switch value {
        case .string(let s):
            tabs(indent, &out)
            out.append(contentsOf: "<string>".utf8)
            escape(s, into: &out)
            out.append(contentsOf: "</string>\n".utf8)
        case .integer(let v):
            guard PlistValue.integerRange.contains(v) else {
                throw .unrepresentable("integer \(v) in a property list (outside \(Int64.min)...\(UInt64.max))")
            }
            element("integer", v.description, indent: indent, &out)
        case .real(let d):
            element("real", realText(d), indent: indent, &out)
        case .bool(let b):
            tabs(indent, &out)
            out.append(contentsOf: (b ? "<true/>\n" : "<false/>\n").utf8)
        case .date(let d):
            element("date", try ISO8601.format(d, wholeSeconds: true), indent: indent, &out)
        case .data(let bytes):
            tabs(indent, &out)
            out.append(contentsOf: "<data>\n".utf8)
            let width = max(16, 76 - 8 * indent) / 4 * 4
            Base64.encode(bytes, into: &out, lineLength: width, linePrefix: [UInt8](repeating: 0x09, count: indent))
            tabs(indent, &out)
            out.append(contentsOf: "</data>\n".utf8)
        case .uid(let n):
            tabs(indent, &out)
            out.append(contentsOf: "<dict>\n".utf8)
            tabs(indent + 1, &out)
            out.append(contentsOf: "<key>CF$UID</key>\n".utf8)
            element("integer", String(n), indent: indent + 1, &out)
            tabs(indent, &out)
            out.append(contentsOf: "</dict>\n".utf8)
        case .array, .dictionary:
            preconditionFailure("collections are written by write(_:indent:depth:to:)")
        }
    }

    /// `nan`, `+infinity`, `-infinity`, or the shortest round-trip
    /// decimal without a trailing `.0`.
    static func realText(_ d: Double) -> String {
        if d.isNaN { return "nan" }
        if d.isInfinite { return d < 0 ? "-infinity" : "+infinity" }
        var s = d.description
        if s.hasSuffix(".0") { s.removeLast(2) }
        return s
    }

    /// Whether `a` sorts before `b` by UTF-16 code units, the order in
    /// which Core Foundation writes dictionary keys.
    static func utf16Precedes(_ a: String, _ b: String) -> Bool {
        var ia = a.utf16.makeIterator()
        var ib = b.utf16.makeIterator()
        while true {
            switch (ia.next(), ib.next()) {
            case (nil, nil): return false
            case (nil, _): return true
            case (_, nil): return false
            case (let x?, let y?): if x != y { return x < y }
            }
        }
    }

    /// Appends `s` with `&`, `<`, `>` escaped and characters XML 1.0 cannot
    /// carry (and CR) as numeric references.
    static func escape(_ s: String, into out: inout [UInt8]) {
        var s = s
        s.withUTF8 { utf8 in
            var k = 0
            let n = utf8.count
            while k < n {
                let c = utf8[k]
                switch c {
                case UInt8(ascii: "&"): out.append(contentsOf: "&amp;".utf8)
                case UInt8(ascii: "<"): out.append(contentsOf: "&lt;".utf8)
                case UInt8(ascii: ">"): out.append(contentsOf: "&gt;".utf8)
                case 0x09, 0x0A: out.append(c)
                case 0x00..<0x20:
                    out.append(contentsOf: "&#x\(String(c, radix: 16, uppercase: true));".utf8)
                case 0xEF where k + 2 < n && utf8[k + 1] == 0xBF && (utf8[k + 2] == 0xBE || utf8[k + 2] == 0xBF):
                    // U+FFFE and U+FFFF.
                    out.append(contentsOf: (utf8[k + 2] == 0xBE ? "&#xFFFE;" : "&#xFFFF;").utf8)
                    k += 2
                default:
                    out.append(c)
                }
                k += 1
            }
        }
    }
}
