import Testing
@testable import SettingsBundle

@Suite struct DuplicateKeyTests {
    static let strings: [(String, [String])] = [
        ("\"a\" = \"1\";\n\"b\" = \"2\";", []),
        ("\"a\" = \"1\";\n\"a\" = \"2\";\n\"a\" = \"3\";", ["a"]),
        ("/* \"a\" = \"x\"; */ \"a\" = \"1\"; // \"a\" = \"y\";\n\"b\" = \"a\";", []),
        ("\"q\\\"\" = \"1\"; \"q\\\"\" = \"2\"; plain = x; plain = y;", ["q\"", "plain"]),
    ]

    @Test(arguments: strings.indices)
    func stringsDuplicatesAreFoundOutsideComments(index: Int) {
        let (text, expected) = Self.strings[index]
        #expect(DuplicateKeys.inStrings(Array(text.utf8)) == expected)
    }

    @Test func xmlDuplicatesCarryTheirPath() {
        let xml = """
        <?xml version="1.0"?><!-- <dict><key>x</key><key>x</key></dict> -->
        <plist version="1.0"><dict>
          <key>A</key><string>1</string>
          <key>L</key><array><string/><dict><key>k</key><true/><key>k</key><false/></dict><dict/></array>
          <key>a&amp;b</key><integer>1</integer><key>a&amp;b</key><integer>2</integer>
          <key>D</key><dict><key>k</key><data>AA==</data></dict>
          <key>A</key><string>2</string>
        </dict></plist>
        """
        #expect(DuplicateKeys.inXML(Array(xml.utf8)) == [
            .init(path: [.key("L"), .index(1)], key: "k"),
            .init(path: [], key: "a&b"),
            .init(path: [], key: "A"),
        ])
    }
}
