import AppHomeSystem
@testable import CommandSupport
import Preferences
import PropertyList
import Testing
@testable import DefaultsCommand

/// Bytes of `text` followed by `tail`: an argument as the kernel passes it.
private func bytes(_ text: String, _ tail: [UInt8] = []) -> [UInt8] { Array(text.utf8) + tail }

/// One command line with an argument that is not UTF-8, and the message it gets.
struct InvalidArgumentCase: Sendable, CustomTestStringConvertible {
    var name: String
    var arguments: [[UInt8]]
    var message: String
    var testDescription: String { name }
}

@Suite struct InvalidArgumentTextTests {
    static let cases: [InvalidArgumentCase] = [
        .init(name: "a stray byte in a domain name", arguments: [bytes("write"), bytes("com.ex.", [0xFF]), bytes("k"), bytes("-int"), bytes("1")],
              message: "argument 2 is not valid UTF-8: \"com.ex.\\xFF\""),
        .init(name: "a Latin-1 byte in a key", arguments: [bytes("write"), bytes("com.ex"), bytes("k", [0xE9]), bytes("v")],
              message: "argument 3 is not valid UTF-8: \"k\\xE9\""),
        .init(name: "an untyped value", arguments: [bytes("write"), bytes("com.ex"), bytes("k"), bytes("v", [0xFE])],
              message: "argument 4 is not valid UTF-8: \"v\\xFE\""),
        .init(name: "a -string value", arguments: [bytes("write"), bytes("com.ex"), bytes("k"), bytes("-string"), bytes("", [0xC3, 0x28])],
              message: "argument 5 is not valid UTF-8: \"\\xC3(\""),
        .init(name: "an -array item", arguments: [bytes("write"), bytes("com.ex"), bytes("k"), bytes("-array"), bytes("a"), bytes("b", [0x80])],
              message: "argument 6 is not valid UTF-8: \"b\\x80\""),
        .init(name: "a -dict key", arguments: [bytes("write"), bytes("com.ex"), bytes("k"), bytes("-dict"), bytes("", [0xFF]), bytes("v")],
              message: "argument 5 is not valid UTF-8: \"\\xFF\""),
        .init(name: "a -dict value", arguments: [bytes("write"), bytes("com.ex"), bytes("k"), bytes("-dict-add"), bytes("a"), bytes("(", [0xFF]) + bytes(")")],
              message: "argument 6 is not valid UTF-8: \"(\\xFF)\""),
        .init(name: "a UTF-16 surrogate encoded in UTF-8", arguments: [bytes("write"), bytes("com.ex"), bytes("k"), bytes("-string"), [0xED, 0xA0, 0x80]],
              message: "argument 5 is not valid UTF-8: \"\\xED\\xA0\\x80\""),
        .init(name: "an overlong slash", arguments: [bytes("write"), bytes("com.ex"), bytes("", [0xC0, 0xAF])],
              message: "argument 3 is not valid UTF-8: \"\\xC0\\xAF\""),
        .init(name: "a value past U+10FFFF", arguments: [bytes("write"), bytes("com.ex"), bytes("k"), [0xF4, 0x90, 0x80, 0x80]],
              message: "argument 4 is not valid UTF-8: \"\\xF4\\x90\\x80\\x80\""),
        .init(name: "a truncated sequence after a valid one", arguments: [bytes("write"), bytes("com.ex"), bytes("é", [0xE2, 0x82])],
              message: "argument 3 is not valid UTF-8: \"é\\xE2\\x82\""),
        .init(name: "an option's value", arguments: [bytes("--root"), bytes("/tmp/r", [0xFF]), bytes("read")],
              message: "argument 2 is not valid UTF-8: \"/tmp/r\\xFF\""),
        .init(name: "an import path", arguments: [bytes("import"), bytes("com.ex"), bytes("/tmp/", [0xFF])],
              message: "argument 3 is not valid UTF-8: \"/tmp/\\xFF\""),
    ]

    @Test(arguments: cases)
    func argumentThatIsNotUTF8FailsNamingItAndWritesNothing(_ row: InvalidArgumentCase) throws {
        let h = Harness()
        h.run("write", "com.ex", "kept", "1")
        let console = CapturingConsole()
        var called = false
        let status = CommandLineArguments.run(row.arguments, command: "defaults", console: console) { arguments in
            called = true
            return DefaultsCommand.run(arguments, configuration: Configuration(root: "/nonexistent-home/.local/share/apphome"),
                                       console: console, makeStore: { _ in h.store })
        }
        #expect(status == 1)
        #expect(!called, "the command must not run with a repaired argument")
        #expect(console.standardError == "defaults: \(row.message)\n")
        #expect(console.standardOutput.isEmpty)
        #expect(try h.store.domainNames() == ["com.ex"])
        #expect(h.stored("com.ex") == ["kept": .string("1")])
    }

    @Test func twoByteNamesThatRepairToOneAreBothRefused() {
        for tail: UInt8 in [0xFE, 0xFF] {
            #expect(throws: CommandFailure.failure("argument 2 is not valid UTF-8: \"com.ex.\\x\(String(tail, radix: 16, uppercase: true))\"")) {
                try CommandLineArguments.decode([bytes("write"), bytes("com.ex.", [tail]), bytes("k"), bytes("1")])
            }
        }
    }

    @Test func validArgumentsPassThroughUnchanged() throws {
        let text = ["write", "com.ex", "clé", "🙂 \u{301}e", "-string", ""]
        #expect(try CommandLineArguments.decode(text.map { Array($0.utf8) }) == text)
    }

    @Test(arguments: [
        ([UInt8]("a\"b\\c".utf8) + [0xFF], "\"a\\\"b\\\\c\\xFF\""),
        ([0x1B] + [UInt8]("[2J".utf8) + [0x0A, 0xFF], "\"\\x1B[2J\\x0A\\xFF\""),
        ([0xC2, 0x85, 0xFF], "\"\\xC2\\x85\\xFF\""),
    ])
    func invalidArgumentsAreShownWithQuotesAndControlsEscaped(raw: [UInt8], shown: String) {
        #expect(CommandLineArguments.render(raw) == shown)
    }

    @Test func aLongInvalidArgumentIsShownAroundItsFirstBadByte() {
        let raw = [UInt8](repeating: UInt8(ascii: "a"), count: 1000) + [0xFF] + [UInt8](repeating: UInt8(ascii: "b"), count: 1000)
        let shown = CommandLineArguments.render(raw)
        #expect(shown == "\"…" + String(repeating: "a", count: 80) + "\\xFF" + String(repeating: "b", count: 79) + "…\""
            + " (2001 bytes; the first invalid byte is at offset 1000)")
    }
}
