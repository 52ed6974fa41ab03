import AppHomeSystem
import Testing
import CommandSupport
import Preferences
import PropertyList
@testable import DefaultsCommand

/// Runs `defaults` in process against one in-memory store.
final class Harness {
    let store = InMemoryPreferenceStore(hostIdentifier: "11111111-2222-4333-8444-555555555555")

    struct Result { var status: Int32; var out: String; var err: String }

    @discardableResult
    func run(_ args: String..., input: String = "") -> Result {
        let console = CapturingConsole(input: Array(input.utf8))
        let status = DefaultsCommand.run(args, configuration: Configuration(root: "/nonexistent-home/.local/share/apphome"), console: console, makeStore: { _ in self.store })
        return Result(status: status, out: console.standardOutput, err: console.standardError)
    }

    func stored(_ domain: String) -> [PlistKey: PlistValue]? {
        try? store.read(try! Domain(argument: domain))
    }
}

@Suite struct DefaultsWriteTests {
    @Test(arguments: [
        (["-string", "hello"], PlistValue.string("hello")),
        (["-int", "-42"], .integer(-42)),
        (["-integer", "18446744073709551615"], .integer(Int128(UInt64.max))),
        (["-float", "0.25"], .real(0.25)),
        (["-bool", "YES"], .bool(true)),
        (["-boolean", "false"], .bool(false)),
        (["-data", "DEADbeef"], .data([0xde, 0xad, 0xbe, 0xef])),
        (["-date", "2001-01-01 00:00:00 +0000"], .date(PlistDate(secondsSinceReferenceDate: 0))),
        (["true"], .string("true")),
        (["42"], .string("42")),
        (["(a, (b))"], .array([.string("a"), .array([.string("b")])])),
        (["{x = 1;}"], .dictionary(["x": .string("1")])),
        (["-array", "-int", "1", "two", "-bool", "no"], .array([.integer(1), .string("two"), .bool(false)])),
        (["-array"], .array([])),
        (["-dict", "a", "-int", "1", "b", "x"], .dictionary(["a": .integer(1), "b": .string("x")])),
    ])
    func writesEveryValueKind(arguments: [String], expected: PlistValue) {
        let h = Harness()
        let r = DefaultsCommand.run(["write", "com.t", "k"] + arguments, configuration: Configuration(root: "/nonexistent-home/.local/share/apphome"), console: CapturingConsole(), makeStore: { _ in h.store })
        #expect(r == 0)
        #expect(h.stored("com.t")?["k"] == expected)
    }

    @Test func replacesTheWholeDomainWithADictionaryLiteral() {
        let h = Harness()
        h.run("write", "com.t", "old", "1")
        #expect(h.run("write", "com.t", "{ new = 2; }").status == 0)
        #expect(h.stored("com.t") == ["new": .string("2")])
    }

    @Test func appendsAndAddsToCollections() {
        let h = Harness()
        h.run("write", "com.t", "list", "-array-add", "a")
        h.run("write", "com.t", "list", "-array-add", "b", "-int", "3")
        #expect(h.stored("com.t")?["list"] == .array([.string("a"), .string("b"), .integer(3)]))
        h.run("write", "com.t", "d", "-dict-add", "x", "1")
        h.run("write", "com.t", "d", "-dict-add", "y", "2", "x", "3")
        #expect(h.stored("com.t")?["d"] == .dictionary(["x": .string("3"), "y": .string("2")]))
    }

    @Test func writesThroughKeyPaths() {
        let h = Harness()
        #expect(h.run("--key-path", "write", "com.t", "window:frame:x", "-int", "5").status == 0)
        #expect(h.stored("com.t")?["window"] == .dictionary(["frame": .dictionary(["x": .integer(5)])]))
        #expect(h.run("--key-path", "read", "com.t", "window:frame:x").out == "5\n")
        #expect(h.run("--key-path", "delete", "com.t", "window:frame:x").status == 0)
        #expect(h.stored("com.t")?["window"] == .dictionary(["frame": .dictionary([:])]))
    }
}

