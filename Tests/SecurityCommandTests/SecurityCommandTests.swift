import Foundation
import Testing

/// The `security` command: macOS syntax, messages and exit statuses.
@Suite struct SecurityCommandTests {
    func scratch(_ apps: [String] = ["com.example.A"]) throws -> SecurityScratch {
        let s = SecurityScratch()
        for a in apps { try s.install(a) }
        return s
    }

    @Test func addThenFindPrintsOnlyTheSecretWithW() throws {
        let s = try scratch()
        #expect(s.run(["add-generic-password", "-a", "alice", "-s", "github"], stdin: "hunter2\n").status == 0)
        let r = s.run(["find-generic-password", "-a", "alice", "-s", "github", "-w"])
        #expect(r.status == 0 && r.out == "hunter2\n" && r.err == "")
    }

    @Test func findWithoutWListsAttributesMacOSStyle() throws {
        let s = try scratch()
        _ = s.run(["add-generic-password", "-a", "alice", "-s", "github", "-l", "GitHub", "-j", "note"], stdin: "pw")
        let r = s.run(["find-generic-password", "-s", "github"])
        #expect(r.status == 0)
        #expect(r.out == """
        keychain: "\(s.root)/Keychains/com.example.A.keychain"
        version: 512
        class: "genp"
        attributes:
            0x00000007 <blob>="GitHub"
            "acct"<blob>="alice"
            "agrp"<blob>="com.example.A"
            "cdat"<timedate>=0x32303237303131353038303030305A00  "20270115080000Z\\000"
            "desc"<blob>=<NULL>
            "gena"<blob>=<NULL>
            "icmt"<blob>="note"
            "mdat"<timedate>=0x32303237303131353038303030305A00  "20270115080000Z\\000"
            "svce"<blob>="github"

        """)
        #expect(!r.out.contains("pw"))
        let g = s.run(["find-generic-password", "-s", "github", "-g"])
        #expect(g.err == "password: \"pw\"\n")
    }

    /// (arguments, exit status, exact stderr).
    static let failures: [([String], Int32, String)] = [
        (["find-generic-password", "-s", "nope"], 44, "security: SecKeychainSearchCopyNext: The specified item could not be found in the keychain.\n"),
        (["delete-generic-password", "-s", "nope"], 44, "security: SecKeychainSearchCopyNext: The specified item could not be found in the keychain.\n"),
        (["find-internet-password", "-s", "example.com"], 44, "security: SecKeychainSearchCopyNext: The specified item could not be found in the keychain.\n"),
        (["add-generic-password", "-a", "alice", "-s", "dup"], 45, "security: SecKeychainItemCreateFromContent (<default>): The specified item already exists in the keychain.\n"),
        (["frobnicate"], 2, "security: unknown verb 'frobnicate'\n"),
        (["find-generic-password", "-Z"], 2, "security: unknown option '-Z'\n"),
        (["find-generic-password", "-s"], 2, "security: option -s needs a value\n"),
        (["add-generic-password", "-a", "x"], 2, "security: missing service (-s)\n"),
        (["add-internet-password", "-s", "h", "-r", "https"], 2, "security: the protocol must be a four-character code, such as htps, not 'https'\n"),
        (["add-internet-password", "-s", "h", "-P", "99999"], 2, "security: the port must be a number from 0 to 65535, not '99999'\n"),
        (["--app", "com.example.Missing", "find-generic-password"], 1, "security: com.example.Missing is not installed\n"),
    ]

    @Test(arguments: failures.indices)
    func failuresHaveMacOSMessagesAndStatuses(_ i: Int) throws {
        let (args, expectedStatus, expectedErr) = Self.failures[i]
        let s = try scratch()
        _ = s.run(["add-generic-password", "-a", "alice", "-s", "dup"], stdin: "x")
        let r = s.run(args, stdin: "y")
        #expect(r.status == expectedStatus)
        #expect(r.err.hasPrefix(expectedErr), "\(r.err)")
        #expect(r.out == "")
    }

    /// A usage error is its reason and one line naming the verb's help, and exits 2.
    @Test(arguments: [
        (["add-internet-password", "-s", "h", "-r", "https"], "add-internet-password"),
        (["delete-internet-password", "-P", "x"], "delete-internet-password"),
        (["find-generic-password", "login.keychain", "extra"], "find-generic-password"),
        (["dump-keychain", "-x"], "dump-keychain"),
    ])
    func usageErrorsPointAtTheVerbsHelp(args: [String], verb: String) throws {
        let s = try scratch()
        let r = s.run(args, stdin: "")
        #expect(r.status == 2)
        let lines = r.err.split(separator: "\n")
        #expect(lines.count == 2 && lines[0].hasPrefix("security: ") && lines[1] == "Run 'security help \(verb)' for its usage.", "\(r.err)")
        #expect(r.out.isEmpty)
    }

    @Test func withNoAppContextSecurityActsOnTheLoginKeychain() throws {
        let s = try scratch()
        let missing = s.run(["find-generic-password", "-s", "x"], app: nil)
        #expect(missing.status == 44, "\(missing.err)")
        let added = s.run(["add-generic-password", "-a", "me", "-s", "x"], stdin: "login secret\n", app: nil)
        #expect(added.status == 0, "\(added.err)")
        let found = s.run(["find-generic-password", "-s", "x", "-w"], app: nil)
        #expect(found.status == 0 && found.out == "login secret\n", "\(found.err)")
    }

    @Test func dashWWithASecretWarnsThatArgvIsVisible() throws {
        let s = try scratch()
        let r = s.run(["add-generic-password", "-a", "a", "-s", "s", "-w", "visible"], stdin: "")
        #expect(r.status == 0)
        #expect(r.err == "security: warning: a secret given with -w is visible to other processes; pipe it on standard input or end the line with -w to be prompted\n")
        #expect(s.run(["find-generic-password", "-s", "s", "-w"]).out == "visible\n")
    }

    @Test func aTerminalPromptsTwiceAndMismatchesFail() throws {
        let s = try scratch()
        #expect(s.run(["add-generic-password", "-a", "a", "-s", "s", "-w"], prompts: ["typed", "typed"]).status == 0)
        #expect(s.run(["find-generic-password", "-s", "s", "-w"]).out == "typed\n")
        let r = s.run(["add-generic-password", "-a", "b", "-s", "s"], prompts: ["one", "two"])
        #expect(r.status == 1 && r.err == "security: the passwords do not match\n")
    }

    @Test func dashUUpdatesAnExistingItem() throws {
        let s = try scratch()
        _ = s.run(["add-generic-password", "-a", "a", "-s", "s"], stdin: "old")
        #expect(s.run(["add-generic-password", "-U", "-a", "a", "-s", "s", "-l", "New"], stdin: "new").status == 0)
        #expect(s.run(["find-generic-password", "-s", "s", "-w"]).out == "new\n")
        #expect(s.run(["find-generic-password", "-l", "New", "-w"]).out == "new\n")
    }

    @Test func internetPasswordsMatchOnServerProtocolPortAndPath() throws {
        let s = try scratch()
        #expect(s.run(["add-internet-password", "-s", "example.com", "-a", "bob", "-r", "htps", "-P", "443", "-p", "/api"], stdin: "pw443").status == 0)
        #expect(s.run(["add-internet-password", "-s", "example.com", "-a", "bob", "-r", "htps", "-P", "8443", "-p", "/api"], stdin: "pw8443").status == 0)
        #expect(s.run(["find-internet-password", "-s", "example.com", "-P", "8443", "-w"]).out == "pw8443\n")
        #expect(s.run(["find-internet-password", "-s", "example.com", "-r", "http"]).status == 44)
        let listing = s.run(["find-internet-password", "-s", "example.com", "-P", "443"]).out
        #expect(listing.contains("    \"port\"<uint32>=0x000001BB \n") && listing.contains("    \"ptcl\"<uint32>=\"htps\"\n") && listing.contains("class: \"inet\""))
        #expect(s.run(["delete-internet-password", "-s", "example.com", "-P", "443"]).out.hasSuffix("password has been deleted.\n"))
        #expect(s.run(["find-internet-password", "-s", "example.com", "-P", "443"]).status == 44)
    }

    @Test func deleteRemovesTheFirstMatchOnlyAsMacOSDoes() throws {
        let s = try scratch()
        _ = s.run(["add-generic-password", "-a", "a", "-s", "s"], stdin: "1")
        _ = s.run(["add-generic-password", "-a", "b", "-s", "s"], stdin: "2")
        #expect(s.run(["delete-generic-password", "-s", "s"]).status == 0)
        #expect(s.run(["find-generic-password", "-s", "s"]).status == 0)
        #expect(s.run(["delete-generic-password", "-s", "s"]).status == 0)
        #expect(s.run(["find-generic-password", "-s", "s"]).status == 44)
    }

    @Test func dumpKeychainShowsSecretsOnlyWithD() throws {
        let s = try scratch()
        _ = s.run(["add-generic-password", "-a", "a", "-s", "s"], stdin: "topsecret")
        _ = s.run(["add-internet-password", "-a", "a", "-s", "h"], stdin: "alsosecret")
        let plain = s.run(["dump-keychain"])
        #expect(plain.status == 0 && plain.out.contains("class: \"genp\"") && plain.out.contains("class: \"inet\""))
        #expect(!plain.out.contains("secret"))
        let d = s.run(["dump-keychain", "-d"])
        #expect(d.out.contains("data:\n\"topsecret\"\n") && d.out.contains("data:\n\"alsosecret\"\n"))
    }

    @Test func appsAreIsolatedAndAppOverridesTheRunContext() throws {
        let s = try scratch(["com.example.A", "com.example.B"])
        _ = s.run(["add-generic-password", "-a", "a", "-s", "s"], stdin: "for-a")
        #expect(s.run(["find-generic-password", "-s", "s"], app: "com.example.B").status == 44)
        #expect(s.run(["--app", "com.example.A", "find-generic-password", "-s", "s", "-w"], app: "com.example.B").out == "for-a\n")
        #expect(s.run(["find-generic-password", "-s", "s", "-w", "--app", "com.example.A"], app: nil).out == "for-a\n")
    }

    @Test func helpAndErrorVerb() throws {
        let s = try scratch()
        let h = s.run(["--help"])
        #expect(h.status == 0 && h.out.hasPrefix("usage: security [--root DIR] [--app BUNDLE-ID] [--access-group GROUP] <verb> [options]\n"))
        #expect(s.run(["error", "-25300"]).out == "Error: -25300 The specified item could not be found in the keychain.\n")
        #expect(s.run(["find-generic-password", "--help"]).out.hasPrefix("usage: security find-generic-password"))
    }
}

/// The real binary, as processes.
@Suite struct SecurityProcessTests {
    func run(_ args: [String], env: [String: String], stdin: String = "") throws -> (Int32, String, String) {
        try runProcess(productsDirectory() + "/security", args, env: env, stdin: stdin)
    }

    @Test func notFoundExits44FromTheBinary() throws {
        let s = SecurityScratch()
        try s.install("com.example.A")
        let env = ["APPHOME_ROOT": s.root, "APPHOME_BUNDLE_ID": "com.example.A", "APPHOME_KEYCHAIN_KEY_STORE": "file"]
        let r = try run(["find-generic-password", "-s", "x"], env: env)
        #expect(r.0 == 44 && r.2 == "security: SecKeychainSearchCopyNext: The specified item could not be found in the keychain.\n")
    }

    /// `apphome run --no-sandbox` sets the context in the environment:
    /// `security` there acts for that app, on the files (in a sandbox it
    /// needs prefsd: SandboxTests).
    @Test func securityInsideApphomeRunActsForThatApp() throws {
        let s = SecurityScratch()
        try s.install("com.example.A")
        try s.install("com.example.B")
        let env = ["APPHOME_KEYCHAIN_KEY_STORE": "file", "PATH": "/usr/bin:/bin"]
        let sec = productsDirectory() + "/security"
        let apphome = productsDirectory() + "/apphome"
        func inApp(_ id: String, _ script: String) throws -> (Int32, String, String) {
            try runProcess(apphome, ["--root", s.root, "run", "--no-sandbox", id, "--", "/bin/sh", "-c", script], env: env, stdin: "")
        }
        #expect(try inApp("com.example.A", "printf tok-a | '\(sec)' add-generic-password -a me -s api").0 == 0)
        #expect(try inApp("com.example.A", "'\(sec)' find-generic-password -s api -w").1 == "tok-a\n")
        let other = try inApp("com.example.B", "'\(sec)' find-generic-password -s api -w")
        #expect(other.0 == 44 && other.1 == "")
    }

    /// With a session bus, the binary keeps its device key in the real
    /// Secret Service (run by `make test` inside scripts/with-keyring.sh).
    @Test(.enabled(if: ProcessInfo.processInfo.environment["APPHOME_TEST_SECRET_SERVICE"] == "1", "needs the keyring session"))
    func theBinaryUsesTheSecretServiceWhenABusIsSet() throws {
        let s = SecurityScratch()
        try s.install("com.example.A")
        let bus = try #require(ProcessInfo.processInfo.environment["DBUS_SESSION_BUS_ADDRESS"])
        let env = ["APPHOME_ROOT": s.root, "APPHOME_BUNDLE_ID": "com.example.A", "DBUS_SESSION_BUS_ADDRESS": bus,
                   "APPHOME_KEYCHAIN_KEY_CACHE": "0"]
        #expect(try run(["add-generic-password", "-a", "a", "-s", "s"], env: env, stdin: "via-service").0 == 0)
        #expect(try run(["find-generic-password", "-s", "s", "-w"], env: env).1 == "via-service\n")
        #expect(!FileManager.default.fileExists(atPath: s.root + "/Keychains/device.key"))
        let record = try String(contentsOfFile: s.root + "/Keychains/device.plist", encoding: .isoLatin1)
        #expect(record.contains("secret-service"))
        // Without the bus, the recorded choice is a clear error (exit: low byte of errSecNotAvailable).
        var noBus = env
        noBus["DBUS_SESSION_BUS_ADDRESS"] = nil
        let r = try run(["find-generic-password", "-s", "s", "-w"], env: noBus)
        #expect(r.0 == 53)
        #expect(r.2 == "security: SecKeychainSearchCopyNext: the keychain's device root key is unavailable: the keychain records its key in the Secret Service, which cannot be reached (no session bus)\n")
    }

    /// Writers in separate processes at once: every item survives.
    @Test func concurrentWriterProcessesLoseNothing() throws {
        let s = SecurityScratch()
        try s.install("com.example.A")
        let env = ["APPHOME_ROOT": s.root, "APPHOME_BUNDLE_ID": "com.example.A", "APPHOME_KEYCHAIN_KEY_STORE": "file"]
        let writers = 6, each = 5
        var processes: [Process] = []
        for w in 0..<writers {
            let p = Process()
            p.executableURL = URL(fileURLWithPath: "/bin/sh")
            let sec = productsDirectory() + "/security"
            p.arguments = ["-c", "for i in $(seq 1 \(each)); do printf 'pw-\(w)-'$i | '\(sec)' add-generic-password -a w\(w)-$i -s svc || exit 1; done"]
            p.environment = env
            try p.run()
            processes.append(p)
        }
        for p in processes { p.waitUntilExit(); #expect(p.terminationStatus == 0) }
        let dump = try run(["dump-keychain", "-d"], env: env).1
        for w in 0..<writers {
            for i in 1...each { #expect(dump.contains("\"acct\"<blob>=\"w\(w)-\(i)\"\n") && dump.contains("\"pw-\(w)-\(i)\"")) }
        }
        #expect(dump.components(separatedBy: "class: \"genp\"").count - 1 == writers * each)
    }
}
