import Foundation
import Testing

/// `read` prints macOS's old-style text byte for byte (defaults.md §1.4).
@Suite("read output format")
struct ReadFormatTests {
    static let domain = "com.example.golden"

    /// The example of defaults.md §1.4.
    static let golden = """
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

    static let goldenXML = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        <plist version="1.0">
        <dict>
            <key>zz-list</key>
            <array><dict><key>id</key><integer>1</integer></dict><dict><key>id</key><integer>2</integer></dict></array>
            <key>window</key>
            <dict><key>y</key><integer>20</integer><key>x</key><integer>10</integer></dict>
            <key>tags</key>
            <array><string>alpha</string><string>b-c</string></array>
            <key>ratio</key><real>0.5</real>
            <key>last_seen</key><date>2025-04-07T12:30:13Z</date>
            <key>enabled</key><true/>
            <key>count</key><integer>3</integer>
            <key>blob</key><data>3q2+7w==</data>
            <key>Name</key><string>My App</string>
        </dict>
        </plist>

        """

    @Test func goldenDomainBuiltByImportPrintsExactly() throws {
        let root = try TempRoot()
        let fixture = root.workFile("golden.plist")
        try root.write(Self.goldenXML, to: fixture)
        try root.succeed(["import", Self.domain, fixture.path])
        let result = try root.succeed(["read", Self.domain])
        #expect(result.stdout == Self.golden)
    }

    @Test func goldenDomainBuiltByWritesPrintsExactly() throws {
        let root = try TempRoot()
        let d = Self.domain
        try root.succeed(["write", d, "Name", "My App"])
        try root.succeed(["write", d, "blob", "-data", "DEADbeef"])
        try root.succeed(["write", d, "count", "-int", "3"])
        try root.succeed(["write", d, "enabled", "-bool", "YES"])
        try root.succeed(["write", d, "last_seen", "-date", "2025-04-07 12:30:13 +0000"])
        try root.succeed(["write", d, "ratio", "-float", "0.5"])
        try root.succeed(["write", d, "tags", "-array", "alpha", "b-c"])
        try root.succeed(["write", d, "window", "-dict", "x", "-int", "10", "y", "-int", "20"])
        try root.succeed(["write", d, "zz-list", "-array", "{id = 1;}", "{ id = 2; }"])
        let result = try root.succeed(["read", d])
        #expect(result.stdout == Self.golden)
    }

    struct KeyCase: Sendable, CustomTestStringConvertible {
        var key: String
        var output: String
        var testDescription: String { key }
    }

    /// `read D K` prints the value's own description, unquoted, collections at level 0.
    @Test(arguments: [
        KeyCase(key: "Name", output: "My App\n"),
        KeyCase(key: "blob", output: "{length = 4, bytes = 0xdeadbeef}\n"),
        KeyCase(key: "count", output: "3\n"),
        KeyCase(key: "enabled", output: "1\n"),
        KeyCase(key: "last_seen", output: "2025-04-07 12:30:13 +0000\n"),
        KeyCase(key: "ratio", output: "0.5\n"),
        KeyCase(key: "tags", output: "(\n    alpha,\n    \"b-c\"\n)\n"),
        KeyCase(key: "window", output: "{\n    x = 10;\n    y = 20;\n}\n"),
        KeyCase(key: "zz-list", output: "(\n        {\n        id = 1;\n    },\n        {\n        id = 2;\n    }\n)\n"),
    ])
    func readOfOneKeyPrintsItsDescription(_ row: KeyCase) throws {
        let root = try TempRoot()
        let fixture = root.workFile("golden.plist")
        try root.write(Self.goldenXML, to: fixture)
        try root.succeed(["import", Self.domain, fixture.path])
        let result = try root.succeed(["read", Self.domain, row.key])
        #expect(result.stdout == row.output)
    }

    struct ScalarCase: Sendable, CustomTestStringConvertible {
        /// A Python expression for the value stored under key `v`.
        var python: String
        /// The line `read D` prints for it.
        var line: String
        var testDescription: String { python }
    }

