import Foundation
import Testing

/// What a newcomer with macOS habits types in the first hour, through the
/// built binaries: one line for a mistake, help for a verb, options after the
/// verb, flags that act or are refused, advice that works, the version.
@Suite("The first hour")
struct FirstHourTests {
    static let d = "com.example.app"

    /// The reason, then one line naming where the help is; nothing on stdout.
    func expectOneLine(_ result: CommandResult, status: Int32, _ reason: String, help: String,
                       sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(result.status == status && result.stdoutData.isEmpty, "\(result)", sourceLocation: sourceLocation)
        #expect(result.stderr == reason + "\n" + help + "\n", "\(result)", sourceLocation: sourceLocation)
    }

    @Test func aUsageErrorIsItsReasonAndOneLine() throws {
        let root = try TempRoot()
        try root.succeed(["write", Self.d, "maxBugs", "-int", "3"])
        let before = root.snapshot()
        expectOneLine(try root.run(["write", Self.d, "maxBugs", "-int", "12ab"]), status: 255,
                      "defaults: Could not parse \"12ab\" as an integer (a whole number from -9223372036854775808 to 18446744073709551615); leaving defaults unchanged.",
                      help: "Run 'defaults help write' for its usage.")
        expectOneLine(try root.run(["frobnicate"]), status: 255, "defaults: unknown verb frobnicate",
                      help: "Run 'defaults help' for the list of verbs.")
        let list = try CrashAndDoctorTests.apphome(root, ["list", "--jsn"])
        #expect(list.status == 255 && list.stderr == "apphome: unknown option '--jsn'\nRun 'apphome help list' for its usage.\n", "\(list)")
        root.expectUnchanged(since: before, after: "usage errors")
    }

    @Test(arguments: [["help", "read"], ["read", "--help"], ["read", "-h"], ["HELP", "READ"], ["--root", "/x", "read", "--help"]])
    func oneVerbsHelp(_ arguments: [String]) throws {
        let root = try TempRoot()
        let result = try root.run(arguments)
        #expect(result.status == 0 && result.stderr.isEmpty, "\(result)")
        #expect(result.stdout.hasPrefix("  read                                 shows all defaults\n"), "\(result)")
        #expect(result.stdout.contains("  read --effective <domain> <key>"))
        #expect(!result.stdout.contains("write"))
    }

    @Test func optionsMayFollowTheVerb() throws {
        let root = try TempRoot()
        try root.succeed(["write", Self.d, "n", "-int", "3"])
        try root.expectOutput(["read", "--format", "json", Self.d], "{\n  \"n\": 3\n}\n")
        try root.expectOutput(["read", "--format=json", Self.d, "n"], "3\n")
        try root.expectOutput(["read", "--effective", "--format", "json", Self.d, "n"], "{\"layer\": \"application\", \"value\": 3}\n")
        // After the domain, the same word is an operand, as before.
        try root.succeed(["write", Self.d, "--format", "value"])
        try root.expectOutput(["read", Self.d, "--format"], "value\n")
    }

    @Test func exportWritesTheFormatAskedFor() throws {
        let root = try TempRoot()
        try root.succeed(["write", Self.d, "n", "-int", "3"])
        let xml = root.workFile("out.xml"), json = root.workFile("out.json"), binary = root.workFile("out.plist")
        try root.succeed(["--format", "xml", "export", Self.d, xml.path])
        try root.succeed(["export", "--format", "json", Self.d, json.path])
        try root.succeed(["export", Self.d, binary.path])
        #expect(try String(contentsOf: xml, encoding: .utf8).hasPrefix("<?xml version=\"1.0\" encoding=\"UTF-8\"?>"))
        #expect(try String(contentsOf: json, encoding: .utf8) == "{\n  \"n\": 3\n}\n")
        #expect(try Data(contentsOf: binary).prefix(8) == Data("bplist00".utf8))
        // Each reads back as the domain.
        for file in [xml, json, binary] {
            try root.succeed(["import", "com.example.copy", file.path])
            try root.expectOutput(["read", "com.example.copy", "n"], "3\n")
        }
        let text = root.workFile("out.txt")
        expectOneLine(try root.run(["--format", "text", "export", Self.d, text.path]), status: 255,
                      "defaults: export writes a property list: --format xml or json (or none: binary to a file, xml to stdout)",
                      help: "Run 'defaults help export' for its usage.")
        #expect(!FileManager.default.fileExists(atPath: text.path))
    }

