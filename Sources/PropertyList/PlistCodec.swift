/// A property-list file format.
public enum PlistFormat: String, Sendable {
    /// Apple's `bplist00` binary format.
    case binary
    /// Apple's XML format (`<plist version="1.0">`).
    case xml
    /// NeXTSTEP "old-style" text (`{ key = value; }`).
    case openStep
    /// This module's lossless typed JSON (see `Schemas/plist-json.md`).
    case json
}

/// Reads and writes property lists in every supported format.
///
/// The one entry point for bytes in and bytes out; the readers and writers
/// behind it are internal. Every failure is a ``PlistError``; no input,
/// however malformed, crashes the process or reads outside the buffer.
public enum PlistCodec {
    /// Guesses the format of a property list from its first bytes.
    ///
    /// Binary files start with `bplist00`. Text is first taken apart from
    /// its encoding (a UTF-8, UTF-16 or UTF-32 byte-order mark, or UTF-16
    /// or UTF-32 without one, see ``TextEncoding``). XML files then start,
    /// after whitespace, with `<?xml`, `<!DOCTYPE`, `<!--`, `<plist` or the
    /// start tag of a plist element such as `<dict>` (Core Foundation reads
    /// a bare `<dict>…</dict>` as XML; old-style data `<0fa1>` is hex
    /// digits, and none of those element names is). Everything else is
    /// taken for old-style text. JSON is never guessed: a `{` also opens an
    /// old-style dictionary, so JSON must be asked for by name.
    ///
    /// - Parameter bytes: the file contents.
    /// - Returns: the format ``decode(_:)`` would read.
    public static func detectFormat(_ bytes: [UInt8]) -> PlistFormat {
        if bytes.starts(with: BinaryPlistReader.magic) { return .binary }
        let opening = asciiOpening(bytes)
        var i = 0
        while i < opening.count, [0x20, 0x09, 0x0A, 0x0D].contains(opening[i]) { i += 1 }
        let rest = opening[i...]
        for prefix in ["<?xml", "<!DOCTYPE", "<!--", "<plist"] where rest.starts(with: prefix.utf8) {
            return .xml
        }
        for name in ["dict", "array", "string", "key", "integer", "real", "true", "false", "date", "data"] {
            guard rest.dropFirst().starts(with: name.utf8), rest.first == UInt8(ascii: "<") else { continue }
            let after = rest.dropFirst(1 + name.utf8.count).first
            if after == UInt8(ascii: ">") || after == UInt8(ascii: "/") || after.map({ [0x20, 0x09, 0x0A, 0x0D].contains($0) }) == true {
                return .xml
            }
        }
        return .openStep
    }

    /// The first characters of text in any encoding ``TextEncoding`` knows,
    /// as ASCII bytes (anything else as 0x80), enough to tell XML from
    /// old-style text without converting a whole file.
    private static func asciiOpening(_ bytes: [UInt8]) -> [UInt8] {
        let (encoding, mark) = TextEncoding.detect(bytes)
        let width: Int
        switch encoding {
        case .utf8: return Array(bytes[mark..<min(bytes.count, mark + 64)])
        case .utf16BigEndian, .utf16LittleEndian: width = 2
        case .utf32BigEndian, .utf32LittleEndian: width = 4
        }
        let bigEndian = encoding == .utf16BigEndian || encoding == .utf32BigEndian
        var out: [UInt8] = []
        var k = mark
        while k + width <= bytes.count, out.count < 64 {
            let unit = bytes[k..<(k + width)]
            let low = bigEndian ? unit.last! : unit.first!
            let others = bigEndian ? unit.dropLast() : unit.dropFirst()
            out.append(others.allSatisfy { $0 == 0 } && low < 0x80 ? low : 0x80)
            k += width
        }
        return out
    }

    /// Decodes a property list in whichever format ``detectFormat(_:)`` finds.
    ///
    /// - Parameter bytes: the file contents.
    /// - Returns: the top-level value.
    /// - Throws: ``PlistError`` describing the first problem found.
    public static func decode(_ bytes: [UInt8]) throws(PlistError) -> PlistValue {
        try decode(bytes, format: detectFormat(bytes))
    }

