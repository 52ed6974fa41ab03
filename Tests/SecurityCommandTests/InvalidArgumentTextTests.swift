@testable import CommandSupport
import SecurityCommand
import TestSupport
import Testing

/// `security` given arguments that are not valid UTF-8, as `main` passes
/// them: refused before anything is stored, a secret never shown.
@Suite struct SecurityInvalidArgumentTextTests {
    struct Row: Sendable, CustomTestStringConvertible {
        var name: String
        var arguments: [[UInt8]]
        var message: String
        var testDescription: String { name }
    }

    static let rows: [Row] = [
        Row(name: "service", arguments: [argumentBytes("add-generic-password"), argumentBytes("-s"), argumentBytes("git", [0xFF]),
                                         argumentBytes("-a"), argumentBytes("alice"), argumentBytes("-w"), argumentBytes("pw")],
            message: "security: argument 3 is not valid UTF-8: \"git\\xFF\"\n"),
        Row(name: "account", arguments: [argumentBytes("add-generic-password"), argumentBytes("-s"), argumentBytes("git"),
                                         argumentBytes("-a"), [0xED, 0xB0, 0x80], argumentBytes("-w"), argumentBytes("pw")],
            message: "security: argument 5 is not valid UTF-8: \"\\xED\\xB0\\x80\"\n"),
        Row(name: "secret", arguments: [argumentBytes("add-generic-password"), argumentBytes("-s"), argumentBytes("git"),
                                        argumentBytes("-a"), argumentBytes("alice"), argumentBytes("-w"), argumentBytes("hunter2", [0xFF])],
            message: "security: argument 7 (the value of -w, not shown) is not valid UTF-8\n"),
        Row(name: "internet server", arguments: [argumentBytes("add-internet-password"), argumentBytes("-s"), argumentBytes("host", [0xC3]),
                                                 argumentBytes("-a"), argumentBytes("alice"), argumentBytes("-w"), argumentBytes("pw")],
            message: "security: argument 3 is not valid UTF-8: \"host\\xC3\"\n"),
    ]

    @Test(arguments: rows)
    func argumentThatIsNotUTF8IsRefusedAndNothingIsStored(_ row: Row) throws {
        let s = SecurityScratch()
        try s.install("com.example.A")
        let console = CapturingConsole()
        var ran = false
        let status = CommandLineArguments.run(row.arguments, command: "security", console: console,
                                              secretAfter: SecurityCommand.secretOptions) { arguments in
            ran = true
            return s.run(arguments).status
        }
        #expect(status == 1 && !ran)
        #expect(console.standardError == row.message)
        #expect(!console.standardError.contains("hunter2"))
        let listed = s.run(["dump-keychain"])
        #expect(listed.status == 0 && listed.out.isEmpty, "\(listed)")
    }
}
