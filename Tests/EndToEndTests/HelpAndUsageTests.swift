import Foundation
import Testing

@Suite("Help and usage errors")
struct HelpAndUsageTests {
    @Test func helpPrintsTheMacOSBlockOnStdoutAndExitsZero() throws {
        let root = try TempRoot()
        let result = try root.run(["help"])
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout.hasPrefix(macOSHelpText), "help must start with the macOS block byte for byte:\n\(result)")
        #expect(result.stderr.isEmpty)
    }

    @Test(arguments: ["HELP", "Help", "hElP"])
    func verbsAreCaseInsensitive(_ verb: String) throws {
        let root = try TempRoot()
        let result = try root.run([verb])
        #expect(result.status == 0 && result.stdout.hasPrefix(macOSHelpText), "\(result)")
    }

    @Test func noArgumentsIsAUsageErrorWithHelpOnStderr() throws {
        let root = try TempRoot()
        let result = try root.run([], passRoot: false)
        #expect(result.status == 255, "\(result)")
        #expect(result.stdoutData.isEmpty)
        #expect(result.stderr.contains(macOSHelpText), "\(result)")
    }

    struct UsageCase: Sendable, CustomTestStringConvertible {
        var arguments: [String]
        var testDescription: String { arguments.joined(separator: " ") }
    }

    /// Unknown verbs and options, missing and extra arguments: status 255, a `defaults: `
    /// message, then one line naming the help, on stderr; nothing on stdout; nothing on disk.
    @Test(arguments: [
        UsageCase(arguments: ["frobnicate"]),
        UsageCase(arguments: ["frobnicate", "com.example.app"]),
        UsageCase(arguments: ["--bogus", "read"]),
        UsageCase(arguments: ["--format", "yaml", "read", "com.example.app"]),
        UsageCase(arguments: ["--format"]),
        UsageCase(arguments: ["-host"]),
        UsageCase(arguments: ["read", "com.example.app", "key", "extra"]),
        UsageCase(arguments: ["read-type"]),
        UsageCase(arguments: ["read-type", "com.example.app"]),
        UsageCase(arguments: ["read-type", "com.example.app", "key", "extra"]),
        UsageCase(arguments: ["write"]),
        UsageCase(arguments: ["write", "com.example.app"]),
        UsageCase(arguments: ["rename", "com.example.app", "old"]),
        UsageCase(arguments: ["rename", "com.example.app", "old", "new", "extra"]),
        UsageCase(arguments: ["delete"]),
        UsageCase(arguments: ["delete", "com.example.app", "key", "extra"]),
        UsageCase(arguments: ["domains", "extra"]),
        UsageCase(arguments: ["find"]),
        UsageCase(arguments: ["find", "a", "b"]),
        UsageCase(arguments: ["export", "com.example.app", "-", "extra"]),
        UsageCase(arguments: ["write", "com.example.app", "k", "-int"]),
        UsageCase(arguments: ["write", "com.example.app", "k", "-string"]),
    ])
    func usageErrorsExit255WithOneHelpLineOnStderr(_ usage: UsageCase) throws {
        let root = try TempRoot()
        try root.succeed(["write", "com.example.app", "key", "value"])
        let before = root.snapshot()
        let result = try root.run(usage.arguments)
        #expect(result.isFailure(255), "\(result)")
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 2 && lines[0].count > "defaults: ".count, "the message, then one line: \(result)")
        #expect(lines.last?.hasPrefix("Run 'defaults help") == true && !result.stderr.contains(macOSHelpText), "\(result)")
        root.expectUnchanged(since: before, after: usage.testDescription)
    }

    @Test func optionsAfterTheVerbAreNotAppHomeOptions() throws {
        // `--format` is an AppHome option only before the verb; after it, it is an argument.
        let root = try TempRoot()
        try root.succeed(["write", "com.example.app", "--format", "value"])
        let result = try root.succeed(["read", "com.example.app", "--format"])
        #expect(result.stdout == "value\n")
    }
}