    @Test func domainsFindAndReadTypeSpeakTheFormat() throws {
        let root = try TempRoot()
        try root.succeed(["write", Self.d, "bugs", "-int", "3"])
        try root.succeed(["write", "com.example.other", "name", "bugsy"])
        try root.expectOutput(["--format", "json", "domains"], "[\n  \"com.example.app\",\n  \"com.example.other\"\n]\n")
        let xml = try root.succeed(["--format", "xml", "domains"]).stdout
        #expect(xml.contains("<array>\n\t<string>com.example.app</string>\n\t<string>com.example.other</string>\n</array>"), "\(xml)")
        let found = try root.succeed(["--format", "json", "find", "bugs"]).stdout
        let object = try JSONSerialization.jsonObject(with: Data(found.utf8)) as? [String: [String: Any]]
        #expect(object?["com.example.app"]?["bugs"] as? Int == 3, "\(found)")
        #expect(object?["com.example.other"]?["name"] as? String == "bugsy", "\(found)")
        try root.expectOutput(["--format", "json", "read-type", Self.d, "bugs"], "\"integer\"\n")
        try root.expectOutput(["read-type", Self.d, "bugs"], "Type is integer\n")
    }

    /// A flag the verb would not act on is refused, and nothing changes.
    @Test(arguments: [
        (["--format", "json", "write", d, "k", "2"], "option --format does not apply to write", "write"),
        (["--force", "read", d], "option --force does not apply to read", "read"),
        (["--key-path", "domains"], "option --key-path does not apply to domains", "domains"),
        (["--settings-bundle", "/x", "delete", d], "option --settings-bundle does not apply to delete", "delete"),
        (["--format", "xml", "read", "--effective", d, "k"], "read --effective prints text or json, not xml", "read"),
        (["--format", "text", "import", d, "-"], "import reads a property list: --format xml or json (or none to detect it)", "import"),
    ] as [([String], String, String)])
    func aFlagAVerbCannotHonourIsRefused(_ arguments: [String], _ reason: String, _ verb: String) throws {
        let root = try TempRoot()
        try root.succeed(["write", Self.d, "k", "1"])
        let before = root.snapshot()
        expectOneLine(try root.run(arguments), status: 255, "defaults: " + reason, help: "Run 'defaults help \(verb)' for its usage.")
        root.expectUnchanged(since: before, after: arguments.joined(separator: " "))
    }

    /// `thumbnailSize 64` is a string to `defaults`, refused by the schema (a
    /// slider): the advice is the typed write that passes, and it does.
    @Test func aSchemaRefusalSuggestsTheTypedFlag() throws {
        let root = try TempRoot()
        #expect(try CrashAndDoctorTests.apphome(root, ["install", SettingsBundleEndToEndTests.v1]).status == 0)
        let id = SettingsBundleEndToEndTests.id
        let refused = try root.run(["write", id, "thumbnailSize", "64"])
        #expect(refused.status == 1)
        #expect(refused.stderr == """
        defaults: \(id) thumbnailSize: expected a number for PSSliderSpecifier, got string [SB700]
        Defaults have not been changed (to store it as that type: defaults write \(id) thumbnailSize -int 64).

        """, "\(refused)")
        try root.succeed(["write", id, "thumbnailSize", "-int", "64"])
        try root.expectOutput(["read-type", id, "thumbnailSize"], "Type is integer\n")
        // No typed flag makes 500 fit the range: only --force is suggested then.
        let outside = try root.run(["write", id, "thumbnailSize", "500"])
        #expect(outside.stderr.hasSuffix("Defaults have not been changed (use --force to write anyway).\n"), "\(outside)")
    }

    @Test func everyExecutablePrintsTheOneVersion() throws {
        let root = try TempRoot()
        let binaries = try DefaultsBinary.url().deletingLastPathComponent()
        let make = try Subprocess.run(URL(fileURLWithPath: "/usr/bin/make"),
                                      ["-s", "--no-print-directory", "-C", InstallationTests.top.path, "print-version"],
                                      environment: root.environment([:]), ioDirectory: root.io)
        let version = make.stdout.trimmingCharacters(in: .newlines)
        #expect(make.status == 0 && !version.isEmpty, "\(make)")
        for name in ["defaults", "apphome", "security", "prefsd", "git-credential-apphome"] {
            let result = try Subprocess.run(binaries.appendingPathComponent(name), ["--version"],
                                            environment: root.environment([:]), ioDirectory: root.io)
            #expect(result.status == 0 && result.stdout == "\(name) (AppHome) \(version)\n", "\(name): \(result)")
        }
    }
}
