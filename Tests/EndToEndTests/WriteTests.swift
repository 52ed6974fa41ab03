import Foundation
import Testing

@Suite("write")
struct WriteTests {
    static let domain = "com.example.write"

    struct ValueCase: Sendable, CustomTestStringConvertible {
        var value: [String]
        /// What plistlib must read back, as a Python expression.
        var python: String
        var type: String
        /// What `read D K` prints.
        var read: String
        var testDescription: String { value.joined(separator: " ") }
    }

    /// Each value form, checked three ways: plistlib on the file, `read-type`, `read D K`.
    @Test(arguments: [
        ValueCase(value: ["-string", "hello world"], python: "'hello world'", type: "string", read: "hello world"),
        ValueCase(value: ["-string", ""], python: "''", type: "string", read: ""),
        ValueCase(value: ["-string", "-int"], python: "'-int'", type: "string", read: "-int"),
        ValueCase(value: ["-string", "(a, b)"], python: "'(a, b)'", type: "string", read: "(a, b)"),
        ValueCase(value: ["-data", "DEADbeef"], python: "b'\\xde\\xad\\xbe\\xef'", type: "data",
                  read: "{length = 4, bytes = 0xdeadbeef}"),
        ValueCase(value: ["-data", "0abc"], python: "b'\\x0a\\xbc'", type: "data",
                  read: "{length = 2, bytes = 0x0abc}"),
        ValueCase(value: ["-data", ""], python: "b''", type: "data", read: "{length = 0, bytes = 0x}"),
        ValueCase(value: ["-int", "42"], python: "42", type: "integer", read: "42"),
        ValueCase(value: ["-integer", "-7"], python: "-7", type: "integer", read: "-7"),
        ValueCase(value: ["-int", "9223372036854775807"], python: "9223372036854775807", type: "integer",
                  read: "9223372036854775807"),
        ValueCase(value: ["-int", "-9223372036854775808"], python: "-9223372036854775808", type: "integer",
                  read: "-9223372036854775808"),
        ValueCase(value: ["-float", "0.25"], python: "0.25", type: "float", read: "0.25"),
        ValueCase(value: ["-float", "1800"], python: "1800.0", type: "float", read: "1800"),
        ValueCase(value: ["-float", "-1.5e3"], python: "-1500.0", type: "float", read: "-1500"),
        ValueCase(value: ["-float", "0.1"], python: "0.1", type: "float", read: "0.1"),
        ValueCase(value: ["-bool", "true"], python: "True", type: "boolean", read: "1"),
        ValueCase(value: ["-bool", "YES"], python: "True", type: "boolean", read: "1"),
        ValueCase(value: ["-boolean", "False"], python: "False", type: "boolean", read: "0"),
        ValueCase(value: ["-bool", "no"], python: "False", type: "boolean", read: "0"),
        ValueCase(value: ["-date", "2025-04-07 12:30:13 +0000"], python: "datetime.datetime(2025, 4, 7, 12, 30, 13)",
                  type: "date", read: "2025-04-07 12:30:13 +0000"),
        ValueCase(value: ["-date", "2025-04-07 14:30:13 +0200"], python: "datetime.datetime(2025, 4, 7, 12, 30, 13)",
                  type: "date", read: "2025-04-07 12:30:13 +0000"),
        ValueCase(value: ["-date", "2025-04-07T12:30:13Z"], python: "datetime.datetime(2025, 4, 7, 12, 30, 13)",
                  type: "date", read: "2025-04-07 12:30:13 +0000"),
        ValueCase(value: ["-array", "a", "b"], python: "['a', 'b']", type: "array", read: "(\n    a,\n    b\n)"),
        ValueCase(value: ["-array", "-int", "1", "-bool", "no", "x"], python: "[1, False, 'x']", type: "array",
                  read: "(\n    1,\n    0,\n    x\n)"),
        ValueCase(value: ["-array"], python: "[]", type: "array", read: "(\n)"),
        ValueCase(value: ["-array", "(1, (2))"], python: "[['1', ['2']]]", type: "array",
                  read: "(\n        (\n        1,\n                (\n            2\n        )\n    )\n)"),
        ValueCase(value: ["-dict", "a", "1", "b", "-int", "2"], python: "{'a': '1', 'b': 2}", type: "dictionary",
                  read: "{\n    a = 1;\n    b = 2;\n}"),
        ValueCase(value: ["-dict"], python: "{}", type: "dictionary", read: "{\n}"),
        // Untyped values are strings unless they contain one of "(){}[]<>.
        ValueCase(value: ["true"], python: "'true'", type: "string", read: "true"),
        ValueCase(value: ["42"], python: "'42'", type: "string", read: "42"),
        ValueCase(value: ["1.5"], python: "'1.5'", type: "string", read: "1.5"),
        ValueCase(value: ["two words"], python: "'two words'", type: "string", read: "two words"),
        ValueCase(value: ["\"quoted\""], python: "'quoted'", type: "string", read: "quoted"),
        ValueCase(value: ["(1, 2, three)"], python: "['1', '2', 'three']", type: "array",
                  read: "(\n    1,\n    2,\n    three\n)"),
        ValueCase(value: ["{a = 1; b = (x, y);}"], python: "{'a': '1', 'b': ['x', 'y']}", type: "dictionary",
                  read: "{\n    a = 1;\n    b =     (\n        x,\n        y\n    );\n}"),
        ValueCase(value: ["<deadbeef>"], python: "b'\\xde\\xad\\xbe\\xef'", type: "data",
                  read: "{length = 4, bytes = 0xdeadbeef}"),
    ])
    func writeStoresTypedValues(_ row: ValueCase) throws {
        let root = try TempRoot()
        try root.succeed(["write", Self.domain, "k"] + row.value)
        let file = root.domainFile(Self.domain)
        try root.expectPlist(file, key: "k", equals: row.python)
        let type = try root.succeed(["read-type", Self.domain, "k"]).stdout
        #expect(type == "Type is \(row.type)\n")
        let read = try root.succeed(["read", Self.domain, "k"]).stdout
        #expect(read == row.read + "\n")
    }

