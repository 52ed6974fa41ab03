import Foundation
import Testing

/// A literal on the command line too deep to parse: the real `defaults`
/// gives the reason `import` gives for the same text, and repeats only the
/// start of the input (with prefsd and without).
@Suite("a too-deep literal")
struct LiteralErrorTests {
    static let d = "com.example.deep"
    static let deep = String(repeating: "(", count: 3000) + String(repeating: ")", count: 3000)
    static let reason = "property list nests deeper than 2048 levels"
    static let echo = String(repeating: "(", count: 60) + "… (6000 characters)"

    @Test(arguments: [
        ["write", d, "k", deep],
        ["write", d, "k", "-array", "a", deep],
        ["write", d, "k", "-array-add", deep],
        ["write", d, "n", "-dict-add", "a", deep],
        ["--key-path", "write", d, "n.b", deep],
    ])
    func aTooDeepLiteralSaysWhyAndEchoesOnlyItsStart(_ arguments: [String]) throws {
        let t = try TempRoot()
        try t.succeed(["write", Self.d, "s", "text"])
        try t.succeed(["write", Self.d, "n", "-dict", "a", "1"])
        let before = t.snapshot()
        let result = try t.run(arguments)
        #expect(result.status == 1 && !result.signaled, "\(result)")
        #expect(result.stderr == "defaults: Could not parse: \(Self.echo) due to \(Self.reason).  Try single-quoting it.\n", "\(result)")
        #expect(result.stdout.isEmpty)
        t.expectUnchanged(since: before, after: arguments.prefix(4).joined(separator: " "))
    }

    @Test func theSameTextAsADomainOrAnImportGivesTheSameReason() throws {
        let t = try TempRoot()
        try t.succeed(["write", Self.d, "s", "text"])
        let before = t.snapshot()
        let literal = "{a = \(Self.deep);}"
        let written = try t.run(["write", Self.d, literal])
        #expect(written.status == 1 && written.stderr == "defaults: Could not parse: {a = " + String(repeating: "(", count: 55)
            + "… (6007 characters) due to \(Self.reason).  Try single-quoting it.\n", "\(written)")
        let file = t.workFile("deep.txt")
        try t.write(literal, to: file)
        let imported = try t.run(["import", Self.d, file.path])
        #expect(imported.status == 1 && imported.stderr == "defaults: Could not parse property list from \(file.path) due to \(Self.reason)\n", "\(imported)")
        t.expectUnchanged(since: before, after: "write and import of a too-deep literal")
        try t.expectOutput(["read", Self.d, "s"], "text\n")
    }
}
