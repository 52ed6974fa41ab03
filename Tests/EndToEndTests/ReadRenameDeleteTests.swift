import Foundation
import Testing

@Suite("read, read-type, rename, delete")
struct ReadRenameDeleteTests {
    static let d = "com.example.app"

    @Test(arguments: [
        ("'s'", "string"), ("b'\\x01'", "data"), ("1", "integer"), ("1.5", "float"), ("True", "boolean"),
        ("datetime.datetime(2020, 1, 1)", "date"), ("[1]", "array"), ("{'a': 1}", "dictionary"),
    ])
    func readTypeNamesEveryType(_ python: String, _ type: String) throws {
        let root = try TempRoot()
        try root.writePlist("{'k': \(python)}", to: root.domainFile(Self.d))
        let result = try root.succeed(["read-type", Self.d, "k"])
        #expect(result.stdout == "Type is \(type)\n")
    }

    @Test func readOfAStringKeyPrintsItBare() throws {
        let root = try TempRoot()
        try root.succeed(["write", "-g", "AppleInterfaceStyle", "Dark"])
        try root.expectOutput(["read", "-g", "AppleInterfaceStyle"], "Dark\n")
        try root.expectOutput(["read", "NSGlobalDomain", "AppleInterfaceStyle"], "Dark\n")
        try root.expectOutput(["read", "-globalDomain", "AppleInterfaceStyle"], "Dark\n")
    }

    @Test func renameMovesTheValueAndOverwritesTheNewKey() throws {
        let root = try TempRoot()
        try root.succeed(["write", Self.d, "old", "-int", "7"])
        try root.succeed(["write", Self.d, "new", "replaced"])
        try root.succeed(["write", Self.d, "other", "kept"])
        try root.succeed(["rename", Self.d, "old", "new"])
        try root.expectPlist(root.domainFile(Self.d), equals: "{'new': 7, 'other': 'kept'}")
    }

    @Test func deleteOfAKeyRemovesOnlyThatKey() throws {
        let root = try TempRoot()
        try root.succeed(["write", Self.d, "a", "1"])
        try root.succeed(["write", Self.d, "b", "2"])
        try root.succeed(["delete", Self.d, "a"])
        try root.expectPlist(root.domainFile(Self.d), equals: "{'b': '2'}")
        try root.succeed(["remove", Self.d, "b"])
        let result = try root.run(["read", Self.d])
        #expect(result.isFailure(1) && result.stderr == "defaults: Domain \(Self.d) does not exist\n", "\(result)")
    }

    @Test func deleteOfADomainRemovesEveryKey() throws {
        let root = try TempRoot()
        try root.succeed(["write", Self.d, "a", "1"])
        try root.succeed(["write", Self.d, "b", "2"])
        try root.succeed(["write", "com.example.other", "c", "3"])
        try root.succeed(["DELETE", Self.d])
        let result = try root.run(["read", Self.d])
        #expect(result.isFailure(1) && result.stderr == "defaults: Domain \(Self.d) does not exist\n", "\(result)")
        try root.expectOutput(["read", "com.example.other", "c"], "3\n")
        try root.expectOutput(["domains"], "com.example.other\n")
    }

    struct ErrorCase: Sendable, CustomTestStringConvertible {
        var arguments: [String]
        var message: String
        var testDescription: String { arguments.joined(separator: " ") }
    }

    /// The domain `com.example.app` holds `present = yes`; the global domain holds `g = 1`.
    @Test(arguments: [
        ErrorCase(arguments: ["read", "com.example.missing"],
                  message: "Domain com.example.missing does not exist"),
        ErrorCase(arguments: ["read", "com.example.missing", "k"],
                  message: "Domain com.example.missing does not exist"),
        ErrorCase(arguments: ["read", d, "absent"],
                  message: "The domain/default pair of (com.example.app, absent) does not exist"),
        ErrorCase(arguments: ["read-type", d, "absent"],
                  message: "The domain/default pair of (com.example.app, absent) does not exist"),
        ErrorCase(arguments: ["read", "-g", "absent"],
                  message: "The domain/default pair of (kCFPreferencesAnyApplication, absent) does not exist"),
        ErrorCase(arguments: ["-currentHost", "read", "com.example.app"],
                  message: "Domain com.example.app does not exist"),
        ErrorCase(arguments: ["rename", d, "absent", "other"],
                  message: "Key absent does not exist in domain com.example.app; leaving defaults unchanged"),
        ErrorCase(arguments: ["rename", "com.example.missing", "absent", "other"],
                  message: "Key absent does not exist in domain com.example.missing; leaving defaults unchanged"),
        ErrorCase(arguments: ["delete", "com.example.missing"],
                  message: "Domain (com.example.missing) not found.\nDefaults have not been changed."),
        ErrorCase(arguments: ["delete", d, "absent"],
                  message: "Domain (com.example.app) not found.\nDefaults have not been changed."),
        ErrorCase(arguments: ["remove", "com.example.missing", "k"],
                  message: "Domain (com.example.missing) not found.\nDefaults have not been changed."),
    ])
    func failuresPrintMacOSMessagesAndExitOne(_ row: ErrorCase) throws {
        let root = try TempRoot()
        try root.succeed(["write", Self.d, "present", "yes"])
        try root.succeed(["write", "-g", "g", "1"])
        try root.succeed(["printHostIdentifier"])  // made on first use; not a change by the failing command
        let before = root.snapshot()
        let result = try root.run(row.arguments)
        #expect(result.isFailure(1), "\(result)")
        #expect(result.stderr == "defaults: \(row.message)\n")
        root.expectUnchanged(since: before, after: row.testDescription)
    }

    @Test func readOfAMissingGlobalDomainNamesAppleGlobalDomain() throws {
        let root = try TempRoot()
        let result = try root.run(["read", "-g"])
        #expect(result.isFailure(1), "\(result)")
        #expect(result.stderr == "defaults: Domain Apple Global Domain does not exist\n")
    }

    @Test func readOfAnEmptiedDomainSaysItDoesNotExist() throws {
        let root = try TempRoot()
        try root.succeed(["write", Self.d, "only", "x"])
        try root.succeed(["delete", Self.d, "only"])
        let result = try root.run(["read", Self.d])
        #expect(result.isFailure(1) && result.stderr == "defaults: Domain \(Self.d) does not exist\n", "\(result)")
    }
}