    @Test func writtenFilesAreBinaryPlists() throws {
        let root = try TempRoot()
        try root.succeed(["write", Self.domain, "k", "v"])
        let bytes = try Data(contentsOf: root.domainFile(Self.domain))
        #expect(bytes.starts(with: Data("bplist00".utf8)))
    }

    @Test func writeOfOneKeyKeepsTheOthers() throws {
        let root = try TempRoot()
        try root.succeed(["write", Self.domain, "a", "-int", "1"])
        try root.succeed(["write", Self.domain, "b", "-int", "2"])
        try root.succeed(["write", Self.domain, "a", "-string", "one"])
        try root.expectPlist(root.domainFile(Self.domain), equals: "{'a': 'one', 'b': 2}")
    }

    @Test func writeOfADictionaryRepReplacesTheDomain() throws {
        let root = try TempRoot()
        try root.succeed(["write", Self.domain, "old", "-int", "1"])
        try root.succeed(["write", Self.domain, "keep", "x"])
        try root.succeed(["write", Self.domain, "{ new = value; keep = (1); }"])
        try root.expectPlist(root.domainFile(Self.domain), equals: "{'new': 'value', 'keep': ['1']}")
    }

    @Test func arrayAddAppendsAndCreates() throws {
        let root = try TempRoot()
        try root.succeed(["write", Self.domain, "list", "-array-add", "a"])
        try root.succeed(["write", Self.domain, "list", "-array-add", "b", "-int", "3"])
        try root.expectPlist(root.domainFile(Self.domain), key: "list", equals: "['a', 'b', 3]")
    }

    @Test func dictAddAddsAndOverwritesEntries() throws {
        let root = try TempRoot()
        try root.succeed(["write", Self.domain, "map", "-dict-add", "a", "1"])
        try root.succeed(["write", Self.domain, "map", "-dict-add", "b", "-int", "2", "a", "-bool", "yes"])
        try root.expectPlist(root.domainFile(Self.domain), key: "map", equals: "{'a': True, 'b': 2}")
    }

    struct ErrorCase: Sendable, CustomTestStringConvertible {
        var arguments: [String]
        var status: Int32
        /// The exact message after `defaults: ` (for status 1), or a phrase it must
        /// contain (for status 255, where the help follows).
        var message: String
        var exact: Bool
        var testDescription: String { arguments.joined(separator: " ") }
    }

    static let d = "com.example.write"

