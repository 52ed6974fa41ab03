import Testing
@testable import PropertyList

@Suite struct OldStyleParserTests {
    @Test func parsesDictionariesArraysStringsAndData() throws {
        let value = try OldStyleText.parse(#"{ a = 1; "b c" = (x, "y z", <dead BEEF>); d = { e = ""; }; /* c */ f = g; // end"# + "\n}")
        #expect(value == .dictionary([
            "a": .string("1"),
            "b c": .array([.string("x"), .string("y z"), .data([0xde, 0xad, 0xbe, 0xef])]),
            "d": .dictionary(["e": .string("")]),
            "f": .string("g"),
        ]))
    }

    @Test func acceptsTrailingCommaAndEmptyCollections() throws {
        #expect(try OldStyleText.parse("(a, b,)") == .array([.string("a"), .string("b")]))
        #expect(try OldStyleText.parse("()") == .array([]))
        #expect(try OldStyleText.parse("{}") == .dictionary([:]))
    }

    @Test(arguments: [
        (#""a\nb""#, "a\nb"), (#""tab\there""#, "tab\there"), (#""q\"q""#, "q\"q"), (#""\\""#, "\\"),
        (#""\U20ac""#, "€"), (#""\101""#, "A"), (#""\Ud83d\Ude00""#, "😀"),
    ])
    func decodesEscapes(literal: String, expected: String) throws {
        #expect(try OldStyleText.parse(literal) == .string(expected))
    }

    @Test func readsStringsFilesWithoutBraces() throws {
        #expect(try OldStyleText.parse("\"Title\" = \"Titel\";\nOK = \"Gut\";\n") == .dictionary(["Title": .string("Titel"), "OK": .string("Gut")]))
    }

    @Test(arguments: [
        "{ a = 1 }", "{ a 1; }", "(a b)", "(a, ", "\"open", "<abc>", "<zz>", "{ a = 1; } extra", "", ")",
    ])
    func rejectsMalformedText(text: String) {
        #expect(throws: PlistError.self) { try OldStyleText.parse(text) }
    }

    @Test(arguments: ["\"\\UD800\"", "\"\\UDC00\"", "\"\\UD800x\"", "\"\\UD83D\\U0041\""])
    func refusesAnUnpairedSurrogateEscapeInsteadOfStoringU_FFFD(_ text: String) {
        #expect(throws: PlistError.self) { try OldStyleText.parse(text) }
    }

    @Test(arguments: [
        ("a stray byte in a quoted value", Array("{ k = \"v".utf8) + [0xFF] + Array("\"; }".utf8), "line 1, column 9"),
        ("a Latin-1 byte in an unquoted key", Array("{\n  k".utf8) + [0xE9] + Array(" = v; }".utf8), "line 2, column 4"),
        ("an encoded surrogate", Array("( \"".utf8) + [0xED, 0xA0, 0x80] + Array("\" )".utf8), "line 1, column 4"),
        ("an overlong slash in a .strings file", Array("\"a\" = \"x".utf8) + [0xC0, 0xAF] + Array("\";".utf8), "line 1, column 9"),
        ("a truncated sequence", Array("\"ok é".utf8) + [0xE2, 0x82] + Array("\"".utf8), "line 1, column 7"),
    ])
    func refusesTextThatIsNotUTF8InsteadOfStoringU_FFFD(_ name: String, _ bytes: [UInt8], at: String) {
        #expect(throws: PlistError.malformed(format: "old-style", detail: "string is not valid UTF-8 at \(at)")) {
            try PlistCodec.decode(bytes, format: .openStep)
        }
    }

    @Test func readsASurrogatePairEscape() throws {
        #expect(try OldStyleText.parse("\"\\UD83D\\UDE00\"") == .string("\u{1F600}"))
    }

    @Test func reportsLineAndColumn() {
        #expect(throws: PlistError.malformed(format: "old-style", detail: "expected ';' after the value of key \"b\" at line 2, column 7")) {
            try OldStyleText.parse("{ a = 1;\nb = 2 }")
        }
    }

    @Test func refusesNestingBeyondTheLimit() {
        let deep = String(repeating: "(", count: PlistValue.maximumDepth + 1) + String(repeating: ")", count: PlistValue.maximumDepth + 1)
        #expect(throws: PlistError.tooDeep(limit: PlistValue.maximumDepth)) { try OldStyleText.parse(deep) }
        let ok = String(repeating: "(", count: 1000) + String(repeating: ")", count: 1000)
        #expect(throws: Never.self) { try OldStyleText.parse(ok) }
    }

    @Test func unescapesPlainValues() throws {
        #expect(try OldStyleText.unescape(#"a\tb"#) == "a\tb")
        #expect(try OldStyleText.unescape("plain") == "plain")
    }
}
