import Testing
@testable import PropertyList

@Suite struct OldStylePrinterTests {
    /// The synthetic domain of defaults.md §1.4, printed byte for byte.
    @Test func printsTheReferenceExampleExactly() throws {
        let lastSeen = try #require(ScalarParsing.date("2025-04-07 12:30:13 +0000"))
        let domain: [PlistKey: PlistValue] = [
            "Name": .string("My App"),
            "blob": .data([0xDE, 0xAD, 0xBE, 0xEF]),
            "count": .integer(3),
            "enabled": .bool(true),
            "last_seen": .date(lastSeen),
            "ratio": .real(0.5),
            "tags": .array([.string("alpha"), .string("b-c")]),
            "window": .dictionary(["x": .integer(10), "y": .integer(20)]),
            "zz-list": .array([.dictionary(["id": .integer(1)]), .dictionary(["id": .integer(2)])]),
        ]
        let expected = """
        {
            Name = "My App";
            blob = {length = 4, bytes = 0xdeadbeef};
            count = 3;
            enabled = 1;
            "last_seen" = "2025-04-07 12:30:13 +0000";
            ratio = "0.5";
            tags =     (
                alpha,
                "b-c"
            );
            window =     {
                x = 10;
                y = 20;
            };
            "zz-list" =     (
                        {
                    id = 1;
                },
                        {
                    id = 2;
                }
            );
        }
        """
        #expect(OldStylePrinter.describe(.dictionary(domain)) == expected)
    }

    @Test(arguments: [
        ("abc", "abc"), ("ABC123", "ABC123"), ("", "\"\""), ("a b", "\"a b\""), ("a_b", "\"a_b\""),
        ("-1", "\"-1\""), ("say \"hi\"", "\"say \\\"hi\\\"\""), ("back\\slash", "\"back\\\\slash\""),
        ("line\nbreak", "\"line\\nbreak\""), ("Safari浏览器", "\"Safari\\\\U6d4f\\\\U89c8\\\\U5668\""),
    ])
    func quotesExactlyWhenMacOSQuotes(input: String, expected: String) {
        #expect(OldStylePrinter.quoted(input) == expected)
    }

    @Test(arguments: [
        (0.0, "0"), (1800.0, "1800"), (0.25, "0.25"), (2974.91796875, "2974.91796875"),
        (640976633.129187, "640976633.129187"), (-1.5, "-1.5"),
    ])
    func printsRealsInShortestFormWithoutTrailingZero(value: Double, expected: String) {
        #expect(OldStylePrinter.realText(value) == expected)
    }

    @Test func shortensLongDataLikeMacOS() {
        var bytes = [UInt8](repeating: 0, count: 600)
        bytes.replaceSubrange(0..<16, with: [0x62, 0x6f, 0x6f, 0x6b, 0x58, 0x02, 0, 0, 0, 0, 0x05, 0x10, 0x40, 0, 0, 0])
        bytes.replaceSubrange(592..<600, with: [4, 0, 0, 0, 0, 0, 0, 0])
        #expect(OldStylePrinter.dataText(bytes) == "{length = 600, bytes = 0x626f6f6b 58020000 00000510 40000000 ... 04000000 00000000 }")
        #expect(OldStylePrinter.dataText([]) == "{length = 0, bytes = 0x}")
        #expect(OldStylePrinter.dataText([UInt8](repeating: 0xab, count: 24)) == "{length = 24, bytes = 0x" + String(repeating: "ab", count: 24) + "}")
    }

    @Test func printsEmptyCollectionsAndTopLevelValues() {
        #expect(OldStylePrinter.describe(.dictionary([:])) == "{\n}")
        #expect(OldStylePrinter.describe(.dictionary(["a": .array([])])) == "{\n    a =     (\n    );\n}")
        #expect(OldStylePrinter.describeTopLevel(.string("Dark mode")) == "Dark mode")
        #expect(OldStylePrinter.describeTopLevel(.date(PlistDate(secondsSinceReferenceDate: 0))) == "2001-01-01 00:00:00 +0000")
        #expect(OldStylePrinter.describeTopLevel(.array([.integer(1), .bool(false)])) == "(\n    1,\n    0\n)")
    }

    @Test func sortsKeysByCodePoint() {
        let text = OldStylePrinter.describe(.dictionary(["b": .integer(1), "B": .integer(2), "a": .integer(3), "_x": .integer(4)]))
        #expect(text == "{\n    B = 2;\n    \"_x\" = 4;\n    a = 3;\n    b = 1;\n}")
    }

    @Test func printsDeepNestingWithoutCrashing() {
        var value = PlistValue.integer(1)
        for _ in 0..<1000 { value = .array([value]) }
        let text = OldStylePrinter.describe(value)
        #expect(text.hasPrefix("(\n"))
        #expect(text.filter { $0 == "(" }.count == 1000)
    }
}