@Suite struct DefaultsReadTests {
    @Test func readsDomainsKeysAndTypes() {
        let h = Harness()
        h.run("write", "com.t", "name", "-string", "Dark mode")
        h.run("write", "com.t", "n", "-int", "3")
        #expect(h.run("read", "com.t", "name").out == "Dark mode\n")
        #expect(h.run("READ", "com.t").out == "{\n    n = 3;\n    name = \"Dark mode\";\n}\n")
        #expect(h.run("read-type", "com.t", "n").out == "Type is integer\n")
        #expect(h.run("Read-Type", "com.t", "name").out == "Type is string\n")
    }

    @Test func readsAllDomainsWithTheGlobalDomainNamedAsMacOSDoes() {
        let h = Harness()
        h.run("write", "com.a", "k", "1")
        h.run("write", "-g", "g", "2")
        #expect(h.run("read").out == "{\n    \"Apple Global Domain\" =     {\n        g = 2;\n    };\n    \"com.a\" =     {\n        k = 1;\n    };\n}\n")
    }

    @Test func printsLosslessFormats() {
        let h = Harness()
        h.run("write", "com.t", "r", "-float", "1")
        let json = h.run("--format", "json", "read", "com.t", "r")
        #expect(json.status == 0)
        #expect(json.out == "1.0\n")
        let xml = h.run("--format=xml", "read", "com.t")
        #expect(xml.out == """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <plist version="1.0">
            <dict>
            \t<key>r</key>
            \t<real>1</real>
            </dict>
            </plist>

            """)
        #expect(h.run("--format", "json", "export", "com.t", "-").out == "{\n  \"r\": 1.0\n}\n")
    }

    @Test func listsAndFindsDomains() {
        let h = Harness()
        h.run("write", "com.b", "color", "blue")
        h.run("write", "com.a", "shade", "dark blue")
        h.run("write", "com.a", "other", "x")
        #expect(h.run("domains").out == "com.a, com.b\n")
        #expect(h.run("find", "BLUE").out == "Found 1 keys in domain 'com.a': {\n    shade = \"dark blue\";\n}\nFound 1 keys in domain 'com.b': {\n    color = blue;\n}\n")
        let none = h.run("find", "zebra")
        #expect(none.status == 0)
        #expect(none.err == "defaults: No domain, key, nor value containing 'zebra'\n")
    }

    @Test func helpGoesToStandardOutputWithStatusZero() {
        let h = Harness()
        let r = h.run("help")
        #expect(r.status == 0)
        #expect(r.out.hasPrefix("Command line interface to a user's defaults.\nSyntax:\n"))
        #expect(r.out.contains("  delete-all <domain> <key>            deletes key in domain from all containers\n"))
        #expect(r.out.contains("  -float  <floating-point_value>\n"))
        #expect(r.err.isEmpty)
    }
}

/// Every error: its exact message, its exit status, and that nothing changed.
@Suite struct DefaultsErrorMessageTests {
    static let cases: [([String], String, Int32)] = [
        (["read", "com.none"], "Domain com.none does not exist", 1),
        (["read", "com.t", "nope"], "The domain/default pair of (com.t, nope) does not exist", 1),
        (["read", "-g"], "Domain Apple Global Domain does not exist", 1),
        (["read-type", "com.t", "nope"], "The domain/default pair of (com.t, nope) does not exist", 1),
        (["delete", "com.none"], "Domain (com.none) not found.\nDefaults have not been changed.", 1),
        (["delete", "com.t", "nope"], "Domain (com.t) not found.\nDefaults have not been changed.", 1),
        (["write", "com.t", "(a, b)"], "Rep argument is not a dictionary\nDefaults have not been changed.", 1),
        (["write", "com.t", "k", "(a, "], "Could not parse: (a,  due to malformed old-style property list: unexpected end of input at line 1, column 5.  Try single-quoting it.", 1),
        (["write", "com.t", "k", "-array", "-array", "x"], "Cannot nest composite types (arrays and dictionaries); exiting", 1),
        (["write", "com.t", "k", "-dict", "a"], "Key a lacks a corresponding value", 1),
        (["write", "com.t", "k", "-dict", "-int", "1"], "Dictionary keys must be strings", 1),
        (["write", "com.t", "existing", "-array-add", "x"], "Value for key existing is not an array; cannot append.  Leaving defaults unchanged.", 1),
        (["write", "com.t", "existing", "-dict-add", "x", "y"], "Value for key existing is not a dictionary; cannot add.  Leaving defaults unchanged.", 1),
        (["write", "com.t", "k", "-string", "a", "b"], "Unexpected argument b; leaving defaults unchanged.", 1),
        (["rename", "com.t", "nope", "new"], "Key nope does not exist in domain com.t; leaving defaults unchanged", 1),
        (["import", "com.t"], "Need a path to read from", 1),
        (["export", "com.t"], "Need a path to write to", 1),
        (["export", "com.none", "-"], "The domain com.none does not exist", 1),
        (["write", "../evil", "k", "v"], "Invalid domain name \"../evil\": a domain name must not contain '..'", 1),
        (["write", "a/b", "k", "v"], "Invalid domain name \"a/b\": a domain name must not contain '/' (give an absolute path for a file)", 1),
        (["read", "-app", "Safari"], "Couldn't find an application named \"Safari\"; defaults unchanged", 1),
        (["read", "-app"], "Couldn't find an application named \"\"; defaults unchanged", 1),
        (["write", "-app", "Safari", "k", "v"], "Couldn't find an application named \"Safari\"; defaults unchanged", 1),
        (["write", "", "k", "v"], "Invalid domain name \"\": a domain name must not be empty", 1),
    ]

    @Test(arguments: cases)
    func reportsTheExactMessage(arguments: [String], message: String, status: Int32) {
        let h = Harness()
        h.run("write", "com.t", "existing", "-int", "1")
        let before = h.stored("com.t")
        let console = CapturingConsole()
        let result = DefaultsCommand.run(arguments, configuration: Configuration(root: "/nonexistent-home/.local/share/apphome"), console: console, makeStore: { _ in h.store })
        #expect(result == status)
        #expect(console.standardError == "defaults: \(message)\n")
        #expect(console.standardOutput.isEmpty)
        #expect(h.stored("com.t") == before)
    }

    static let usageCases: [([String], String)] = [
        ([], "missing verb"),
        (["frobnicate"], "unknown verb frobnicate"),
        (["--bogus", "read"], "unknown option --bogus"),
        (["--format", "yaml", "read"], "unknown format \"yaml\" for --format (use text, xml or json)"),
        (["write", "com.t"], "write needs a key and a value, or a dictionary"),
        (["write", "com.t", "k", "-int", "12ab"], "Could not parse \"12ab\" as an integer"),
        (["write", "com.t", "k", "-int", "99999999999999999999"], "Could not parse \"99999999999999999999\" as an integer"),
        (["write", "com.t", "k", "-float", "fast"], "Could not parse \"fast\" as a float"),
        (["write", "com.t", "k", "-bool", "maybe"], "Could not parse \"maybe\" as a boolean"),
        (["write", "com.t", "k", "-date", "yesterday"], "Could not parse \"yesterday\" as a date"),
        (["write", "com.t", "k", "-data", "xyz"], "Could not parse \"xyz\" as hex data"),
        (["write", "com.t", "k", "-data", "abc"], "Could not parse \"abc\" as hex data: an odd number of hex digits"),
        (["write", "com.t", "k", "-int"], "-int needs a value"),
        (["read-type", "com.t"], "read-type needs a domain and a key"),
        (["rename", "com.t", "a"], "rename needs a domain, an old key and a new key"),
        (["find"], "find needs a word"),
    ]

    @Test(arguments: usageCases)
    func usageErrorsExit255WithOneLinePointingAtTheHelp(arguments: [String], messageStart: String) {
        let h = Harness()
        h.run("write", "com.t", "existing", "-int", "1")
        let console = CapturingConsole()
        let result = DefaultsCommand.run(arguments, configuration: Configuration(root: "/nonexistent-home/.local/share/apphome"), console: console, makeStore: { _ in h.store })
        #expect(result == 255)
        #expect(console.standardError.hasPrefix("defaults: \(messageStart)"))
        // The reason, then one line naming the verb's help (or the list of verbs when there is no verb).
        // A bare `defaults` shows the whole help instead, as on macOS.
        let lines = console.standardError.split(separator: "\n")
        let verb = arguments.first.flatMap { $0.hasPrefix("-") ? nil : DefaultsCommand.reference.verb($0)?.name }
        if arguments.isEmpty {
            #expect(console.standardError.contains("Command line interface to a user's defaults."))
        } else {
            #expect(lines.count == 2, "\(console.standardError)")
            #expect(lines.last.map(String.init) == (verb.map { "Run 'defaults help \($0)' for its usage." } ?? "Run 'defaults help' for the list of verbs."),
                    "\(console.standardError)")
        }
        #expect(console.standardOutput.isEmpty)
        #expect(h.stored("com.t") == ["existing": .integer(1)])
    }
}

/// `import` reads JSON when asked by `--format json`, by name, or from
/// standard input, and any other text plist as it is.
@Suite struct DefaultsImportFormatTests {
    @Test(arguments: [
        (["--format", "json", "import", "com.t", "-"], "{\"n\": 1, \"r\": 2.5, \"when\": {\"$date\": \"2001-01-01T00:00:00Z\"}}"),
        (["import", "com.t", "-"], "{\"n\": 1, \"r\": 2.5, \"when\": {\"$date\": \"2001-01-01T00:00:00Z\"}}"),
        (["import", "com.t", "-"], "<dict><key>n</key><integer>1</integer><key>r</key><real>2.5</real><key>when</key><date>2001-01-01T00:00:00Z</date></dict>"),
    ])
    func importReadsJSONAndXMLFromStandardInput(arguments: [String], input: String) {
        let h = Harness()
        let console = CapturingConsole(input: Array(input.utf8))
        let status = DefaultsCommand.run(arguments, configuration: Configuration(root: "/nonexistent-home/.local/share/apphome"), console: console, makeStore: { _ in h.store })
        #expect(status == 0, "\(console.standardError)")
        #expect(h.stored("com.t") == ["n": .integer(1), "r": .real(2.5), "when": .date(PlistDate(secondsSinceReferenceDate: 0))])
    }

    @Test func oldStyleTextFromStandardInputStaysOldStyle() {
        let h = Harness()
        #expect(h.run("import", "com.t", "-", input: "{ n = 1; }").status == 0)
        #expect(h.stored("com.t") == ["n": .string("1")])
    }

    @Test func formatJSONRefusesOtherTextAndLeavesTheDomain() {
        let h = Harness()
        h.run("write", "com.t", "keep", "1")
        let r = h.run("--format", "json", "import", "com.t", "-", input: "{ n = 1; }")
        #expect(r.status != 0)
        #expect(r.err.hasPrefix("defaults: Could not parse property list from - due to malformed JSON property list"))
        #expect(h.stored("com.t") == ["keep": .string("1")])
    }

    @Test func textThatIsNeitherReportsTheOldStyleError() {
        let h = Harness()
        let r = h.run("import", "com.t", "-", input: "{ n = 1 }")
        #expect(r.status != 0)
        #expect(r.err.contains("malformed old-style property list: expected ';' after the value of key \"n\""))
        #expect(h.stored("com.t") == nil)
    }
}