    /// Decodes a property list in a given format.
    ///
    /// - Parameters:
    ///   - bytes: the file contents.
    ///   - format: the format to read; no format sniffing is done, but
    ///     XML and old-style text in UTF-16 or UTF-32 (and XML in the
    ///     8-bit encoding its declaration names) is converted first.
    /// - Returns: the top-level value.
    /// - Throws: ``PlistError/malformed(format:detail:)`` with the offset or
    ///   line and column of the problem, ``PlistError/tooDeep(limit:)``, or
    ///   ``PlistError/unrecognizedFormat``.
    public static func decode(_ bytes: [UInt8], format: PlistFormat) throws(PlistError) -> PlistValue {
        try decode(bytes, format: format, refusingDuplicateKeys: false)
    }

    /// Decodes a property list in a given format; with
    /// `refusingDuplicateKeys`, a key twice in one XML dictionary is an
    /// error (JSON always refuses one) instead of the last one winning.
    public static func decode(_ bytes: [UInt8], format: PlistFormat, refusingDuplicateKeys: Bool) throws(PlistError) -> PlistValue {
        switch format {
        case .binary: return try BinaryPlistReader.decode(bytes)
        case .xml: return try XMLPlistReader.decode(xmlText(bytes), refuseDuplicateKeys: refusingDuplicateKeys)
        case .openStep: return try OldStyleParser.parse(TextEncoding.unicodeText(bytes, format: "old-style").utf8)
        case .json: return try JSONPlist.decode(bytes)
        }
    }

    /// XML text as UTF-8: converted from UTF-16 or UTF-32 when it is in
    /// either, else from the 8-bit encoding its declaration names.
    private static func xmlText(_ bytes: [UInt8]) throws(PlistError) -> [UInt8] {
        let (encoding, mark) = TextEncoding.detect(bytes)
        switch encoding {
        case .utf8:
            // With a UTF-8 byte-order mark the mark decides; the reader skips it.
            return mark == 0 ? try XMLDeclaredEncoding.convert(bytes) : bytes
        default:
            return try encoding.utf8(bytes, markLength: mark, format: "XML")
        }
    }

    /// Encodes a value in a given format.
    ///
    /// - Parameters:
    ///   - value: the value to write.
    ///   - format: `.binary`, `.xml` or `.json`. Old-style text is written
    ///     by the printer in `OldStylePrinter.swift`, not here.
    /// - Returns: the complete file contents.
    /// - Throws: ``PlistError/unrepresentable(_:)`` for `.openStep`, for an
    ///   integer outside ``PlistValue/integerRange``, or for a date too far
    ///   away to write as a calendar date (XML, JSON);
    ///   ``PlistError/tooDeep(limit:)`` beyond ``PlistValue/maximumDepth``.
    public static func encode(_ value: PlistValue, format: PlistFormat) throws(PlistError) -> [UInt8] {
        switch format {
        case .binary: return try BinaryPlistWriter.encode(value)
        case .xml: return try XMLPlistWriter.encode(value)
        case .json: return try JSONPlist.encode(value)
        case .openStep: throw .unrepresentable("old-style property lists with the codec (use the old-style printer)")
        }
    }

    /// Decodes plain JSON (as `JSONSerialization` reads it): numbers with a
    /// fraction or exponent are reals, others integers; no member is taken
    /// for a tag of the typed form; `null` is an error.
    public static func decodePlainJSON(_ bytes: [UInt8]) throws(PlistError) -> PlistValue {
        try JSONPlist.decode(bytes, plain: true)
    }

    /// `text` as a JSON string literal, quoted and escaped the way the
    /// typed-JSON writer escapes strings (``JSONString``), for commands that
    /// write small JSON documents of their own.
    public static func jsonStringLiteral(_ text: String) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count + 2)
        JSONString.append(text, to: &out)
        return String(decoding: out, as: UTF8.self)
    }
}
