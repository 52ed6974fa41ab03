import PropertyList

/// The values `-insert` and `-replace` take, read as macOS's `plutil` reads them.
enum ValueParsing {
    /// `-longLongValue`: leading space, a sign, digits; what follows is ignored; no digits is 0;
    /// beyond the range the nearest limit.
    static func longLong(_ text: String) -> Int64 {
        var bytes = Array(text.utf8)[...]
        while let b = bytes.first, b == 0x20 || (0x09...0x0D).contains(b) { bytes.removeFirst() }
        var negative = false
        if let b = bytes.first, b == UInt8(ascii: "-") || b == UInt8(ascii: "+") {
            negative = b == UInt8(ascii: "-")
            bytes.removeFirst()
        }
        var value: Int128 = 0
        while let b = bytes.first, b >= 0x30, b <= 0x39 {
            value = min(value * 10 + Int128(b - 0x30), Int128(Int64.max) + 1)
            bytes.removeFirst()
        }
        if negative { value = -value }
        return Int64(max(Int128(Int64.min), min(Int128(Int64.max), value)))
    }

    /// `-doubleValue`: the longest number at the start (after space); none is 0.
    static func double(_ text: String) -> Double {
        let bytes = Array(text.utf8)
        var start = 0
        while start < bytes.count, bytes[start] == 0x20 || (0x09...0x0D).contains(bytes[start]) { start += 1 }
        var end = bytes.count
        while end > start {
            if let d = Double(String(decoding: bytes[start..<end], as: UTF8.self)), !bytes[start..<end].contains(where: { $0 == 0x20 }) {
                return d
            }
            end -= 1
        }
        return 0
    }

    /// A date as an XML property list writes it (`2024-01-31T12:00:00Z`).
    static func date(_ text: String) throws(PlutilError) -> PlistDate {
        let xml = "<plist version=\"1.0\"><date>" + text.filter { $0 != "<" && $0 != "&" } + "</date></plist>"
        guard !text.contains("<"), !text.contains("&"),
              case .date(let d)? = try? PlistCodec.decode(Array(xml.utf8), format: .xml) else {
            throw .message("Invalid date in argument (expected the form 2024-01-31T12:00:00Z)")
        }
        return d
    }

    /// Base64, skipping characters outside its alphabet.
    static func base64(_ text: String) throws(PlutilError) -> [UInt8] {
        let kept = text.utf8.filter { b in
            (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || (b >= 0x30 && b <= 0x39)
                || b == UInt8(ascii: "+") || b == UInt8(ascii: "/") || b == UInt8(ascii: "=")
        }
        guard let bytes = Base64.decode(kept) else { throw .message("Invalid base64 data in argument") }
        return bytes
    }
}
