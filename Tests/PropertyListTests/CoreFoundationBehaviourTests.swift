import PropertyList
import Testing

/// Text in UTF-16 or UTF-32 with or without a byte-order mark.
enum Wide: String, CaseIterable, Sendable {
    case utf16LE, utf16BE, utf32LE, utf32BE

    func encode(_ text: String, mark: Bool) -> [UInt8] {
        var out: [UInt8] = []
        switch self {
        case .utf16LE, .utf16BE:
            for u in (mark ? "\u{FEFF}" + text : text).utf16 {
                let pair = [UInt8(u >> 8), UInt8(u & 0xFF)]
                out += self == .utf16BE ? pair : pair.reversed()
            }
        case .utf32LE, .utf32BE:
            for s in (mark ? "\u{FEFF}" + text : text).unicodeScalars {
                let v = s.value
                let quad = [UInt8(v >> 24), UInt8((v >> 16) & 0xFF), UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF)]
                out += self == .utf32BE ? quad : quad.reversed()
            }
        }
        return out
    }
}

/// One file's bytes and the value Core Foundation reads from it.
struct Vector: Sendable, CustomStringConvertible {
    var name: String
    var bytes: [UInt8]
    var expected: PlistValue
    var description: String { name }
}

/// Text plists in the encodings Core Foundation reads.
@Suite struct TextEncodingTests {
    static let xml = """
        <?xml version="1.0" encoding="UTF-16"?>
        <plist version="1.0"><dict><key>name</key><string>Grüße 東京 🙂</string></dict></plist>
        """
    static let xmlValue = PlistValue.dictionary(["name": .string("Grüße 東京 🙂")])
    static let strings = "/* a .strings file */\n\"greeting\" = \"Grüße\";\nfarewell = \"🙂\";\n"
    static let stringsValue = PlistValue.dictionary(["greeting": .string("Grüße"), "farewell": .string("🙂")])
    static let oldStyle = "{ list = (a, \"é\"); data = <0fa1>; }"
    static let oldStyleValue = PlistValue.dictionary(["list": .array([.string("a"), .string("é")]), "data": .data([0x0F, 0xA1])])

    static var vectors: [Vector] {
        var out: [Vector] = []
        for wide in Wide.allCases {
            for mark in [true, false] {
                let suffix = "\(wide.rawValue) \(mark ? "with" : "without") a byte-order mark"
                out.append(Vector(name: "XML in " + suffix, bytes: wide.encode(xml, mark: mark), expected: xmlValue))
                out.append(Vector(name: ".strings in " + suffix, bytes: wide.encode(strings, mark: mark), expected: stringsValue))
                out.append(Vector(name: "old-style in " + suffix, bytes: wide.encode(oldStyle, mark: mark), expected: oldStyleValue))
                out.append(Vector(name: "bare <dict> in " + suffix, bytes: wide.encode("<dict><key>k</key><true/></dict>", mark: mark),
                                  expected: .dictionary(["k": .bool(true)])))
            }
        }
        return out
    }

    @Test(arguments: vectors)
    func wideTextReadsAsCoreFoundationReadsIt(vector: Vector) throws {
        #expect(try PlistCodec.decode(vector.bytes) == vector.expected)
    }