    /// Quoting and scalar rules, one entry at a time: `{\n    v = <scalar>;\n}`.
    @Test(arguments: [
        ScalarCase(python: "'plain'", line: "v = plain;"),
        ScalarCase(python: "'ABCxyz0123'", line: "v = ABCxyz0123;"),
        ScalarCase(python: "''", line: "v = \"\";"),
        ScalarCase(python: "'two words'", line: "v = \"two words\";"),
        ScalarCase(python: "'under_score'", line: "v = \"under_score\";"),
        ScalarCase(python: "'com.example.app'", line: "v = \"com.example.app\";"),
        ScalarCase(python: "'a\"b\\\\c'", line: "v = \"a\\\"b\\\\c\";"),
        ScalarCase(python: "'Safari\\u6d4f\\u89c8\\u5668'", line: "v = \"Safari\\\\U6d4f\\\\U89c8\\\\U5668\";"),
        ScalarCase(python: "0", line: "v = 0;"),
        ScalarCase(python: "42", line: "v = 42;"),
        ScalarCase(python: "-1", line: "v = \"-1\";"),
        ScalarCase(python: "9223372036854775807", line: "v = 9223372036854775807;"),
        ScalarCase(python: "True", line: "v = 1;"),
        ScalarCase(python: "False", line: "v = 0;"),
        ScalarCase(python: "0.0", line: "v = 0;"),
        ScalarCase(python: "1800.0", line: "v = 1800;"),
        ScalarCase(python: "0.25", line: "v = \"0.25\";"),
        ScalarCase(python: "2974.91796875", line: "v = \"2974.91796875\";"),
        ScalarCase(python: "640976633.129187", line: "v = \"640976633.129187\";"),
        ScalarCase(python: "datetime.datetime(2001, 1, 1, 0, 0, 0)", line: "v = \"2001-01-01 00:00:00 +0000\";"),
        ScalarCase(python: "datetime.datetime(1969, 7, 20, 20, 17, 40)", line: "v = \"1969-07-20 20:17:40 +0000\";"),
        ScalarCase(python: "b''", line: "v = {length = 0, bytes = 0x};"),
        ScalarCase(python: "bytes(range(20))",
                   line: "v = {length = 20, bytes = 0x000102030405060708090a0b0c0d0e0f10111213};"),
        ScalarCase(python: "b'bookX\\x02\\x00\\x00\\x00\\x00\\x05\\x10@\\x00\\x00\\x00' + bytes(576) + bytes.fromhex('0400000000000000')",
                   line: "v = {length = 600, bytes = 0x626f6f6b 58020000 00000510 40000000 ... 04000000 00000000 };"),
        ScalarCase(python: "bytes(range(32))",
                   line: "v = {length = 32, bytes = 0x00010203 04050607 08090a0b 0c0d0e0f ... 18191a1b 1c1d1e1f };"),
        ScalarCase(python: "[]", line: "v =     (\n    );"),
        ScalarCase(python: "{}", line: "v =     {\n    };"),
    ])
    func scalarsPrintWithMacOSQuotingRules(_ row: ScalarCase) throws {
        let root = try TempRoot()
        try root.writePlist("{'v': \(row.python)}", to: root.domainFile("com.example.scalars"))
        let result = try root.succeed(["read", "com.example.scalars"])
        #expect(result.stdout == "{\n    \(row.line)\n}\n")
    }

    @Test func keysAreSortedByCodePointAndQuotedByTheSameRule() throws {
        let root = try TempRoot()
        try root.writePlist("{'b': 1, 'B': 2, 'a': 3, '_x': 4, 'a b': 5, 'Z': 6}",
                            to: root.domainFile("com.example.keys"))
        let result = try root.succeed(["read", "com.example.keys"])
        #expect(result.stdout == """
            {
                B = 2;
                Z = 6;
                "_x" = 4;
                a = 3;
                "a b" = 5;
                b = 1;
            }

            """)
    }

    @Test func readWithoutDomainPrintsEveryDomainKeyedByName() throws {
        let root = try TempRoot()
        try root.succeed(["write", "com.example.one", "a", "-int", "1"])
        try root.succeed(["write", "two", "b", "x"])
        try root.succeed(["write", "-g", "AppleLocale", "en_US"])
        let result = try root.succeed(["read"])
        #expect(result.stdout == """
            {
                "Apple Global Domain" =     {
                    AppleLocale = "en_US";
                };
                "com.example.one" =     {
                    a = 1;
                };
                two =     {
                    b = x;
                };
            }

            """)
    }

    @Test func readsAcceptXMLAndOldStyleTextFiles() throws {
        let root = try TempRoot()
        try root.write("""
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0"><dict><key>k</key><string>from xml</string></dict></plist>
            """, to: root.domainFile("com.example.xml"))
        try root.write("{ k = \"from text\"; list = (a, b); }\n", to: root.domainFile("com.example.text"))
        try root.expectOutput(["read", "com.example.xml", "k"], "from xml\n")
        try root.expectOutput(["read", "com.example.text", "k"], "from text\n")
        try root.expectOutput(["read", "com.example.text"], """
            {
                k = "from text";
                list =     (
                    a,
                    b
                );
            }

            """)
    }
}
