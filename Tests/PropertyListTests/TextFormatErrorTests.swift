import PropertyList
import Testing

/// Malformed XML and JSON: each case throws `PlistError.malformed` whose
/// detail starts with the line and column.
@Suite struct TextFormatErrorTests {
    static let prolog = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        <plist version="1.0">

        """

    static let badXML: [(String, String, String)] = [
        ("unclosed tag", "<dict>\n\t<key>a</key>\n\t<string>x</string>\n</plist>\n", "line 4"),
        ("bad integer", "<integer>12a</integer>\n</plist>", "is not an integer"),
        ("integer above UInt64.max", "<integer>18446744073709551616</integer>\n</plist>", "is not an integer"),
        ("integer below Int64.min", "<integer>-9223372036854775809</integer>\n</plist>", "is not an integer"),
        ("bad real", "<real>1.2.3</real>\n</plist>", "is not a real"),
        ("bad base64", "<data>AB$=</data>\n</plist>", "base64"),
        ("bad date", "<date>2024-02-30T00:00:00Z</date>\n</plist>", "is not a date"),
        ("date without Z", "<date>2024-01-01T00:00:00</date>\n</plist>", "is not a date"),
        ("key without value", "<dict>\n\t<key>a</key>\n</dict>\n</plist>", "has no value"),
        ("value without key", "<dict>\n\t<string>a</string>\n</dict>\n</plist>", "where a <key> was expected"),
        ("key in array", "<array><key>a</key></array>\n</plist>", "<key> inside <array>"),
        ("unknown element", "<widget/>\n</plist>", "unknown element"),
        ("unknown entity", "<string>&nbsp;</string>\n</plist>", "unknown entity"),
        ("text between elements", "<array>x<true/></array>\n</plist>", "text where an element"),
        ("element inside string", "<string>a<b/></string>\n</plist>", "element inside <string>"),
        ("mismatched end tag", "<array></dict>\n</plist>", "does not close"),
        ("empty plist", "</plist>", "holds no value"),
        ("content after the end", "<true/>\n</plist>\n<true/>", "content after"),
        ("unterminated comment", "<!-- <true/>\n</plist>", "unterminated comment"),
    ]

    @Test(arguments: badXML)
    func malformedXMLThrowsWithPosition(name: String, body: String, expected: String) {
        let bytes = Array((Self.prolog + body).utf8)
        do {
            let value = try PlistCodec.decode(bytes)
            Issue.record("\(name): decoded \(value)")
        } catch {
            guard case .malformed(let format, let detail) = error else {
                Issue.record("\(name): unexpected \(error)")
                return
            }
            #expect(format == "XML")
            #expect(detail.hasPrefix("line "), "\(name): \(detail)")
            #expect(detail.contains(expected), "\(name): \(detail)")
        }
    }

    @Test func xmlErrorPointsAtTheLineAndColumn() {
        let bytes = Array((Self.prolog + "<dict>\n\t<key>n</key>\n\t<integer>x</integer>\n</dict>\n</plist>\n").utf8)
        #expect(throws: PlistError.malformed(format: "XML", detail: "line 6, column 2: \"x\" is not an integer between -9223372036854775808 and 18446744073709551615")) {
            try PlistCodec.decode(bytes)
        }
    }

    /// swift-foundation's tests expect an internal DTD subset refused: its entity
    /// declarations could expand without bound or change the document's meaning.
    @Test(arguments: [
        "<!DOCTYPE plist [ <!ENTITY x \"y\"> ]>",
        "<!DOCTYPE plist PUBLIC \"-//Apple//DTD PLIST 1.0//EN\" \"x.dtd\" [\n<!ENTITY a \"aaaa\">\n]>",
        "<!DOCTYPE plist[]>",
    ])
    func xmlRefusesAnInternalDTDSubset(doctype: String) {
        let text = "<?xml version=\"1.0\"?>\n" + doctype + "\n<plist version=\"1.0\"><string>&a;</string></plist>\n"
        #expect(throws: PlistError.self) { try PlistCodec.decode(Array(text.utf8)) }
        do {
            _ = try PlistCodec.decode(Array(text.utf8))
        } catch {
            #expect(error.description.contains("<!DOCTYPE> with an internal subset ([ … ]) is not allowed in a property list"), "\(error)")
        }
    }

    @Test func xmlToleratesCommentsEntitiesAndCDATA() throws {
        let text = """
            \u{FEFF}<?xml version="1.0"?>
            <!-- leading comment -->
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <plist version="1.0"><!-- c --><dict>
              <key>a&amp;b</key> <!-- between --> <string>&lt;&#65;&#x1F642;<![CDATA[<raw>&]]>&gt;</string>
              <key>n</key><integer> 0x1F </integer>
              <key>neg</key><integer>-0x10</integer>
              <key>r</key><real>-Infinity</real>
              <key>t</key><true></true>
              <key>d</key><date>12345-01-01T00:00:00.5Z</date>
              <key>data</key><data>
                AQID
                BA==
              </data>
              <key>crlf</key><string>a\r\nb\rc&#13;</string>
            </dict></plist>
            """
        let value = try PlistCodec.decode(Array(text.utf8))
        guard case .dictionary(let d) = value else {
            Issue.record("not a dictionary: \(value)")
            return
        }
        #expect(d["a&b"] == .string("<A🙂<raw>&>"))
        #expect(d["n"] == .integer(31))
        #expect(d["neg"] == .integer(-16))
        #expect(d["r"] == .real(-.infinity))
        #expect(d["t"] == .bool(true))
        #expect(d["data"] == .data([1, 2, 3, 4]))
        #expect(d["crlf"] == .string("a\nb\nc\r"))
        let expectedDate = PlistDate(secondsSinceReferenceDate: CivilTime(year: 12345, month: 1, day: 1).date.secondsSinceReferenceDate + 0.5)
        #expect(d["d"] == .date(expectedDate))
    }

    @Test func xmlWriterMatchesApplesLayout() throws {
        let value = PlistValue.dictionary([
            "b": .array([]),
            "a": .data(Array(repeating: 0, count: 60)),
            "c": .date(PlistDate(secondsSinceReferenceDate: 0)),
            "d": .real(.infinity),
            "e": .string("x < y & z"),
        ])
        let text = String(decoding: try PlistCodec.encode(value, format: .xml), as: UTF8.self)
        #expect(text == """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <plist version="1.0">
            <dict>
            \t<key>a</key>
            \t<data>
            \tAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA
            \tAAAAAAAAAAAA
            \t</data>
            \t<key>b</key>
            \t<array/>
            \t<key>c</key>
            \t<date>2001-01-01T00:00:00Z</date>
            \t<key>d</key>
            \t<real>+infinity</real>
            \t<key>e</key>
            \t<string>x &lt; y &amp; z</string>
            </dict>
            </plist>

