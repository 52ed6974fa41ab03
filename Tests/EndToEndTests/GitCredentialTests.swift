import Foundation
import Testing

/// git itself as the client: `git credential fill/approve/reject` with
/// `-c credential.helper=apphome` finds `git-credential-apphome` on `PATH`
/// and keeps the credential in the login keychain (through prefsd in
/// daemon mode), where no app can see it.
@Suite("git's credential helper")
struct GitCredentialTests {
    let t: TempRoot
    init() throws { t = try TempRoot() }

    var environment: [String: String] {
        get throws {
            let bin = try TestDaemon.binary("git-credential-apphome").deletingLastPathComponent().path
            return t.environment(["APPHOME_KEYCHAIN_KEY_STORE": "file", "APPHOME_ROOT": t.root.path, "GIT_TERMINAL_PROMPT": "0",
                                  "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null",
                                  "PATH": bin + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")])
        }
    }

    func git(_ operation: String, _ input: String, options: [String] = []) throws -> CommandResult {
        try Subprocess.run(try RealClients.tool("git"), options + ["-c", "credential.helper=apphome", "credential", operation],
                           environment: try environment, stdin: Data(input.utf8), ioDirectory: t.io)
    }

    func security(_ arguments: [String]) throws -> CommandResult {
        try Subprocess.run(try TestDaemon.binary("security"), ["--root", t.root.path] + arguments,
                           environment: try environment, stdin: Data(), ioDirectory: t.io)
    }

    @Test func gitStoresFindsAndErasesACredentialThatNoAppCanSee() throws {
        let approved = try git("approve", "protocol=https\nhost=git.example.com\nusername=ray\npassword=s3cret\n\n")
        #expect(approved.status == 0 && approved.stderr.isEmpty, "\(approved)")
        let filled = try git("fill", "protocol=https\nhost=git.example.com\n\n")
        #expect(filled.status == 0 && filled.stdout == "protocol=https\nhost=git.example.com\nusername=ray\npassword=s3cret\n", "\(filled)")
        // Another port, another protocol: not answered (git then fails, as prompts are off).
        #expect(try git("fill", "protocol=https\nhost=git.example.com:8443\n\n").status != 0)
        #expect(try git("fill", "protocol=http\nhost=git.example.com\n\n").status != 0)
        // `security` with no app context acts on the same login keychain.
        let found = try security(["find-internet-password", "-s", "git.example.com", "-r", "htps", "-w"])
        #expect(found.status == 0 && found.stdout == "s3cret\n", "\(found)")

        // An installed app, in its own context, cannot see it.
        let app = t.workFile("Peek.app")
        try FileManager.default.createDirectory(at: app, withIntermediateDirectories: true)
        try Data("{ CFBundleIdentifier = com.example.Peek; CFBundleVersion = 1; }\n".utf8).write(to: app.appendingPathComponent("Info.plist"))
        #expect(try Subprocess.run(try TestDaemon.binary("apphome"), ["--root", t.root.path, "install", app.path],
                                   environment: try environment, ioDirectory: t.io).status == 0)
        let peek = try security(["--app", "com.example.Peek", "find-internet-password", "-s", "git.example.com"])
        #expect(peek.status == 44, "\(peek)")
        let login = try security(["--app", "com.example.Peek", "--access-group", "login", "find-internet-password", "-s", "git.example.com"])
        #expect(login.status != 0, "\(login)")
        // Uninstalling the app leaves the login keychain alone.
        #expect(try Subprocess.run(try TestDaemon.binary("apphome"), ["--root", t.root.path, "uninstall", "com.example.Peek"],
                                   environment: try environment, ioDirectory: t.io).status == 0)
        #expect(try git("fill", "protocol=https\nhost=git.example.com\n\n").stdout.contains("password=s3cret\n"))

        let rejected = try git("reject", "protocol=https\nhost=git.example.com\nusername=ray\n\n")
        #expect(rejected.status == 0 && rejected.stderr.isEmpty, "\(rejected)")
        #expect(try git("fill", "protocol=https\nhost=git.example.com\n\n").status != 0)
    }

    @Test func aPathIsMatchedWhenGitSendsOne() throws {
        // git sends an https path only with credential.useHttpPath.
        let withPath = ["-c", "credential.useHttpPath=true"]
        #expect(try git("approve", "protocol=https\nhost=example.com\npath=team/repo.git\nusername=ray\npassword=one\n\n", options: withPath).status == 0)
        #expect(try git("fill", "protocol=https\nhost=example.com\npath=team/repo.git\n\n", options: withPath).stdout.contains("password=one\n"))
        #expect(try git("fill", "protocol=https\nhost=example.com\npath=other/repo.git\n\n", options: withPath).status != 0)
    }

    /// git's protocol carries bytes up to a line end: a password that is
    /// not UTF-8 comes back byte for byte, never with replacement characters.
    @Test func aPasswordThatIsNotUTF8ComesBackByteForByte() throws {
        var approve = Data("protocol=https\nhost=bytes.example.com\nusername=ray\npassword=caf".utf8)
        approve.append(contentsOf: [0xE9, 0xFF, 0x21])
        approve.append(contentsOf: Array("\n\n".utf8))
        let approved = try Subprocess.run(try RealClients.tool("git"), ["-c", "credential.helper=apphome", "credential", "approve"],
                                          environment: try environment, stdin: approve, ioDirectory: t.io)
        #expect(approved.status == 0 && approved.stderr.isEmpty, "\(approved)")
        let filled = try git("fill", "protocol=https\nhost=bytes.example.com\n\n")
        #expect(filled.status == 0, "\(filled)")
        var expected = Data("protocol=https\nhost=bytes.example.com\nusername=ray\npassword=caf".utf8)
        expected.append(contentsOf: [0xE9, 0xFF, 0x21, 0x0A])
        #expect(filled.stdoutData == expected)
    }

    /// A password holding a line end (stored with `security`) cannot travel
    /// in git's line-based protocol: `get` refuses it clearly instead of
    /// sending git a cut or garbled one.
    @Test func aPasswordWithALineEndIsRefusedNotCut() throws {
        let added = try Subprocess.run(try TestDaemon.binary("security"),
                                       ["--root", t.root.path, "add-internet-password", "-s", "lines.example.com", "-r", "htps", "-a", "ray", "-w"],
                                       environment: try environment, stdin: Data("first\nsecond\n".utf8), ioDirectory: t.io)
        #expect(added.status == 0, "\(added)")
        let helper = try TestDaemon.binary("git-credential-apphome")
        let got = try Subprocess.run(helper, ["get"], environment: try environment,
                                     stdin: Data("protocol=https\nhost=lines.example.com\n\n".utf8), ioDirectory: t.io)
        #expect(got.status == 1 && got.stdout.isEmpty, "\(got)")
        #expect(got.stderr == "git-credential-apphome: the password stored for ray at lines.example.com holds a line end or a NUL, which git's credential protocol cannot carry; it was not sent\n", "\(got)")
    }

    @Test func theHelperRefusesABadRequestClearly() throws {
        let helper = try TestDaemon.binary("git-credential-apphome")
        let bad = try Subprocess.run(helper, ["get"], environment: try environment, stdin: Data("protocol=https\nhost=example.com:99999\n\n".utf8), ioDirectory: t.io)
        #expect(bad.status == 1 && bad.stderr == "git-credential-apphome: the port '99999' is not a number from 1 to 65535\n", "\(bad)")
        let usage = try Subprocess.run(helper, [], environment: try environment, ioDirectory: t.io)
        #expect(usage.status == 2 && usage.stderr.hasPrefix("usage: git-credential-apphome get|store|erase"), "\(usage)")
    }

    // MARK: Issue 23: the login keychain is the user's; the stream carries no forged line

    func helper(_ operation: String, _ input: Data, extra: [String: String] = [:]) throws -> CommandResult {
        var env = try environment
        env.merge(extra) { _, new in new }
        return try Subprocess.run(try TestDaemon.binary("git-credential-apphome"), [operation], environment: env, stdin: input, ioDirectory: t.io)
    }

    @Test func insideAnAppTheHelperNeverReachesTheLoginKeychain() throws {
        #expect(try git("approve", "protocol=https\nhost=git.example.com\nusername=ray\npassword=s3cret\n\n").status == 0)
        let app = t.workFile("Peek.app")
        try FileManager.default.createDirectory(at: app, withIntermediateDirectories: true)
        try Data("{ CFBundleIdentifier = com.example.Peek; CFBundleVersion = 1; }\n".utf8).write(to: app.appendingPathComponent("Info.plist"))
        let apphome = try TestDaemon.binary("apphome")
        #expect(try Subprocess.run(apphome, ["--root", t.root.path, "install", app.path], environment: try environment, ioDirectory: t.io).status == 0)
        let request = Data("protocol=https\nhost=git.example.com\nusername=ray\npassword=HIJACK\n\n".utf8)
        let refusal = "git-credential-apphome: the login keychain is the user's and no app may use it: this runs in the context of com.example.Peek (in its sandbox, or APPHOME_BUNDLE_ID or APPHOME_HOME is set, as inside 'apphome run')\n"
        for operation in ["get", "erase", "store"] {
            let inside = try Subprocess.run(apphome, ["--root", t.root.path, "run", "com.example.Peek", "--", "git-credential-apphome", operation],
                                            environment: try environment, stdin: request, ioDirectory: t.io)
            #expect(inside.status == 1 && inside.stdout.isEmpty, "\(operation): \(inside)")
            #expect(inside.stderr == refusal, "\(operation): \(inside)")
        }
        // The app's variable alone is enough; its home alone too.
        let byVariable = try helper("get", request, extra: ["APPHOME_BUNDLE_ID": "com.example.Peek"])
        #expect(byVariable.status == 1 && byVariable.stdout.isEmpty && byVariable.stderr == refusal, "\(byVariable)")
        let byHome = try helper("erase", request, extra: ["APPHOME_HOME": t.root.path + "/home"])
        #expect(byHome.status == 1 && byHome.stderr.contains("the login keychain is the user's"), "\(byHome)")
        // `security` in the app's context: refused too, by name or by group.
        let security = try Subprocess.run(apphome, ["--root", t.root.path, "run", "com.example.Peek", "--", "security", "find-internet-password",
                                                     "-s", "git.example.com", "-r", "htps", "-w"], environment: try environment, ioDirectory: t.io)
        #expect(security.status != 0 && !security.stdout.contains("s3cret"), "\(security)")
        let loginGroup = try Subprocess.run(try TestDaemon.binary("security"), ["--root", t.root.path, "find-internet-password", "-s", "git.example.com", "-w"],
                                            environment: try environment.merging(["APPHOME_HOME": t.root.path + "/home"]) { _, new in new }, ioDirectory: t.io)
        #expect(loginGroup.status != 0 && !loginGroup.stdout.contains("s3cret"), "\(loginGroup)")
        // Nothing was erased nor replaced: the user still gets the password.
        let filled = try git("fill", "protocol=https\nhost=git.example.com\n\n")
        #expect(filled.status == 0 && filled.stdout.contains("username=ray\npassword=s3cret\n"), "\(filled)")
    }

    @Test func aUsernameWithALineEndIsNeverWrittenIntoTheStream() throws {
        let added = try security(["add-internet-password", "-s", "inject.example.com", "-r", "htps", "-a", "ray\npassword=HIJACK\nhost=evil.example", "-w", "s3cret"])
        #expect(added.status == 0, "\(added)")
        let got = try helper("get", Data("protocol=https\nhost=inject.example.com\n\n".utf8))
        #expect(got.status == 1 && got.stdout.isEmpty, "\(got)")
        #expect(got.stderr == "git-credential-apphome: the username stored at inject.example.com (\"ray\\x0Apassword=HIJACK\\x0Ahost=evil.example\", shown escaped) holds a line end or a NUL, which git's credential protocol cannot carry; nothing was sent\n", "\(got)")
        // git then fails: it never sees a forged line.
        #expect(try git("fill", "protocol=https\nhost=inject.example.com\n\n").stdout.contains("HIJACK") == false)
        // A request value with a carriage return or a NUL inside is refused.
        for bad in ["protocol=https\nhost=a.example\nusername=ray\rX\npassword=p\n\n", "protocol=https\nhost=a.exa\u{0}mple\nusername=ray\npassword=p\n\n"] {
            let stored = try helper("store", Data(bad.utf8))
            #expect(stored.status == 1 && stored.stderr.contains("holds a NUL or a carriage return"), "\(stored)")
        }
    }

    @Test func hostsThatAreNotUTF8OrCanonicallyEquivalentNeverMatchEachOther() throws {
        // "é" as one scalar, and as "e" + U+0301: two hosts.
        #expect(try helper("store", Data("protocol=https\nhost=caf\u{E9}.example\nusername=ray\npassword=composed\n\n".utf8)).status == 0)
        let other = try helper("get", Data("protocol=https\nhost=cafe\u{301}.example\n\n".utf8))
        #expect(other.status == 0 && other.stdout.isEmpty, "\(other)")
        #expect(try helper("store", Data("protocol=https\nhost=cafe\u{301}.example\nusername=ray\npassword=decomposed\n\n".utf8)).status == 0)
        #expect(try helper("get", Data("protocol=https\nhost=caf\u{E9}.example\n\n".utf8)).stdout == "username=ray\npassword=composed\n")
        #expect(try helper("get", Data("protocol=https\nhost=cafe\u{301}.example\n\n".utf8)).stdout == "username=ray\npassword=decomposed\n")
        // A host that is not UTF-8 is refused, never read as U+FFFD (which would match this one).
        #expect(try helper("store", Data("protocol=https\nhost=\u{FFFD}x.example\nusername=ray\npassword=replacement\n\n".utf8)).status == 0)
        var invalid = Data("protocol=https\nhost=".utf8)
        invalid.append(contentsOf: [0xFF])
        invalid.append(contentsOf: Array("x.example\n\n".utf8))
        let refused = try helper("get", invalid)
        #expect(refused.status == 1 && refused.stdout.isEmpty, "\(refused)")
        #expect(refused.stderr == "git-credential-apphome: the host \"\\xFFx.example\" of the request is not valid UTF-8 (shown with its bytes escaped); it was refused, not repaired\n", "\(refused)")
        #expect(try helper("erase", invalid).status == 1)
        #expect(try helper("get", Data("protocol=https\nhost=\u{FFFD}x.example\n\n".utf8)).stdout == "username=ray\npassword=replacement\n")
    }
}