    /// Failures of write: exact macOS texts, AppHome phrases for what macOS lacks.
    /// The domain holds `s = "text"` and `n = 1` beforehand; every file must survive.
    @Test(arguments: [
        ErrorCase(arguments: ["write", d, "justakey"], status: 1,
                  message: "Rep argument is not a dictionary\nDefaults have not been changed.", exact: true),
        ErrorCase(arguments: ["write", d, "(a, b)"], status: 1,
                  message: "Rep argument is not a dictionary\nDefaults have not been changed.", exact: true),
        ErrorCase(arguments: ["write", d, "k", "(a, b"], status: 1,
                  message: "Could not parse: (a, b due to malformed old-style property list: missing ')' at end of array at line 1, column 6.  Try single-quoting it.", exact: true),
        ErrorCase(arguments: ["write", d, "k", "{a = 1"], status: 1,
                  message: "Could not parse: {a = 1 due to malformed old-style property list: expected ';' after the value of key \"a\" at line 1, column 7.  Try single-quoting it.", exact: true),
        ErrorCase(arguments: ["write", d, "k", "-array", "a", "-array", "b"], status: 1,
                  message: "Cannot nest composite types (arrays and dictionaries); exiting", exact: true),
        ErrorCase(arguments: ["write", d, "k", "-array", "-dict", "a", "b"], status: 1,
                  message: "Cannot nest composite types (arrays and dictionaries); exiting", exact: true),
        ErrorCase(arguments: ["write", d, "k", "-dict", "a", "-array", "b"], status: 1,
                  message: "Cannot nest composite types (arrays and dictionaries); exiting", exact: true),
        ErrorCase(arguments: ["write", d, "k", "-dict", "a", "1", "b"], status: 1,
                  message: "Key b lacks a corresponding value", exact: true),
        ErrorCase(arguments: ["write", d, "s", "-array-add", "x"], status: 1,
                  message: "Value for key s is not an array; cannot append.  Leaving defaults unchanged.", exact: true),
        ErrorCase(arguments: ["write", d, "n", "-dict-add", "a", "b"], status: 1,
                  message: "Value for key n is not a dictionary; cannot add.  Leaving defaults unchanged.", exact: true),
        ErrorCase(arguments: ["write", d, "k", "-int", "1", "extra"], status: 1,
                  message: "Unexpected argument extra; leaving defaults unchanged.", exact: true),
        ErrorCase(arguments: ["write", d, "k", "plain", "extra"], status: 1,
                  message: "Unexpected argument extra; leaving defaults unchanged.", exact: true),
        ErrorCase(arguments: ["write", d, "k", "-int", "12ab"], status: 255, message: "as an integer", exact: false),
        ErrorCase(arguments: ["write", d, "k", "-int", ""], status: 255, message: "as an integer", exact: false),
        ErrorCase(arguments: ["write", d, "k", "-int", "1.5"], status: 255, message: "as an integer", exact: false),
        ErrorCase(arguments: ["write", d, "k", "-int", "18446744073709551616"], status: 255, message: "as an integer", exact: false),
        ErrorCase(arguments: ["write", d, "k", "-integer", "abc"], status: 255, message: "as an integer", exact: false),
        ErrorCase(arguments: ["write", d, "k", "-float", "abc"], status: 255, message: "as a float", exact: false),
        ErrorCase(arguments: ["write", d, "k", "-float", "1.5x"], status: 255, message: "as a float", exact: false),
        ErrorCase(arguments: ["write", d, "k", "-float", ""], status: 255, message: "as a float", exact: false),
        ErrorCase(arguments: ["write", d, "k", "-bool", "maybe"], status: 255, message: "as a boolean", exact: false),
        ErrorCase(arguments: ["write", d, "k", "-bool", "1"], status: 255, message: "as a boolean", exact: false),
        ErrorCase(arguments: ["write", d, "k", "-boolean", ""], status: 255, message: "as a boolean", exact: false),
        ErrorCase(arguments: ["write", d, "k", "-date", "next tuesday"], status: 255, message: "as a date", exact: false),
        ErrorCase(arguments: ["write", d, "k", "-date", "2025-13-45 99:00:00 +0000"], status: 255, message: "as a date", exact: false),
        ErrorCase(arguments: ["write", d, "k", "-data", "xyz0"], status: 255, message: "as hex data", exact: false),
        ErrorCase(arguments: ["write", d, "k", "-data", "0x12"], status: 255, message: "as hex data", exact: false),
        ErrorCase(arguments: ["write", d, "k", "-data", "abc"], status: 255, message: "an odd number of hex digits", exact: false),
        ErrorCase(arguments: ["write", d, "k", "\"\\UD800\""], status: 1, message: "Could not parse: \"\\UD800\" due to malformed old-style property list: unpaired UTF-16 surrogate \\UD800 in a string at line 1, column 8.  Try single-quoting it.", exact: true),
        ErrorCase(arguments: ["write", d, "k", "-array", "-int", "x"], status: 255, message: "as an integer", exact: false),
        ErrorCase(arguments: ["write", d, "k", "-dict", "a", "-bool", "x"], status: 255, message: "as a boolean", exact: false),
        ErrorCase(arguments: ["write", d, "k", "-array-add", "-float", "x"], status: 255, message: "as a float", exact: false),
    ])
    func writeFailuresLeaveEveryFileUnchanged(_ row: ErrorCase) throws {
        let root = try TempRoot()
        try root.succeed(["write", Self.d, "s", "text"])
        try root.succeed(["write", Self.d, "n", "-int", "1"])
        try root.succeed(["write", "com.example.other", "x", "y"])
        let before = root.snapshot()
        let result = try root.run(row.arguments)
        #expect(result.isFailure(row.status), "\(result)")
        if row.exact {
            #expect(result.stderr == "defaults: \(row.message)\n")
        } else {
            #expect(result.stderr.hasPrefix("defaults: "), "\(result)")
            let firstLine = result.stderr.split(separator: "\n").first.map(String.init) ?? ""
            #expect(firstLine.contains(row.message), "\(result)")
            #expect(result.stderr.split(separator: "\n").count == 2 && result.stderr.hasSuffix("Run 'defaults help write' for its usage.\n"),
                    "a usage error is its reason and one line naming the verb's help: \(result)")
        }
        root.expectUnchanged(since: before, after: row.testDescription)
    }
}
