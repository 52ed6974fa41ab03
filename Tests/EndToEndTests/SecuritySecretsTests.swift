import AppHomeSystem
import Foundation
import Testing

/// The built `security` (through prefsd in daemon mode): secrets go in from
/// a pipe and come out unaltered, whatever their bytes.
@Suite("security's secrets, unaltered")
struct SecuritySecretsTests {
    let t: TempRoot
    init() throws { t = try TempRoot() }

    func security(_ arguments: [String], stdin: Data? = nil) throws -> CommandResult {
        try Subprocess.run(try TestDaemon.binary("security"), ["--root", t.root.path] + arguments,
                           environment: t.environment(["APPHOME_KEYCHAIN_KEY_STORE": "file"]), stdin: stdin, ioDirectory: t.io)
    }

    /// Lowercase hex to bytes, or nil when `text` is anything else.
    static func bytes(fromLowercaseHex text: Substring) -> [UInt8]? {
        guard !text.utf8.contains(where: { (0x41...0x46).contains($0) }) else { return nil }
        return Hex.decode(String(text))
    }

    @Test func aRandom256KiBSecretReadsBackByteForByteAsHex() throws {
        var g = SystemRandomNumberGenerator()
        var secret = (0..<(256 * 1024)).map { _ in UInt8.random(in: 0...255, using: &g) }
        secret[0] = 0xFF          // not UTF-8, whatever the rest is
        secret[secret.count - 1] = 0x42   // no final line end (standard input drops one)
        let added = try security(["add-generic-password", "-a", "ray", "-s", "binary", "-w"], stdin: Data(secret))
        #expect(added.status == 0 && added.stderr.isEmpty, "\(added)")
        let found = try security(["find-generic-password", "-s", "binary", "-w"])
        #expect(found.status == 0 && found.stderr.isEmpty, "\(found)")
        #expect(found.stdoutData.count == 2 * secret.count + 1 && found.stdoutData.last == 0x0A)
        #expect(Self.bytes(fromLowercaseHex: found.stdout.dropLast()) == secret)
        let g2 = try security(["find-generic-password", "-s", "binary", "-g"])
        #expect(g2.status == 0 && g2.stderr.hasPrefix("password: 0x"))
        #expect(Self.bytes(fromLowercaseHex: g2.stderr.dropFirst("password: 0x".count).dropLast()) == secret)
    }

    @Test func aUTF8SecretWithANewlinePrintsExactly() throws {
        let secret = "first line\nsecond line, ü\tand a tab"
        let added = try security(["add-internet-password", "-a", "ray", "-s", "text.example.com", "-r", "htps"], stdin: Data((secret + "\n").utf8))
        #expect(added.status == 0, "\(added)")
        let found = try security(["find-internet-password", "-s", "text.example.com", "-w"])
        #expect(found.status == 0 && found.stdoutData == Data((secret + "\n").utf8), "\(found)")
    }

    /// The issue's own line: `echo pw | security add-internet-password -a u -s host -w`.
    @Test func echoIntoATrailingDashWStoresTheSecret() throws {
        let sec = try TestDaemon.binary("security").path
        let r = try Subprocess.run(URL(fileURLWithPath: "/bin/sh"), ["-c", "echo pw | '\(sec)' --root '\(t.root.path)' add-internet-password -a u -s host -w"],
                                   environment: t.environment(["APPHOME_KEYCHAIN_KEY_STORE": "file"]), ioDirectory: t.io)
        #expect(r.status == 0 && r.stderr.isEmpty, "\(r)")
        #expect(try security(["find-internet-password", "-s", "host", "-w"]).stdout == "pw\n")
    }

    /// Nothing on standard input (closed, empty, or only a line end) is an
    /// error and every file stays as it was; `-w ''` asks for an empty secret.
    @Test(arguments: [nil, "", "\n"] as [String?], [false, true])
    func anEmptyStandardInputIsAnErrorAndChangesNothing(input: String?, trailingW: Bool) throws {
        #expect(try security(["add-generic-password", "-a", "ray", "-s", "kept"], stdin: Data("old".utf8)).status == 0)
        let before = t.snapshot()
        for args in [["add-generic-password", "-a", "ray", "-s", "new"], ["add-generic-password", "-U", "-a", "ray", "-s", "kept"]] {
            let r = try security(args + (trailingW ? ["-w"] : []), stdin: input.map { Data($0.utf8) })
            #expect(r.status == 1 && r.stdoutData.isEmpty, "\(r)")
            #expect(r.stderr == "security: standard input is empty: no secret to store (pipe the secret in, or pass -w '' to store an empty one)\n", "\(r)")
        }
        t.expectUnchanged(since: before, after: "security add with an empty standard input")
        #expect(try security(["find-generic-password", "-s", "kept", "-w"]).stdout == "old\n")
        #expect(try security(["find-generic-password", "-s", "new"]).status == 44)
    }

    @Test func anExplicitEmptyDashWStoresAnEmptySecret() throws {
        let r = try security(["add-generic-password", "-a", "ray", "-s", "empty", "-w", ""])
        #expect(r.status == 0 && r.stderr.isEmpty, "\(r)")
        #expect(try security(["find-generic-password", "-s", "empty", "-w"]).stdout == "\n")
    }
}