            """)
    }

    static let badJSON: [(String, String)] = [
        ("null", "null"),
        ("null in array", "[1, null]"),
        ("unknown tag", "{\"$foo\": 1}"),
        ("bad $real", "{\"$real\": \"big\"}"),
        ("bad $date", "{\"$date\": \"yesterday\"}"),
        ("bad $data", "{\"$data\": \"!!\"}"),
        ("$dict of a non-object", "{\"$dict\": 1}"),
        ("integer too big", "18446744073709551616"),
        ("leading zero", "01"),
        ("trailing comma", "[1,]"),
        ("unterminated string", "\"abc"),
        ("lone surrogate escape", "\"\\ud800\""),
        ("duplicate key", "{\"a\": 1, \"a\": 2}"),
        ("trailing garbage", "{} x"),
        ("raw control character", "\"a\u{1}b\""),
    ]

    @Test(arguments: badJSON)
    func malformedJSONThrows(name: String, text: String) {
        #expect(throws: PlistError.self, "\(name)") { try PlistCodec.decode(Array(text.utf8), format: .json) }
    }

    @Test func jsonWriterFollowsTheSchema() throws {
        let value = PlistValue.dictionary([
            "int": .integer(-1),
            "real": .real(1),
            "tiny": .real(1e-7),
            "nan": .real(.nan),
            "date": .date(PlistDate(secondsSinceReferenceDate: 0.25)),
            "data": .data([1, 2, 3]),
            "tagged": .dictionary(["$x": .bool(true)]),
            "list": .array([.string("a\"\n")]),
        ])
        let text = String(decoding: try PlistCodec.encode(value, format: .json), as: UTF8.self)
        #expect(text == """
            {
              "data": {"$data": "AQID"},
              "date": {"$date": "2001-01-01T00:00:00.25Z"},
              "int": -1,
              "list": [
                "a\\"\\n"
              ],
              "nan": {"$real": "nan"},
              "real": 1.0,
              "tagged": {
                "$dict": {
                  "$x": true
                }
              },
              "tiny": 1e-07
            }

            """)
    }

    @Test func jsonReaderTakesPlainJSON() throws {
        let value = try PlistCodec.decode(Array("{\"a\": [1, 2.0, -0, true, \"\\u00e9\\ud83d\\ude42\"]}".utf8), format: .json)
        #expect(value == .dictionary(["a": .array([.integer(1), .real(2), .integer(0), .bool(true), .string("é🙂")])]))
    }
}
