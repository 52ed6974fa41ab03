/// The character encodings of text property lists, converted to UTF-8
/// before any parser sees the bytes.
///
/// Core Foundation reads XML and old-style plists in UTF-16 and UTF-32 as
/// well as UTF-8, and XML in whatever 8-bit encoding its declaration names.
/// This module does the same without Foundation: the conversions here are
/// small and exact, and every parser keeps working on UTF-8 only.
///
/// Detection, in order:
/// 1. a byte-order mark: UTF-8 `EF BB BF`, UTF-32 `00 00 FE FF` /
///    `FF FE 00 00`, UTF-16 `FE FF` / `FF FE`;
/// 2. without a mark, the NUL bytes around the first ASCII character
///    (`00 00 00 3C` is UTF-32BE, `3C 00` UTF-16LE, and so on), as XML's
///    appendix F describes: text plists begin with ASCII;
/// 3. otherwise 8-bit text: UTF-8, or for XML the encoding its
///    declaration names (``XMLDeclaredEncoding``).
enum TextEncoding: Equatable, Sendable {
    case utf8
    case utf16BigEndian
    case utf16LittleEndian
    case utf32BigEndian
    case utf32LittleEndian

    /// The encoding of `bytes` and the length of its byte-order mark.
    static func detect(_ bytes: [UInt8]) -> (encoding: TextEncoding, markLength: Int) {
        let n = bytes.count
        func at(_ k: Int) -> UInt8? { k < n ? bytes[k] : nil }
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { return (.utf8, 3) }
        if bytes.starts(with: [0x00, 0x00, 0xFE, 0xFF]) { return (.utf32BigEndian, 4) }
        if bytes.starts(with: [0xFF, 0xFE, 0x00, 0x00]) { return (.utf32LittleEndian, 4) }
        if bytes.starts(with: [0xFE, 0xFF]) { return (.utf16BigEndian, 2) }
        if bytes.starts(with: [0xFF, 0xFE]) { return (.utf16LittleEndian, 2) }
        guard n >= 2 else { return (.utf8, 0) }
        let (b0, b1) = (bytes[0], bytes[1])
        if n >= 4, b0 == 0, b1 == 0, at(2) == 0, let b3 = at(3), b3 != 0, b3 < 0x80 { return (.utf32BigEndian, 0) }
        if n >= 4, b0 != 0, b0 < 0x80, b1 == 0, at(2) == 0, at(3) == 0 { return (.utf32LittleEndian, 0) }
        if b0 == 0, b1 != 0, b1 < 0x80 { return (.utf16BigEndian, 0) }
        if b0 != 0, b0 < 0x80, b1 == 0 { return (.utf16LittleEndian, 0) }
        return (.utf8, 0)
    }

    /// The name used in error messages.
    var name: String {
        switch self {
        case .utf8: return "UTF-8"
        case .utf16BigEndian: return "UTF-16BE"
        case .utf16LittleEndian: return "UTF-16LE"
        case .utf32BigEndian: return "UTF-32BE"
        case .utf32LittleEndian: return "UTF-32LE"
        }
    }

    /// `bytes` after the mark, converted to UTF-8 (for `.utf8`, the bytes
    /// themselves; their validity is the parser's business).
    ///
    /// - Throws: ``PlistError/malformed(format:detail:)`` naming the byte
    ///   offset of a truncated unit, an unpaired surrogate or a value
    ///   beyond U+10FFFF.
    func utf8(_ bytes: [UInt8], markLength: Int, format: String) throws(PlistError) -> [UInt8] {
        switch self {
        case .utf8:
            return markLength == 0 ? bytes : Array(bytes[markLength...])
        case .utf16BigEndian, .utf16LittleEndian:
            return try Self.fromUTF16(bytes, start: markLength, bigEndian: self == .utf16BigEndian, format: format)
        case .utf32BigEndian, .utf32LittleEndian:
            return try Self.fromUTF32(bytes, start: markLength, bigEndian: self == .utf32BigEndian, format: format)
        }
    }

