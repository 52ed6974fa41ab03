import Foundation
import TestSupport
import Testing

/// Arguments that are not valid UTF-8, passed as raw bytes to the real
/// binaries: each command refuses them, naming the argument, and nothing
/// under the root is created or changed (with prefsd and without).
@Suite("invalid UTF-8 on the command line")
struct InvalidArgumentTextTests {
    static let d = "com.example.bytes"

    /// Every file under the root with its bytes (no lock file may appear either).
    static func state(_ t: TempRoot) -> [String: Data] { t.snapshot() }

    func run(_ t: TempRoot, _ tool: String, _ arguments: [[UInt8]], env: [String: String] = [:]) throws -> ByteArgumentProcess.Result {
        try ByteArgumentProcess.run(try TestDaemon.binary(tool).path, arguments,
                                    environment: t.environment(env.merging(["APPHOME_KEYCHAIN_KEY_STORE": "file"]) { $1 }))
    }

    struct Row: Sendable, CustomTestStringConvertible {
        var name: String
        var arguments: [[UInt8]]
        var message: String
        var testDescription: String { name }
    }

    static let defaultsRows: [Row] = [
        Row(name: "domain", arguments: [argumentBytes("write"), argumentBytes("com.example.", [0xFF]), argumentBytes("k"), argumentBytes("-int"), argumentBytes("1")],
            message: "argument 4 is not valid UTF-8: \"com.example.\\xFF\""),
        Row(name: "key", arguments: [argumentBytes("write"), argumentBytes(d), argumentBytes("k", [0xFF]), argumentBytes("v")],
            message: "argument 5 is not valid UTF-8: \"k\\xFF\""),
        Row(name: "-string value", arguments: [argumentBytes("write"), argumentBytes(d), argumentBytes("k"), argumentBytes("-string"), argumentBytes("v", [0xE9])],
            message: "argument 7 is not valid UTF-8: \"v\\xE9\""),
        Row(name: "-array item", arguments: [argumentBytes("write"), argumentBytes(d), argumentBytes("k"), argumentBytes("-array"), argumentBytes("a"), [0xED, 0xA0, 0x80]],
            message: "argument 8 is not valid UTF-8: \"\\xED\\xA0\\x80\""),
        Row(name: "-dict key", arguments: [argumentBytes("write"), argumentBytes(d), argumentBytes("k"), argumentBytes("-dict"), argumentBytes("", [0xC0, 0x80]), argumentBytes("v")],
            message: "argument 7 is not valid UTF-8: \"\\xC0\\x80\""),
        Row(name: "-dict-add value literal", arguments: [argumentBytes("write"), argumentBytes(d), argumentBytes("n"), argumentBytes("-dict-add"), argumentBytes("a"), argumentBytes("{x=\"", [0xFF]) + argumentBytes("\";}")],
            message: "argument 8 is not valid UTF-8: \"{x=\\\"\\xFF\\\";}\""),
        Row(name: "rename's new key", arguments: [argumentBytes("rename"), argumentBytes(d), argumentBytes("s"), argumentBytes("t", [0xFF])],
            message: "argument 6 is not valid UTF-8: \"t\\xFF\""),
        Row(name: "delete's key", arguments: [argumentBytes("delete"), argumentBytes(d), argumentBytes("s", [0xFF])],
            message: "argument 5 is not valid UTF-8: \"s\\xFF\""),
    ]

    @Test(arguments: defaultsRows)
    func defaultsRefusesAnArgumentThatIsNotUTF8AndWritesNothing(_ row: Row) throws {
        let t = try TempRoot()
        try t.succeed(["write", Self.d, "s", "text"])
        try t.succeed(["write", Self.d, "n", "-dict", "a", "1"])
        let before = Self.state(t)
        let result = try run(t, "defaults", [argumentBytes("--root"), argumentBytes(t.root.path)] + row.arguments)
        #expect(result.status == 1, "\(result)")
        #expect(result.standardError == "defaults: \(row.message)\n", "\(result)")
        #expect(result.stdout.isEmpty)
        #expect(Self.state(t) == before, "defaults \(row.name) changed the root")
        try t.expectOutput(["read", Self.d], "{\n    n =     {\n        a = 1;\n    };\n    s = text;\n}\n")
    }

    @Test func twoByteNamesThatWouldRepairToOneNameBothFailAndCreateNoDomain() throws {
        let t = try TempRoot()
        try t.succeed(["write", Self.d, "s", "text"])
        let before = Self.state(t)
        for tail: UInt8 in [0xFE, 0xFF] {
            let result = try run(t, "defaults", [argumentBytes("--root"), argumentBytes(t.root.path), argumentBytes("write"),
                                                 argumentBytes("com.example.", [tail]), argumentBytes("k", [tail]), argumentBytes("-int"), argumentBytes("1")])
            #expect(result.status == 1 && result.standardError.hasPrefix("defaults: argument 4 is not valid UTF-8"), "\(result)")
        }
        #expect(Self.state(t) == before)
        let domains = try t.succeed(["domains"]).stdout
        #expect(domains == "\(Self.d)\n", "\(domains)")
    }

