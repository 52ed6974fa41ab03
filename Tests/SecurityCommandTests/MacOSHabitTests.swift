import Foundation
import Testing

/// Scripts written for macOS's `security`: `-T`/`-A`, a keychain after the
/// options, `list-keychains`, `default-keychain`, `login-keychain`,
/// `security error N` for its own statuses, and help that shows `\n` as typed.
@Suite struct MacOSHabitTests {
    func scratch() throws -> SecurityScratch {
        let s = SecurityScratch()
        try s.install("com.example.A")
        return s
    }

    @Test(arguments: [["-T", "/usr/bin/git"], ["-T", "/usr/bin/git", "-T", "/usr/bin/ssh"], ["-A"], ["-A", "-T", "/usr/bin/git"]])
    func accessListFlagsAreAcceptedWithOneNote(_ flags: [String]) throws {
        let s = try scratch()
        let added = s.run(["add-generic-password", "-a", "me", "-s", "api"] + flags + ["-w"], stdin: "s3cret\n", app: nil)
        #expect(added.status == 0 && added.out.isEmpty, "\(added)")
        #expect(added.err == "security: note: -T and -A are accepted and ignored: which programs read an item is decided "
                + "by the app's keychain access groups, not by per-application access lists\n")
        #expect(s.run(["find-generic-password", "-s", "api", "-w"], app: nil).out == "s3cret\n")
        let internet = s.run(["add-internet-password", "-s", "h.example", "-a", "me", "-T", "/usr/bin/git"], stdin: "pw", app: nil)
        #expect(internet.status == 0 && internet.err.hasPrefix("security: note: -T and -A"), "\(internet)")
    }

    @Test func aFlagWithoutItsPathIsStillAUsageError() throws {
        let s = try scratch()
        let r = s.run(["add-generic-password", "-a", "me", "-s", "api", "-T"], stdin: "x", app: nil)
        #expect(r.status == 2 && r.err == "security: option -T needs an application path\nRun 'security help add-generic-password' for its usage.\n")
    }

    /// The login keychain by the names macOS scripts use; with `APPHOME_BUNDLE_ID`
    /// set (inside `apphome run`) naming it is refused: the login keychain is the
    /// user's, never an app's, whatever names it.
    @Test(arguments: ["login.keychain", "login.keychain-db", "/Users/me/Library/Keychains/login.keychain-db", "login"])
    func aTrailingLoginKeychainNamesTheLoginKeychain(_ name: String) throws {
        let s = try scratch()
        #expect(s.run(["add-generic-password", "-a", "me", "-s", "api", name], stdin: "login pw", app: nil).status == 0)
        let found = s.run(["find-generic-password", "-s", "api", "-w", name], app: nil)
        #expect(found.status == 0 && found.out == "login pw\n", "\(found)")
        let fromApp = s.run(["find-generic-password", "-s", "api", "-w", name], app: "com.example.A")
        #expect(fromApp.status != 0 && fromApp.out.isEmpty && fromApp.err.contains("the login keychain is the user's"), "\(fromApp)")
        // The app's own keychain does not have it.
        #expect(s.run(["find-generic-password", "-s", "api", "-w"], app: "com.example.A").status == 44)
        let dumped = s.run(["dump-keychain", name], app: nil)
        #expect(dumped.status == 0 && dumped.out.contains("\"svce\"<blob>=\"api\""))
        #expect(s.run(["delete-generic-password", "-s", "api", name], app: nil).status == 0)
    }

    @Test func aTrailingGroupKeychainNamesThatAccessGroup() throws {
        let s = try scratch()
        #expect(s.run(["add-generic-password", "-a", "me", "-s", "api"], stdin: "app pw").status == 0)
        let path = s.root + "/Keychains/com.example.A.keychain"
        for name in ["com.example.A.keychain", path] {
            let found = s.run(["find-generic-password", "-s", "api", "-w", name])
            #expect(found.status == 0 && found.out == "app pw\n", "\(name): \(found)")
        }
        // A group the app does not hold: the entitlement error, as --access-group gives.
        let other = s.run(["find-generic-password", "-s", "api", "-w", "com.example.Other.keychain"])
        #expect(other.status == SecurityHelpers.lowByte(-34018) && other.err.contains("entitlement"), "\(other)")
    }

    @Test(arguments: ["nosuch.txt", "/tmp/elsewhere/com.example.A.keychain", "System.keychain.bak"])
    func anUnknownKeychainIsErrSecNoSuchKeychain(_ name: String) throws {
        let s = try scratch()
        let before = try FileManager.default.subpathsOfDirectory(atPath: s.root).sorted()
        let r = s.run(["find-generic-password", "-s", "api", name], app: nil)
        #expect(r.status == 50 && r.out.isEmpty, "\(r)")
        #expect(r.err.hasPrefix("security: SecKeychainOpen \(name): The specified keychain could not be found."), "\(r.err)")
        #expect(try FileManager.default.subpathsOfDirectory(atPath: s.root).sorted() == before)
    }

    @Test func globalOptionsMayFollowTheVerb() throws {
        let s = try scratch()
        #expect(s.run(["add-generic-password", "-a", "me", "-s", "api"], stdin: "pw").status == 0)
        let found = s.run(["find-generic-password", "--root", s.root, "--access-group", "com.example.A", "-s", "api", "-w"],
                          extra: ["APPHOME_ROOT": "/nonexistent"])
        #expect(found.status == 0 && found.out == "pw\n", "\(found)")
    }

    @Test func theAppNamedAndTheLoginKeychainExcludeEachOther() throws {
        let s = try scratch()
        let r = s.run(["--app", "com.example.A", "find-generic-password", "-s", "api", "login.keychain"], app: nil)
        #expect(r.status == 2 && r.err.hasPrefix("security: the login keychain belongs to no app"), "\(r)")
    }

    @Test func keychainListsPrintQuotedPathsAsMacOSDoes() throws {
        let s = try scratch()
        let login = "    \"\(s.root)/Keychains/login.keychain\"\n"
        let app = "    \"\(s.root)/Keychains/com.example.A.keychain\"\n"
        #expect(s.run(["list-keychains"], app: nil).out == login)
        #expect(s.run(["list-keychains", "-d", "user"], app: nil).out == login)
        #expect(s.run(["list-keychains", "-d", "system"], app: nil) == (0, "", ""))
        #expect(s.run(["default-keychain"], app: nil).out == login)
        #expect(s.run(["login-keychain"], app: nil).out == login)
        #expect(s.run(["list-keychains"]).out == app)
        #expect(s.run(["default-keychain"]).out == app)
        #expect(s.run(["login-keychain"]).out == login)
        let set = s.run(["list-keychains", "-s", "x.keychain"], app: nil)
        #expect(set.status == 2 && set.err.hasPrefix("security: unknown option '-s'"), "\(set)")
        let bad = s.run(["default-keychain", "-d", "galaxy"], app: nil)
        #expect(bad.status == 2 && bad.err.hasPrefix("security: unknown preference domain 'galaxy'"), "\(bad)")
    }

    @Test(arguments: [
        ("44", "Error: 44 is security's exit status for errSecItemNotFound (-25300): The specified item could not be found in the keychain.\n"),
        ("45", "Error: 45 is security's exit status for errSecDuplicateItem (-25299): The specified item already exists in the keychain.\n"),
        ("36", "Error: 36 is security's exit status for errSecInteractionNotAllowed (-25308): User interaction is not allowed.\n"),
        ("2", "Error: 2 is security's exit status for a usage error\n"),
        ("-25300", "Error: -25300 The specified item could not be found in the keychain.\n"),
    ])
    func errorDescribesItsOwnExitStatuses(_ code: String, _ out: String) throws {
        let s = try scratch()
        let r = s.run(["error", code], app: nil)
        #expect(r.status == 0 && r.out == out && r.err.isEmpty, "\(r)")
    }

    @Test func everyExitStatusSecurityGivesIsDescribed() throws {
        let s = try scratch()
        // What a not-found exits with is what `security error` explains.
        let missing = s.run(["find-generic-password", "-s", "nope"], app: nil)
        let explained = s.run(["error", String(missing.status)], app: nil)
        #expect(explained.status == 0 && explained.out.contains("errSecItemNotFound"), "\(explained)")
        #expect(s.run(["error", "77"], app: nil).status == 1)
    }

    @Test func addHelpShowsLineEndsAsTyped() throws {
        let s = try scratch()
        for args in [["add-generic-password", "-h"], ["help", "add-generic-password"], ["add-generic-password", "--help"]] {
            let r = s.run(args, app: nil)
            #expect(r.status == 0)
            #expect(r.out.contains("only one final line end (\\n or\n    \\r\\n) is dropped"), "\(r.out)")
            #expect(!r.out.contains("\r"))
        }
    }

    @Test func helpVerbShowsThatVerbsHelp() throws {
        let s = try scratch()
        let r = s.run(["help", "find-internet-password"], app: nil)
        #expect(r.status == 0 && r.out.hasPrefix("usage: security find-internet-password"), "\(r)")
        let unknown = s.run(["help", "frobnicate"], app: nil)
        #expect(unknown.status == 2 && unknown.err == "security: unknown verb 'frobnicate'\nRun 'security help' for the list of verbs.\n")
    }
}

enum SecurityHelpers {
    static func lowByte(_ status: Int32) -> Int32 { Int32(UInt8(truncatingIfNeeded: status)) }
}
