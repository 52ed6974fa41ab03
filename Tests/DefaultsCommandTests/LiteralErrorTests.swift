import AppHomeSystem
import CommandSupport
import Preferences
import PropertyList
import Testing
@testable import DefaultsCommand

/// A literal on the command line that does not parse: macOS's "Could not
/// parse: <text>" with the reason `import` gives for a file, the text cut short.
@Suite struct LiteralErrorTests {
    static let deep = String(repeating: "(", count: 3000) + String(repeating: ")", count: 3000)
    static let reason = "due to property list nests deeper than 2048 levels.  Try single-quoting it."
    static let deepEcho = String(repeating: "(", count: 60) + "… (6000 characters)"

    @Test(arguments: [
        (["write", "com.t", "k", deep], "Could not parse: \(deepEcho) \(reason)"),
        (["write", "com.t", "k", "-array", "a", deep], "Could not parse: \(deepEcho) \(reason)"),
        (["write", "com.t", "k", "-array-add", deep], "Could not parse: \(deepEcho) \(reason)"),
        (["write", "com.t", "k", "-dict", "a", deep], "Could not parse: \(deepEcho) \(reason)"),
        (["write", "com.t", "k", "-dict-add", "a", deep], "Could not parse: \(deepEcho) \(reason)"),
        (["write", "com.t", "{a = \(deep);}"], "Could not parse: {a = " + String(repeating: "(", count: 55) + "… (6007 characters) \(reason)"),
        (["--key-path", "write", "com.t", "a.b", deep], "Could not parse: \(deepEcho) \(reason)"),
    ])
    func aTooDeepLiteralGivesTheReasonAndATruncatedEcho(arguments: [String], message: String) {
        let h = Harness()
        h.run("write", "com.t", "kept", "1")
        let console = CapturingConsole()
        let status = DefaultsCommand.run(arguments, configuration: Configuration(root: "/nonexistent-home/.local/share/apphome"),
                                         console: console, makeStore: { _ in h.store })
        #expect(status == 1)
        #expect(console.standardError == "defaults: \(message)\n")
        #expect(h.stored("com.t") == ["kept": .string("1")])
    }

    @Test func importOfTheSameTextGivesTheSameReason() {
        let h = Harness()
        let r = h.run("import", "com.t", "-", input: "{ a = \(Self.deep); }")
        #expect(r.status == 1)
        #expect(r.err == "defaults: Could not parse property list from - due to property list nests deeper than 2048 levels\n")
    }

    @Test(arguments: [
        (["write", "com.t", "k", "(a"], "Could not parse: (a due to malformed old-style property list: missing ')' at end of array at line 1, column 3.  Try single-quoting it."),
        (["write", "com.t", "k", "-array", "<abc>"], "Could not parse: <abc> due to malformed old-style property list: odd number of hex digits in data at line 1, column 5.  Try single-quoting it."),
        (["write", "com.t", "k", "a\\Uzz"], "Could not parse: a\\Uzz due to malformed old-style property list: \\U must be followed by hex digits at line 1, column 4.  Try single-quoting it."),
        (["write", "com.t", "{a = 1}"], "Could not parse: {a = 1} due to malformed old-style property list: expected ';' after the value of key \"a\" at line 1, column 7.  Try single-quoting it."),
    ])
    func everyMalformedLiteralGivesItsReason(arguments: [String], message: String) {
        let h = Harness()
        let console = CapturingConsole()
        let status = DefaultsCommand.run(arguments, configuration: Configuration(root: "/nonexistent-home/.local/share/apphome"),
                                         console: console, makeStore: { _ in h.store })
        #expect(status == 1)
        #expect(console.standardError == "defaults: \(message)\n")
        #expect(h.stored("com.t") == nil)
    }

    @Test func aLiteralOfSixtyCharactersIsEchoedWholeAndOneMoreIsCut() {
        let sixty = String(repeating: "é", count: 60)
        #expect(ValueArguments.echo(sixty) == sixty)
        #expect(ValueArguments.echo(sixty + "x") == sixty + "… (61 characters)")
    }
}