    private static func fromUTF16(_ bytes: [UInt8], start: Int, bigEndian: Bool, format: String) throws(PlistError) -> [UInt8] {
        let n = bytes.count
        guard (n - start) % 2 == 0 else {
            throw .malformed(format: format, detail: "UTF-16 text ends in half a code unit (byte offset \(n - 1))")
        }
        var out: [UInt8] = []
        out.reserveCapacity((n - start) / 2 + 16)
        func unit(_ k: Int) -> UInt32 {
            bigEndian ? UInt32(bytes[k]) << 8 | UInt32(bytes[k + 1]) : UInt32(bytes[k + 1]) << 8 | UInt32(bytes[k])
        }
        var k = start
        while k < n {
            let u = unit(k)
            var scalar = u
            if (0xD800...0xDBFF).contains(u) {
                guard k + 3 < n, (0xDC00...0xDFFF).contains(unit(k + 2)) else {
                    throw .malformed(format: format, detail: "unpaired UTF-16 surrogate at byte offset \(k)")
                }
                scalar = 0x10000 + ((u - 0xD800) << 10) + (unit(k + 2) - 0xDC00)
                k += 2
            } else if (0xDC00...0xDFFF).contains(u) {
                throw .malformed(format: format, detail: "unpaired UTF-16 surrogate at byte offset \(k)")
            }
            appendUTF8(scalar, to: &out)
            k += 2
        }
        return out
    }

    private static func fromUTF32(_ bytes: [UInt8], start: Int, bigEndian: Bool, format: String) throws(PlistError) -> [UInt8] {
        let n = bytes.count
        guard (n - start) % 4 == 0 else {
            throw .malformed(format: format, detail: "UTF-32 text ends in a partial code unit (byte offset \(n - (n - start) % 4))")
        }
        var out: [UInt8] = []
        out.reserveCapacity((n - start) / 4 + 16)
        var k = start
        while k < n {
            let v = bigEndian
                ? UInt32(bytes[k]) << 24 | UInt32(bytes[k + 1]) << 16 | UInt32(bytes[k + 2]) << 8 | UInt32(bytes[k + 3])
                : UInt32(bytes[k + 3]) << 24 | UInt32(bytes[k + 2]) << 16 | UInt32(bytes[k + 1]) << 8 | UInt32(bytes[k])
            guard Unicode.Scalar(v) != nil else {
                throw .malformed(format: format, detail: "invalid UTF-32 code point 0x\(String(v, radix: 16, uppercase: true)) at byte offset \(k)")
            }
            appendUTF8(v, to: &out)
            k += 4
        }
        return out
    }

    static func appendUTF8(_ scalar: UInt32, to out: inout [UInt8]) {
        switch scalar {
        case 0..<0x80:
            out.append(UInt8(scalar))
        case 0x80..<0x800:
            out.append(UInt8(0xC0 | scalar >> 6))
            out.append(UInt8(0x80 | scalar & 0x3F))
        case 0x800..<0x10000:
            out.append(UInt8(0xE0 | scalar >> 12))
            out.append(UInt8(0x80 | (scalar >> 6) & 0x3F))
            out.append(UInt8(0x80 | scalar & 0x3F))
        default:
            out.append(UInt8(0xF0 | scalar >> 18))
            out.append(UInt8(0x80 | (scalar >> 12) & 0x3F))
            out.append(UInt8(0x80 | (scalar >> 6) & 0x3F))
            out.append(UInt8(0x80 | scalar & 0x3F))
        }
    }

    /// Text of a plist file as UTF-8: converted from UTF-16 or UTF-32 when
    /// ``detect(_:)`` finds them, the byte-order mark removed.
    static func unicodeText(_ bytes: [UInt8], format: String) throws(PlistError) -> (utf8: [UInt8], source: TextEncoding) {
        let (encoding, mark) = detect(bytes)
        return (try encoding.utf8(bytes, markLength: mark, format: format), encoding)
    }
}

/// The 8-bit encodings an XML declaration may name, as Core Foundation
/// reads them.
///
/// Core Foundation converts the document with whatever encoding the
/// declaration names and refuses a name it does not know. The ones here
/// are those real property-list files use; any other name is refused with
/// the name in the message.
enum XMLDeclaredEncoding: Equatable, Sendable {
    case utf8
    case latin1
    case ascii
    case windows1252
    case nextstep
    /// `UTF-16`/`UTF-32` names: correct only for text already detected as
    /// such by its byte-order mark or NUL bytes.
    case wide

