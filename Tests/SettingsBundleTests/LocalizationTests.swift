import PropertyList
import Testing
@testable import SettingsBundle

@Suite struct LocalizationTests {
    /// (available .lproj, preferred languages, development region, chosen)
    static let choices: [([String], [String], String, String?)] = [
        (["en.lproj", "fr.lproj"], ["fr"], "en", "fr.lproj"),
        (["en.lproj", "fr.lproj"], ["en-GB"], "fr", "en.lproj"),
        (["en.lproj", "en-GB.lproj"], ["en-GB"], "en", "en-GB.lproj"),
        (["de.lproj", "fr.lproj"], ["it", "fr-CA", "de"], "en", "fr.lproj"),
        (["zh-Hans.lproj", "en.lproj"], ["zh_Hans"], "en", "zh-Hans.lproj"),
        (["zh_CN.lproj", "en.lproj"], ["zh-CN"], "en", "zh_CN.lproj"),
        (["zh-Hans.lproj", "en.lproj"], ["zh-CN"], "en", "en.lproj"),
        (["nb.lproj", "en.lproj"], ["nb_NO"], "en", "nb.lproj"),
        (["de.lproj", "fr.lproj"], ["ja"], "fr", "fr.lproj"),
        (["Base.lproj", "de.lproj"], ["ja"], "en", "Base.lproj"),
        (["de.lproj"], ["ja"], "en", nil),
    ]

    @Test(arguments: choices.indices)
    func languageFallsBackAsSettingsDoes(index: Int) {
        let (available, preferred, region, chosen) = Self.choices[index]
        #expect(Localization.choose(available: available, preferred: preferred, developmentRegion: region) == chosen)
    }

    static func utf16(_ s: String, littleEndian: Bool, bom: Bool = true) -> [UInt8] {
        var out: [UInt8] = bom ? (littleEndian ? [0xFF, 0xFE] : [0xFE, 0xFF]) : []
        for u in s.utf16 {
            let (lo, hi) = (UInt8(u & 0xFF), UInt8(u >> 8))
            out += littleEndian ? [lo, hi] : [hi, lo]
        }
        return out
    }

    static let table = "/* comment */\n\"Sort\" = \"Tri\";\n// line\n\"Quote\" = \"a \\\"b\\\" \\U00e9\";\n"
    static let expected: [String: String] = ["Sort": "Tri", "Quote": "a \"b\" é"]

    @Test func stringsTablesDecodeInEveryEncoding() throws {
        #expect(try StringsTable.decode(Array(Self.table.utf8)).strings == Self.expected)
        #expect(try StringsTable.decode([0xEF, 0xBB, 0xBF] + Array(Self.table.utf8)).strings == Self.expected)
        #expect(try StringsTable.decode(Self.utf16(Self.table, littleEndian: true)).strings == Self.expected)
        #expect(try StringsTable.decode(Self.utf16(Self.table, littleEndian: false)).strings == Self.expected)
        let guessed = try StringsTable.decode(Self.utf16(Self.table, littleEndian: true, bom: false))
        #expect(guessed.strings == Self.expected)
        #expect(guessed.guessedEncoding == "UTF-16LE")
    }

    @Test func plistFormStringsTablesDecode() throws {
        let dict: PlistValue = .dictionary(["Sort": "Tri"])
        #expect(try StringsTable.decode(try PlistCodec.encode(dict, format: .xml)).strings == ["Sort": "Tri"])
        #expect(try StringsTable.decode(try PlistCodec.encode(dict, format: .binary)).strings == ["Sort": "Tri"])
    }

    @Test func aByteOrderMarkAloneIsAnEmptyTable() throws {
        #expect(try StringsTable.decode([0xFF, 0xFE]).strings == [:])
        #expect(try StringsTable.decode([0xEF, 0xBB, 0xBF]).strings == [:])
        #expect(try StringsTable.decode(Array("/* nothing */\n".utf8)).strings == [:])
    }

    @Test func badTablesThrowWithALine() {
        #expect(throws: PlistError.malformed(format: "old-style", detail: "unexpected character ';' at line 2, column 7")) {
            try StringsTable.decode(Array("\"a\" = \"b\";\n\"c\" = ;".utf8))
        }
    }

    @Test func titlesAreLookedUpInTheChosenLanguageAndIdiomTable() throws {
        let dir = BundleDirectory([
            "Root.plist": Rows.page([Rows.group("Sort")], ["StringsTable": "Root"]),
            "en.lproj/Root.strings": "\"Sort\" = \"Sort order\";",
            "fr.lproj/Root.strings": .data(Self.utf16("\"Sort\" = \"Ordre\";", littleEndian: true)),
            "fr.lproj/Root~ipad.strings": "\"Sort\" = \"Ordre (iPad)\";",
        ])
        let fr = Localization(bundle: dir.bundle, preferredLanguages: ["fr-FR"])
        #expect(fr.lproj == "fr.lproj")
        #expect(fr.localized("Sort", table: "Root") == "Ordre")
        #expect(fr.localized("Missing", table: "Root") == "Missing")
        #expect(fr.localized("Sort", table: nil) == "Sort")
        #expect(Localization(bundle: dir.bundle, preferredLanguages: ["fr"], idiom: .pad).localized("Sort", table: "Root") == "Ordre (iPad)")
        #expect(Localization(bundle: dir.bundle, preferredLanguages: ["ja"]).localized("Sort", table: "Root") == "Sort order")
    }
}
