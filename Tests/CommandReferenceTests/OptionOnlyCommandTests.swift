import AppHomeSystem
import CommandSupport
import Foundation
import PlutilCommand
import SecretServiceProvider
import Testing

/// The commands with options only, no verbs (`plutil`, whose commands are
/// options as on macOS, and `apphome-secretd`): the help, the man page and
/// the bash completion name the same options, both ways.
@Suite("Help, man page and completion of the option-only commands agree")
struct OptionOnlyCommandTests {
    struct Command: Sendable, CustomTestStringConvertible {
        var name: String
        var help: [String]
        var manPage: String
        /// Option-like words of the prose that are not the command's (a
        /// type name in plutil's help, `security create-keychain`'s words).
        var prose: Set<String>
        var testDescription: String { name }
    }

    static let commands: [Command] = [
        // plutil's value types (-bool … -dictionary) are options of -insert and -replace.
        Command(name: "plutil", help: ["-help"], manPage: "man/plutil.1", prose: []),
        Command(name: "apphome-secretd", help: ["--help"], manPage: "man/apphome-secretd.8", prose: []),
    ]

    static func helpText(_ command: Command) -> (status: Int32, out: String) {
        let console = CapturingConsole()
        let status: Int32
        switch command.name {
        case "plutil": status = PlutilCommand.run(command.help, console: console)
        default:
            status = SecretServiceCommand.run(command.help, configuration: Configuration(variable: { _ in nil }), console: console)
        }
        return (status, console.standardOutput)
    }

    /// The options a bash completion offers: the `-`words of its `compgen -W`
    /// lists (without `--`, the end of the options, which no help lists as one).
    static func completionOptions(_ source: String) -> Set<String> {
        let regex = try! NSRegularExpression(pattern: #"compgen -W "([^"]*)""#)
        let ns = source as NSString
        var options: Set<String> = []
        for m in regex.matches(in: source, range: NSRange(location: 0, length: ns.length)) {
            options.formUnion(ns.substring(with: m.range(at: 1)).split(separator: " ").map(String.init).filter { $0.hasPrefix("-") && $0 != "--" })
        }
        return options
    }

    @Test(arguments: commands)
    func theHelpTheManPageAndTheCompletionNameTheSameOptions(_ command: Command) throws {
        let help = Self.helpText(command)
        #expect(help.status == 0 && !help.out.isEmpty, "\(command.name) \(command.help): \(help)")
        let fromHelp = CommandReferenceTests.optionWords(help.out).subtracting(command.prose)
        let fromMan = CommandReferenceTests.optionWords(CommandReferenceTests.manText(try CommandReferenceTests.file(command.manPage)))
            .subtracting(command.prose)
        let fromCompletion = Self.completionOptions(try CommandReferenceTests.file("completions/" + command.name))
        #expect(fromMan.subtracting(fromHelp).isEmpty, "\(command.manPage) names options the help does not: \(fromMan.subtracting(fromHelp).sorted())")
        #expect(fromHelp.subtracting(fromMan).isEmpty, "the help names options \(command.manPage) does not: \(fromHelp.subtracting(fromMan).sorted())")
        #expect(fromHelp.subtracting(fromCompletion).isEmpty,
                "completions/\(command.name) does not offer \(fromHelp.subtracting(fromCompletion).sorted())")
        #expect(fromCompletion.subtracting(fromHelp).isEmpty,
                "completions/\(command.name) offers options the help does not name: \(fromCompletion.subtracting(fromHelp).sorted())")
    }

    @Test func plutilAnswersTheLongHelpAndVersionOptions() {
        let short = CapturingConsole(), long = CapturingConsole(), version = CapturingConsole()
        #expect(PlutilCommand.run(["-help"], console: short) == 0)
        #expect(PlutilCommand.run(["--help"], console: long) == 0 && long.standardOutput == short.standardOutput)
        #expect(PlutilCommand.run(["--version"], console: version) == 0)
        #expect(version.standardOutput == AppHomeVersion.line(command: "plutil") && version.standardError.isEmpty)
    }
}