    @Test func securityRefusesAnInvalidServiceOrAccountAndNeverShowsAnInvalidSecret() throws {
        let t = try TempRoot()
        try t.succeed(["write", Self.d, "s", "text"])
        let before = Self.state(t)
        let lead = [argumentBytes("--root"), argumentBytes(t.root.path), argumentBytes("add-generic-password")]
        let service = try run(t, "security", lead + [argumentBytes("-s"), argumentBytes("svc", [0xFF]), argumentBytes("-a"), argumentBytes("ray"), argumentBytes("-w"), argumentBytes("pw")])
        #expect(service.status == 1 && service.standardError == "security: argument 5 is not valid UTF-8: \"svc\\xFF\"\n", "\(service)")
        let account = try run(t, "security", lead + [argumentBytes("-s"), argumentBytes("svc"), argumentBytes("-a"), argumentBytes("r", [0xC3]), argumentBytes("-w"), argumentBytes("pw")])
        #expect(account.status == 1 && account.standardError == "security: argument 7 is not valid UTF-8: \"r\\xC3\"\n", "\(account)")
        let secret = try run(t, "security", lead + [argumentBytes("-s"), argumentBytes("svc"), argumentBytes("-a"), argumentBytes("ray"), argumentBytes("-w"), argumentBytes("hunter", [0xFF])])
        #expect(secret.status == 1 && secret.standardError == "security: argument 9 (the value of -w, not shown) is not valid UTF-8\n", "\(secret)")
        #expect(!secret.standardError.contains("hunter"))
        #expect(Self.state(t) == before, "security created or changed files")
    }

    @Test func apphomePrefsdAndTheGitHelperRefuseAnArgumentThatIsNotUTF8() throws {
        let t = try TempRoot()
        try t.succeed(["write", Self.d, "s", "text"])
        let before = Self.state(t)
        let bundle = argumentBytes("App", [0xFF]) + argumentBytes(".app")
        let apphome = try run(t, "apphome", [argumentBytes("--root"), argumentBytes(t.root.path), argumentBytes("install"), bundle])
        #expect(apphome.status == 1 && apphome.standardError == "apphome: argument 4 is not valid UTF-8: \"App\\xFF.app\"\n", "\(apphome)")

        let socket = t.base.path + "/other-sock/prefsd.sock"
        let prefsd = try run(t, "prefsd", [argumentBytes("--foreground"), argumentBytes("--root"), argumentBytes(t.root.path, [0xFF]),
                                           argumentBytes("--socket"), argumentBytes(socket)])
        #expect(prefsd.status == 1 && prefsd.standardError == "prefsd: argument 3 is not valid UTF-8: \"\(t.root.path)\\xFF\"\n", "\(prefsd)")
        #expect(!FileManager.default.fileExists(atPath: t.base.path + "/other-sock"))
        #expect(!FileManager.default.fileExists(atPath: t.root.path + "\u{FFFD}"))

        // git passes one word; an unknown one is ignored (status 0), an invalid one is an error.
        let git = try run(t, "git-credential-apphome", [argumentBytes("store", [0xFF])], env: ["APPHOME_ROOT": t.root.path])
        #expect(git.status == 1 && git.standardError == "git-credential-apphome: argument 1 is not valid UTF-8: \"store\\xFF\"\n", "\(git)")
        #expect(Self.state(t) == before, "a command created or changed files")
    }
    /// A file each text format reads, with `bad` where a key or a value goes.
    static func files(_ bad: [UInt8]) -> [(name: String, bytes: [UInt8], reason: String)] {
        [
            ("bad.plist", argumentBytes("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<plist version=\"1.0\"><dict><key>com.example.bytes</key><dict><key>k")
                + bad + argumentBytes("</key><string>v</string></dict></dict></plist>\n"),
             "malformed XML property list: line 2, column 62: <key> is not valid UTF-8"),
            ("bad.txt", argumentBytes("{ \"com.example.bytes\" = { k = \"v") + bad + argumentBytes("\"; }; }\n"),
             "malformed old-style property list: string is not valid UTF-8 at line 1, column 33"),
            ("bad.json", argumentBytes("{\"com.example.bytes\": {\"k\": \"v") + bad + argumentBytes("\"}}\n"),
             "malformed JSON property list: line 1, column 29: string is not valid UTF-8"),
        ]
    }

    @Test(arguments: [[UInt8]([0xFF]), [0xED, 0xA0, 0x80], [0xC0, 0xAF]])
    func importAndApplyRefuseFilesWhoseTextIsNotUTF8(bad: [UInt8]) throws {
        let t = try TempRoot()
        try t.succeed(["write", Self.d, "s", "text"])
        let before = Self.state(t)
        for file in Self.files(bad) {
            let url = t.workFile(file.name)
            try Data(file.bytes).write(to: url)
            let imported = try t.run(["import", Self.d, url.path])
            #expect(imported.status == 1 && imported.stderr.hasPrefix("defaults: Could not parse property list from \(url.path) due to "), "\(imported)")
            let applied = try t.run(["apply", url.path])
            #expect(applied.status == 1 && applied.stderr == "defaults: Could not parse property list from \(url.path) due to \(file.reason); defaults unchanged\n",
                    "\(file.name): \(applied)")
            #expect(Self.state(t) == before, "\(file.name) changed the root")
        }
    }
}
