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
    /// Binary files start with `bplist00`. XML files start, after an
    /// optional UTF-8 byte-order mark and whitespace, with `<?xml`,
    /// `<!DOCTYPE`, `<!--` or `<plist`. Everything else is taken for
    /// old-style text. JSON is never guessed: a `{` also opens an
    /// old-style dictionary, so JSON must be asked for by name.
    ///
    /// - Parameter bytes: the file contents.
    /// - Returns: the format ``decode(_:)`` would read.
    public static func detectFormat(_ bytes: [UInt8]) -> PlistFormat {
        if bytes.starts(with: BinaryPlistReader.magic) { return .binary }
        var i = 0
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { i = 3 }
        while i < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[i]) { i += 1 }
        let rest = bytes[i...]
        for opening in ["<?xml", "<!DOCTYPE", "<!--", "<plist"] where rest.starts(with: opening.utf8) {
            return .xml
        }
        return .openStep
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
    ///   - format: the format to read; no sniffing is done.
    /// - Returns: the top-level value.
    /// - Throws: ``PlistError/malformed(format:detail:)`` with the offset or
    ///   line and column of the problem, ``PlistError/tooDeep(limit:)``, or
    ///   ``PlistError/unrecognizedFormat``.
    public static func decode(_ bytes: [UInt8], format: PlistFormat) throws(PlistError) -> PlistValue {
        switch format {
        case .binary: return try BinaryPlistReader.decode(bytes)
        case .xml: return try XMLPlistReader.decode(bytes)
        case .openStep: return try OldStyleParser.parse(bytes)
        case .json: return try JSONPlist.decode(bytes)
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

    /// `text` as a JSON string literal, quoted and escaped the way the
    /// typed-JSON writer escapes strings, for commands that write small JSON
    /// documents of their own.
    public static func jsonStringLiteral(_ text: String) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count + 2)
        JSONPlist.quote(text, into: &out)
        return String(decoding: out, as: UTF8.self)
    }
}