    /// The encoding a declaration's `encoding="…"` value names, matched
    /// without regard to case; `nil` for an unknown name.
    init?(name: String) {
        switch name.lowercased() {
        case "utf-8", "utf8": self = .utf8
        case "iso-8859-1", "iso8859-1", "iso_8859-1", "latin1", "latin-1", "l1", "iso-ir-100", "cp819", "ibm819", "csisolatin1":
            self = .latin1
        case "us-ascii", "ascii", "us", "ansi_x3.4-1968", "iso646-us", "cp367", "ibm367", "csascii":
            self = .ascii
        case "windows-1252", "cp1252", "x-cp1252": self = .windows1252
        case "x-nextstep", "nextstep": self = .nextstep
        case "utf-16", "utf-16be", "utf-16le", "utf16", "ucs-2", "utf-32", "utf-32be", "utf-32le", "utf32", "ucs-4":
            self = .wide
        default: return nil
        }
    }

    /// The value of `encoding="…"` in a leading `<?xml … ?>` declaration,
    /// or `nil` when there is no declaration or it names no encoding.
    static func declaredName(_ utf8: [UInt8]) -> String? {
        var i = 0
        while i < utf8.count, [0x20, 0x09, 0x0A, 0x0D].contains(utf8[i]) { i += 1 }
        guard utf8[i...].starts(with: "<?xml".utf8) else { return nil }
        let limit = min(utf8.count, i + 1024)
        var end = i + 5
        while end + 1 < limit, !(utf8[end] == UInt8(ascii: "?") && utf8[end + 1] == UInt8(ascii: ">")) { end += 1 }
        let declaration = utf8[(i + 5)..<end]
        guard let at = declaration.firstRange(of: "encoding".utf8) else { return nil }
        var k = at.upperBound
        while k < end, [0x20, 0x09, 0x0A, 0x0D].contains(utf8[k]) { k += 1 }
        guard k < end, utf8[k] == UInt8(ascii: "=") else { return nil }
        k += 1
        while k < end, [0x20, 0x09, 0x0A, 0x0D].contains(utf8[k]) { k += 1 }
        guard k < end, utf8[k] == UInt8(ascii: "\"") || utf8[k] == UInt8(ascii: "'") else { return nil }
        let quote = utf8[k]
        k += 1
        let valueStart = k
        while k < end, utf8[k] != quote { k += 1 }
        guard k < end else { return nil }
        return String(decoding: utf8[valueStart..<k], as: UTF8.self)
    }

    /// Converts 8-bit XML text to UTF-8 according to its declaration.
    ///
    /// - Throws: ``PlistError/malformed(format:detail:)`` for an unknown
    ///   encoding name, a wide encoding named for 8-bit text, a byte
    ///   outside US-ASCII or one that windows-1252 leaves undefined.
    static func convert(_ bytes: [UInt8]) throws(PlistError) -> [UInt8] {
        guard let name = declaredName(bytes) else { return bytes }
        guard let encoding = XMLDeclaredEncoding(name: name) else {
            throw .malformed(format: "XML", detail: "line 1: unsupported encoding \"\(name)\" in the XML declaration (supported: UTF-8, UTF-16, UTF-32, ISO-8859-1, US-ASCII, windows-1252, x-nextstep)")
        }
        switch encoding {
        case .utf8:
            return bytes
        case .wide:
            throw .malformed(format: "XML", detail: "line 1: the XML declaration names \"\(name)\" but the text is 8-bit (no byte-order mark)")
        case .ascii:
            if let k = bytes.firstIndex(where: { $0 >= 0x80 }) {
                throw .malformed(format: "XML", detail: "byte 0x\(String(bytes[k], radix: 16, uppercase: true)) at offset \(k) is not US-ASCII, the encoding the XML declaration names")
            }
            return bytes
        case .latin1, .windows1252, .nextstep:
            var out: [UInt8] = []
            out.reserveCapacity(bytes.count + bytes.count / 8)
            for (k, b) in bytes.enumerated() {
                if b < 0x80 {
                    out.append(b)
                    continue
                }
                let scalar: UInt32
                switch encoding {
                case .windows1252 where b < 0xA0:
                    scalar = UInt32(windows1252High[Int(b - 0x80)])
                case .nextstep:
                    scalar = UInt32(NeXTSTEPLatin.scalar(b))
                default:
                    scalar = UInt32(b)
                }
                guard scalar != 0xFFFD else {
                    throw .malformed(format: "XML", detail: "byte 0x\(String(b, radix: 16, uppercase: true)) at offset \(k) has no character in \(name)")
                }
                TextEncoding.appendUTF8(scalar, to: &out)
            }
            return out
        }
    }