    @Test func everyTruncationAndByteFlipOfWideTextThrowsOrDecodes() {
        for wide in Wide.allCases {
            for text in [Self.xml, Self.strings] {
                let bytes = wide.encode(text, mark: true)
                let unit = wide == .utf16LE || wide == .utf16BE ? 2 : 4
                for n in 0...bytes.count {
                    let decoded = try? PlistCodec.decode(Array(bytes[..<n]))
                    // Past the mark, half a code unit is never text; the whole file always is.
                    if n > 4, n % unit != 0 { #expect(decoded == nil, "\(wide) cut at \(n)") }
                    if n == bytes.count { #expect(decoded != nil, "\(wide) whole") }
                }
                for k in 0..<min(bytes.count, 120) {
                    var flipped = bytes
                    flipped[k] ^= 0xFF
                    _ = try? PlistCodec.decode(flipped)
                    _ = PlistCodec.detectFormat(flipped)
                }
            }
        }
        for opening in [[UInt8]("<?xml version=\"1.0\" encoding=\"".utf8), Array("<?xml encoding".utf8), Array("<?xml".utf8), [0xEF, 0xBB]] {
            for n in 0...opening.count { _ = try? PlistCodec.decode(Array(opening[..<n]) + [0xE9]) }
        }
    }

    @Test func wideXMLIsDetectedAsXML() {
        #expect(PlistCodec.detectFormat(Wide.utf16LE.encode(Self.xml, mark: false)) == .xml)
        #expect(PlistCodec.detectFormat(Wide.utf32BE.encode(Self.xml, mark: true)) == .xml)
        #expect(PlistCodec.detectFormat(Wide.utf16BE.encode(Self.strings, mark: true)) == .openStep)
    }

    static let broken: [(String, [UInt8], String)] = [
        ("odd number of UTF-16 bytes", [0xFF, 0xFE, 0x7B, 0x00, 0x7D], "malformed old-style property list: UTF-16 text ends in half a code unit (byte offset 4)"),
        ("unpaired high surrogate", [0xFF, 0xFE] + [0x22, 0x00, 0x3D, 0xD8, 0x22, 0x00], "malformed old-style property list: unpaired UTF-16 surrogate at byte offset 4"),
        ("lone low surrogate", [0xFE, 0xFF] + [0x00, 0x22, 0xDC, 0x00, 0x00, 0x22], "malformed old-style property list: unpaired UTF-16 surrogate at byte offset 4"),
        ("UTF-32 beyond U+10FFFF", [0x00, 0x00, 0xFE, 0xFF, 0x00, 0x11, 0x00, 0x00], "malformed old-style property list: invalid UTF-32 code point 0x110000 at byte offset 4"),
        ("truncated UTF-32", [0xFF, 0xFE, 0x00, 0x00, 0x41, 0x00, 0x00], "malformed old-style property list: UTF-32 text ends in a partial code unit (byte offset 4)"),
    ]

    @Test(arguments: broken.map(\.0))
    func brokenWideTextIsRefusedWithItsOffset(name: String) {
        let (_, bytes, message) = Self.broken.first { $0.0 == name }!
        #expect(throws: PlistError.self) { try PlistCodec.decode(bytes) }
        do {
            _ = try PlistCodec.decode(bytes)
        } catch {
            #expect(error.description == message)
        }
    }
}

/// The encoding an XML declaration names is the encoding the file is read in.
@Suite struct XMLDeclaredEncodingTests {
    static func document(_ encoding: String, _ body: [UInt8], quote: String = "\"") -> [UInt8] {
        Array("<?xml version=\"1.0\" encoding=\(quote)\(encoding)\(quote)?>\n<plist version=\"1.0\"><string>".utf8)
            + body + Array("</string></plist>\n".utf8)
    }

    static let readable: [Vector] = [
        Vector(name: "ISO-8859-1 café", bytes: document("ISO-8859-1", [0x63, 0x61, 0x66, 0xE9]), expected: .string("café")),
        Vector(name: "latin1 in lowercase, single quotes", bytes: document("latin1", [0xFC, 0xDF], quote: "'"), expected: .string("üß")),
        Vector(name: "windows-1252 euro and quotes", bytes: document("windows-1252", [0x80, 0x93, 0x94, 0xE9]), expected: .string("€“”é")),
        Vector(name: "US-ASCII", bytes: document("US-ASCII", Array("plain".utf8)), expected: .string("plain")),
        Vector(name: "UTF-8 named", bytes: document("utf-8", Array("é".utf8)), expected: .string("é")),
        Vector(name: "a UTF-8 byte-order mark outranks the declaration", bytes: [0xEF, 0xBB, 0xBF] + document("ISO-8859-1", Array("é".utf8)), expected: .string("é")),
        Vector(name: "no encoding named is UTF-8", bytes: Array("<?xml version=\"1.0\"?><string>é</string>".utf8), expected: .string("é")),
    ]

    @Test(arguments: readable)
    func declaredEncodingIsHonoured(vector: Vector) throws {
        #expect(try PlistCodec.decode(vector.bytes) == vector.expected)
    }

    static let refused: [(String, [UInt8], String)] = [
        ("unknown encoding", document("foobar", Array("x".utf8)),
         "malformed XML property list: line 1: unsupported encoding \"foobar\" in the XML declaration (supported: UTF-8, UTF-16, UTF-32, ISO-8859-1, US-ASCII, windows-1252, x-nextstep)"),
        ("US-ASCII with a high byte", document("US-ASCII", [0xE9]),
         "malformed XML property list: byte 0xE9 at offset 71 is not US-ASCII, the encoding the XML declaration names"),
        ("windows-1252 undefined byte", document("windows-1252", [0x81]),
         "malformed XML property list: byte 0x81 at offset 75 has no character in windows-1252"),
        ("UTF-16 named for 8-bit text", document("UTF-16", Array("x".utf8)),
         "malformed XML property list: line 1: the XML declaration names \"UTF-16\" but the text is 8-bit (no byte-order mark)"),
        ("Latin-1 byte in a UTF-8 file", document("UTF-8", [0xE9]),
         "malformed XML property list: line 2, column 22: <string> is not valid UTF-8"),
    ]

    @Test(arguments: refused.map(\.0))
    func wrongOrUnknownEncodingIsRefused(name: String) {
        let (_, bytes, message) = Self.refused.first { $0.0 == name }!
        do {
            let value = try PlistCodec.decode(bytes)
            Issue.record("decoded \(value)")
        } catch {
            #expect(error.description == message)
        }
    }
}

/// Dates in Core Foundation's calendar: Julian before 1582-10-15.
@Suite struct CalendarTests {
    @Test func distantPastPrintsAsYearOne() {
        #expect(OldStylePrinter.dateText(PlistDate(secondsSinceReferenceDate: -63_114_076_800)) == "0001-01-01 00:00:00 +0000")
    }

    @Test func xmlDateInYearZeroIsJulian() throws {
        let xml = Array("<plist version=\"1.0\"><date>0000-01-02T00:00:00Z</date></plist>".utf8)
        #expect(try PlistCodec.decode(xml) == .date(PlistDate(secondsSinceReferenceDate: -63_145_612_800)))
    }

    @Test func julianOctoberFourthIsTheDayBeforeGregorianOctoberFifteenth() {
        let last = CivilTime(year: 1582, month: 10, day: 4).date.secondsSinceReferenceDate
        let first = CivilTime(year: 1582, month: 10, day: 15).date.secondsSinceReferenceDate
        #expect(first == -13_197_600_000)
        #expect(first - last == 86_400)
        #expect(OldStylePrinter.dateText(PlistDate(secondsSinceReferenceDate: first - 1)) == "1582-10-04 23:59:59 +0000")
        #expect(OldStylePrinter.dateText(PlistDate(secondsSinceReferenceDate: first)) == "1582-10-15 00:00:00 +0000")
    }

    @Test func julianLeapYearsIncludeCenturies() {
        // 1500 is a leap year in the Julian calendar, not in the Gregorian.
        #expect(CivilTime(year: 1500, month: 2, day: 29).isValid)
        #expect(!CivilTime(year: 1700, month: 2, day: 29).isValid)
        let feb29 = CivilTime(year: 1500, month: 2, day: 29).date
        #expect(OldStylePrinter.dateText(feb29) == "1500-02-29 00:00:00 +0000")
        let march1 = CivilTime(year: 1500, month: 3, day: 1).date
        #expect(march1.secondsSinceReferenceDate - feb29.secondsSinceReferenceDate == 86_400)
    }

    @Test(arguments: [-100_000, -4713, -1, 0, 1, 4, 100, 1000, 1581, 1582, 1583, 2000, 9999, 100_000])
    func everyDayOfTheYearConvertsBothWays(year: Int) {
        var previous: Double? = nil
        for month in 1...12 {
            for day in 1...31 {
                let c = CivilTime(year: year, month: month, day: day, hour: 12)
                guard c.isValid, !(year == 1582 && month == 10 && (5...14).contains(day)) else { continue }
                let s = c.date.secondsSinceReferenceDate
                if let p = previous { #expect(s - p == 86_400, "\(year)-\(month)-\(day)") }
                previous = s
                #expect(CivilTime(c.date) == c, "\(year)-\(month)-\(day)")
            }
        }
    }

    @Test func xmlWritesAndReadsJulianDates() throws {
        let date = PlistDate(secondsSinceReferenceDate: -63_114_076_800)
        let xml = String(decoding: try PlistCodec.encode(.date(date), format: .xml), as: UTF8.self)
        #expect(xml.contains("<date>0001-01-01T00:00:00Z</date>"))
        #expect(try PlistCodec.decode(Array(xml.utf8)) == .date(date))
    }
}

/// How XML files are written: as Apple writes them.
@Suite struct XMLWriterTests {
    static func xml(_ value: PlistValue) throws -> String {
        String(decoding: try PlistCodec.encode(value, format: .xml), as: UTF8.self)
    }

    @Test(arguments: [(0.5, "2001-01-01T00:00:00Z"), (59.999, "2001-01-01T00:00:59Z"), (-0.5, "2000-12-31T23:59:59Z"), (1e-9, "2001-01-01T00:00:00Z")])
    func datesAreWrittenInWholeSecondsRoundedDown(seconds: Double, text: String) throws {
        #expect(try Self.xml(.date(PlistDate(secondsSinceReferenceDate: seconds))).contains("<date>\(text)</date>"))
    }

    @Test func binaryAndJSONKeepTheFraction() throws {
        let date = PlistValue.date(PlistDate(secondsSinceReferenceDate: 0.5))
        #expect(try PlistCodec.decode(PlistCodec.encode(date, format: .binary)) == date)
        let json = try PlistCodec.encode(date, format: .json)
        #expect(String(decoding: json, as: UTF8.self).contains("2001-01-01T00:00:00.5Z"))
        #expect(try PlistCodec.decode(json, format: .json) == date)
    }

    @Test(arguments: [(1800.0, "1800"), (-0.0, "-0"), (0.0, "0"), (2.5, "2.5"), (0.1, "0.1"), (1e300, "1e+300"), (-3.0, "-3")])
    func realsAreWrittenWithoutATrailingPointZero(value: Double, text: String) throws {
        #expect(try Self.xml(.real(value)).contains("<real>\(text)</real>"))
    }

    @Test func keysAreOrderedByUTF16CodeUnits() throws {
        // By code point U+FF61 sorts before U+1F600; by UTF-16 code unit the
        // surrogate 0xD83D sorts before 0xFF61.
        let text = try Self.xml(.dictionary(["\u{FF61}": .integer(1), "\u{1F600}": .integer(2), "a": .integer(3), "B": .integer(4)]))
        let order = ["B", "a", "\u{1F600}", "\u{FF61}"].map { text.range(of: "<key>\($0)</key>")!.lowerBound }
        #expect(order == order.sorted())
    }

    @Test func trailingSpaceInARealIsRefusedAndLeadingSpaceIsNot() throws {
        #expect(throws: PlistError.self) { try PlistCodec.decode(Array("<plist version=\"1.0\"><real>1.5  </real></plist>".utf8)) }
        #expect(try PlistCodec.decode(Array("<plist version=\"1.0\"><real>  1.5</real></plist>".utf8)) == .real(1.5))
    }
}

/// A file that starts with an element rather than a declaration.
@Suite struct BareXMLTests {
    @Test(arguments: [
        ("<dict><key>a</key><string>b</string></dict>", PlistValue.dictionary(["a": .string("b")])),
        ("\n  <dict/>", PlistValue.dictionary([:])),
        ("<array>\n<integer>1</integer>\n</array>", PlistValue.array([.integer(1)])),
        ("<string>x</string>", PlistValue.string("x")),
        ("<0fa1>", PlistValue.data([0x0F, 0xA1])),
        ("<dead beef>", PlistValue.data([0xDE, 0xAD, 0xBE, 0xEF])),
    ])
    func bareElementIsXMLAndHexIsData(text: String, expected: PlistValue) throws {
        #expect(try PlistCodec.decode(Array(text.utf8)) == expected)
    }
}

/// Octal escapes in old-style strings are NeXTSTEP Latin bytes.
@Suite struct NeXTSTEPEscapeTests {
    @Test(arguments: [
        ("\\200", "\u{A0}"), ("\\201", "\u{C0}"), ("\\235", "\u{B5}"), ("\\240", "\u{A9}"), ("\\251", "\u{2019}"),
        ("\\256", "\u{FB01}"), ("\\321", "\u{B1}"), ("\\341", "\u{C6}"), ("\\350", "\u{141}"), ("\\373", "\u{DF}"),
        ("\\375", "\u{FF}"), ("\\376", "\u{FFFD}"), ("\\377", "\u{FFFD}"), ("\\101", "A"), ("\\0", "\u{0}"), ("\\177", "\u{7F}"),
    ])
    func octalEscapeMapsThroughNeXTSTEPLatin(escape: String, expected: String) throws {
        #expect(try OldStyleText.parse("\"\(escape)\"") == .string(expected))
        #expect(try OldStyleText.unescape(escape) == expected)
    }
}

/// Keyed-archiver UIDs: read, kept, printed as macOS prints them.
@Suite struct UIDTests {
    @Test func binaryUIDsOfEverySizeAreRead() throws {
        let file = assembleBinary([
            [0xA4, 1, 2, 3, 4], [0x80, 0x05], [0x81, 0x01, 0x00], [0x83, 0x00, 0x01, 0x00, 0x00],
            [0x87, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF],
        ])
        #expect(try PlistCodec.decode(file) == .array([.uid(5), .uid(256), .uid(65536), .uid(UInt64.max)]))
    }

    @Test func binaryWriterUsesTheSmallestWidth() throws {
        let bytes = try PlistCodec.encode(.array([.uid(5), .uid(300)]), format: .binary)
        #expect(bytes.firstRange(of: [0x80, 0x05]) != nil)
        #expect(bytes.firstRange(of: [0x81, 0x01, 0x2C]) != nil)
    }

    @Test func xmlCarriesAUIDAsACFUIDDictionary() throws {
        let text = String(decoding: try PlistCodec.encode(.dictionary(["$class": .uid(7)]), format: .xml), as: UTF8.self)
        #expect(text.contains("<key>$class</key>\n\t<dict>\n\t\t<key>CF$UID</key>\n\t\t<integer>7</integer>\n\t</dict>"))
        #expect(try PlistCodec.decode(Array(text.utf8)) == .dictionary(["$class": .uid(7)]))
    }

    @Test func cfUIDDictionaryWithANegativeValueStaysADictionary() throws {
        let xml = "<plist version=\"1.0\"><dict><key>CF$UID</key><integer>-1</integer></dict></plist>"
        #expect(try PlistCodec.decode(Array(xml.utf8)) == .dictionary(["CF$UID": .integer(-1)]))
    }

    @Test func printerShowsTheKeyedArchiverDescription() {
        #expect(OldStylePrinter.describe(.dictionary(["$class": .uid(4)]))
            == "{\n    \"$class\" = \"<CFKeyedArchiverUID 0x0 [0x0]>{value = 4}\";\n}")
        #expect(OldStylePrinter.describeTopLevel(.uid(4)) == "<CFKeyedArchiverUID 0x0 [0x0]>{value = 4}")
        #expect(PlistValue.uid(4).typeName == "uid")
    }

    @Test func jsonHasATypedUID() throws {
        let json = try PlistCodec.encode(.array([.uid(0), .uid(UInt64.max)]), format: .json)
        #expect(String(decoding: json, as: UTF8.self) == "[\n  {\"$uid\": 0},\n  {\"$uid\": 18446744073709551615}\n]\n")
        #expect(try PlistCodec.decode(json, format: .json) == .array([.uid(0), .uid(UInt64.max)]))
    }

    @Test(arguments: ["{\"$uid\": -1}", "{\"$uid\": \"4\"}", "{\"$uid\": 1.5}", "{\"$uid\": 18446744073709551616}"])
    func jsonUIDOutsideItsRangeIsRefused(text: String) {
        #expect(throws: PlistError.self) { try PlistCodec.decode(Array(text.utf8), format: .json) }
    }
}
