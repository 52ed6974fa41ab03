import Containers
import Foundation
import Keychain
import Testing

/// `security --access-group GROUP`: one group for add, find, delete and
/// dump; a group the app does not hold is errSecMissingEntitlement.
@Suite struct AccessGroupTests {
    static let key = SigningKey.generate()
    var team: String { Self.key.team.rawValue }

    func world() throws -> SecurityScratch {
        let s = SecurityScratch()
        try s.install("com.example.A", groups: ["$(AppIdentifierPrefix)shared"], key: Self.key)
        try s.install("com.example.B", groups: ["$(AppIdentifierPrefix)shared"], key: Self.key)
        try s.install("com.example.C")
        return s
    }

    @Test func anAddWithoutAGroupGoesToTheFirstSignedGroupAndTheOptionPicksAnother() throws {
        let s = try world()
        #expect(s.run(["add-generic-password", "-a", "u", "-s", "svc"], stdin: "shared\n").status == 0)
        #expect(s.run(["--access-group", "com.example.A", "add-generic-password", "-a", "u", "-s", "svc"], stdin: "own\n").status == 0)
        #expect(s.run(["find-generic-password", "-a", "u", "-w"], app: "com.example.B").out == "shared\n")
        #expect(s.run(["--access-group", "com.example.A", "find-generic-password", "-a", "u", "-w"]).out == "own\n")
        #expect(s.run(["--access-group", "\(team).shared", "find-generic-password", "-a", "u", "-w"]).out == "shared\n")
        let dump = s.run(["--access-group", "com.example.A", "dump-keychain", "-d"])
        #expect(dump.status == 0 && dump.out.contains("own") && !dump.out.contains("\"shared\""), "\(dump)")
        #expect(s.run(["--access-group", "com.example.A", "delete-generic-password", "-a", "u"]).status == 0)
        #expect(s.run(["find-generic-password", "-a", "u", "-w"]).out == "shared\n")
    }

    @Test(arguments: ["add-generic-password", "find-generic-password", "delete-generic-password", "dump-keychain"])
    func aGroupTheAppDoesNotHoldIsMissingEntitlement(verb: String) throws {
        let s = try world()
        #expect(s.run(["add-generic-password", "-a", "u", "-s", "svc"], stdin: "shared\n").status == 0)
        var args = ["--access-group", "\(team).shared", verb]
        if verb != "dump-keychain" { args += ["-a", "u", "-s", "svc"] }
        let r = s.run(args, stdin: "x\n", app: "com.example.C")
        #expect(r.status == 30, "\(r)")
        #expect(r.err.hasSuffix(": A required entitlement isn't present. (The app does not hold the keychain access group '\(team).shared'.)\n"), "\(r)")
        #expect(s.run(["find-generic-password", "-a", "u", "-w"], app: "com.example.B").out == "shared\n")
    }

    @Test(arguments: [
        (["--access-group"], "security: option --access-group needs a value\n"),
        (["--access-group", "../x", "dump-keychain"], "security: invalid keychain access group '../x': it starts with '.'\n"),
    ])
    func aBadAccessGroupOptionIsAUsageError(args: [String], message: String) throws {
        let s = try world()
        let r = s.run(args)
        #expect(r.status == 2 && r.err.hasPrefix(message), "\(r)")
    }
}