    /// windows-1252 bytes 0x80–0x9F (the rest are ISO-8859-1); U+FFFD
    /// marks the five bytes the code page leaves undefined.
    private static let windows1252High: [UInt16] = [
        0x20AC, 0xFFFD, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021,
        0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0xFFFD, 0x017D, 0xFFFD,
        0xFFFD, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014,
        0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0xFFFD, 0x017E, 0x0178,
    ]
}

/// NeXTSTEP Latin, the 8-bit encoding of old-style property lists.
///
/// An octal escape above `\177` in an old-style string names a byte of
/// this encoding, not of Latin-1: `\200` is a no-break space and `\201`
/// is `À`, as Core Foundation reads them.
enum NeXTSTEPLatin {
    /// The character of `byte` (ASCII below 0x80; U+FFFD for 0xFE and
    /// 0xFF, which NeXTSTEP leaves undefined).
    static func scalar(_ byte: UInt8) -> UInt16 {
        byte < 0x80 ? UInt16(byte) : high[Int(byte - 0x80)]
    }

    // Eight entries a row: 0x80, 0x88, … 0xF8.
    private static let high: [UInt16] = [
        0x00A0, 0x00C0, 0x00C1, 0x00C2, 0x00C3, 0x00C4, 0x00C5, 0x00C7,  // 80: nbsp, À Á Â Ã Ä Å Ç
        0x00C8, 0x00C9, 0x00CA, 0x00CB, 0x00CC, 0x00CD, 0x00CE, 0x00CF,  // 88: È É Ê Ë Ì Í Î Ï
        0x00D0, 0x00D1, 0x00D2, 0x00D3, 0x00D4, 0x00D5, 0x00D6, 0x00D9,  // 90: Ð Ñ Ò Ó Ô Õ Ö Ù
        0x00DA, 0x00DB, 0x00DC, 0x00DD, 0x00DE, 0x00B5, 0x00D7, 0x00F7,  // 98: Ú Û Ü Ý Þ µ × ÷
        0x00A9, 0x00A1, 0x00A2, 0x00A3, 0x2044, 0x00A5, 0x0192, 0x00A7,  // A0: © ¡ ¢ £ ⁄ ¥ ƒ §
        0x00A4, 0x2019, 0x201C, 0x00AB, 0x2039, 0x203A, 0xFB01, 0xFB02,  // A8: ¤ ’ “ « ‹ › ﬁ ﬂ
        0x00AE, 0x2013, 0x2020, 0x2021, 0x00B7, 0x00A6, 0x00B6, 0x2022,  // B0: ® – † ‡ · ¦ ¶ •
        0x201A, 0x201E, 0x201D, 0x00BB, 0x2026, 0x2030, 0x00AC, 0x00BF,  // B8: ‚ „ ” » … ‰ ¬ ¿
        0x00B9, 0x02CB, 0x00B4, 0x02C6, 0x02DC, 0x00AF, 0x02D8, 0x02D9,  // C0: ¹ ˋ ´ ˆ ˜ ¯ ˘ ˙
        0x00A8, 0x00B2, 0x02DA, 0x00B8, 0x00B3, 0x02DD, 0x02DB, 0x02C7,  // C8: ¨ ² ˚ ¸ ³ ˝ ˛ ˇ
        0x2014, 0x00B1, 0x00BC, 0x00BD, 0x00BE, 0x00E0, 0x00E1, 0x00E2,  // D0: — ± ¼ ½ ¾ à á â
        0x00E3, 0x00E4, 0x00E5, 0x00E7, 0x00E8, 0x00E9, 0x00EA, 0x00EB,  // D8: ã ä å ç è é ê ë
        0x00EC, 0x00C6, 0x00ED, 0x00AA, 0x00EE, 0x00EF, 0x00F0, 0x00F1,  // E0: ì Æ í ª î ï ð ñ
        0x0141, 0x00D8, 0x0152, 0x00BA, 0x00F2, 0x00F3, 0x00F4, 0x00F5,  // E8: Ł Ø Œ º ò ó ô õ
        0x00F6, 0x00E6, 0x00F9, 0x00FA, 0x00FB, 0x0131, 0x00FC, 0x00FD,  // F0: ö æ ù ú û ı ü ý
        0x0142, 0x00F8, 0x0153, 0x00DF, 0x00FE, 0x00FF, 0xFFFD, 0xFFFD,  // F8: ł ø œ ß þ ÿ, undefined
    ]
}
