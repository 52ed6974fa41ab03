import Foundation
import Testing

/// AppHome's lossless outputs (`--format xml|json`) and key paths (`--key-path`).
@Suite("--format and --key-path")
struct FormatAndKeyPathTests {
    static let d = "com.example.fmt"

    static let mixed = """
        {'s': 'caf\\u00e9 "q"', 'i': -3, 'big': 9007199254740993, 'r': 2.0, 'tiny': 1e-300, 'b': True,
         'when': datetime.datetime(2024, 2, 29, 23, 59, 59), 'blob': bytes(range(40)),
         'list': [1, 'two', [3.5], {}], 'nested': {'deeper': {'x': False}}}
        """

    private func populated() throws -> TempRoot {
        let root = try TempRoot()
        try root.writePlist(Self.mixed, to: root.domainFile(Self.d))
        return root
    }

    @Test func formatXMLPrintsTheDomainAsAnXMLPlist() throws {
        let root = try populated()
        let result = try root.succeed(["--format", "xml", "read", Self.d])
        #expect(result.stdout.hasPrefix("<?xml"), "\(result)")
        let out = root.workFile("out.xml")
        try result.stdoutData.write(to: out)
        try root.expectSamePlist(root.domainFile(Self.d), out)
    }

    @Test func formatXMLPrintsOneValueAsAnXMLPlist() throws {
        let root = try populated()
        let result = try root.succeed(["--format", "xml", "read", Self.d, "nested"])
        let out = root.workFile("out.xml")
        try result.stdoutData.write(to: out)
        try root.expectPlist(out, equals: "{'deeper': {'x': False}}")
    }

    @Test func formatJSONIsTypedAndLossless() throws {
        let root = try populated()
        let result = try root.succeed(["--format", "json", "read", Self.d])
        try root.pythonCheckJSON(result.stdoutData, against: root.domainFile(Self.d))
        #expect(result.stdout.contains("9007199254740993"), "integers are printed exactly: \(result)")
        #expect(result.stdout.contains("\"$date\"") && result.stdout.contains("\"$data\""), "\(result)")
    }

    @Test func formatJSONOfOneKey() throws {
        let root = try populated()
        let result = try root.succeed(["--format", "json", "read", Self.d, "list"])
        try root.pythonCheckJSON(result.stdoutData, against: root.domainFile(Self.d), key: "list")
    }

    @Test func keyPathWriteCreatesMissingDictionaries() throws {
        let root = try TempRoot()
        try root.succeed(["--key-path", "write", Self.d, "a:b:c", "-int", "1"])
        try root.succeed(["--key-path", "write", Self.d, ":a:b:d", "x"])
        try root.expectPlist(root.domainFile(Self.d), equals: "{'a': {'b': {'c': 1, 'd': 'x'}}}")
        try root.expectOutput(["--key-path", "read", Self.d, "a:b:c"], "1\n")
        try root.expectOutput(["--key-path", "read", Self.d, ":a:b"], "{\n    c = 1;\n    d = x;\n}\n")
        try root.expectOutput(["--key-path", "read-type", Self.d, "a:b"], "Type is dictionary\n")
    }

    @Test func keyPathIndexesArraysAndEscapesColons() throws {
        let root = try TempRoot()
        try root.succeed(["write", Self.d, "arr", "-array", "x", "y", "z"])
        try root.succeed(["write", Self.d, "a:b", "-int", "2"])
        try root.expectOutput(["--key-path", "read", Self.d, "arr:1"], "y\n")
        try root.expectOutput(["--key-path", "read", Self.d, "a\\:b"], "2\n")
        try root.succeed(["--key-path", "write", Self.d, "arr:1", "-string", "Y"])
        try root.succeed(["--key-path", "write", Self.d, "a\\:b", "-int", "3"])
        try root.expectPlist(root.domainFile(Self.d), equals: "{'arr': ['x', 'Y', 'z'], 'a:b': 3}")
        // Without --key-path a colon is part of the key.
        try root.expectOutput(["read", Self.d, "a:b"], "3\n")
    }

    @Test func keyPathDeleteRemovesTheLeafOnly() throws {
        let root = try TempRoot()
        try root.succeed(["--key-path", "write", Self.d, "a:b:c", "-int", "1"])
        try root.succeed(["--key-path", "write", Self.d, "a:keep", "-int", "2"])
        try root.succeed(["--key-path", "delete", Self.d, "a:b:c"])
        try root.expectPlist(root.domainFile(Self.d), equals: "{'a': {'b': {}, 'keep': 2}}")
    }

    @Test(arguments: [["read", d, "a:missing"], ["read", d, "a:x:y"], ["read", d, "arr:9"], ["read", d, "arr:x"],
                      ["delete", d, "a:missing"], ["read-type", d, "nope:x"]])
    func keyPathMissesAreErrors(_ arguments: [String]) throws {
        let root = try TempRoot()
        try root.succeed(["--key-path", "write", Self.d, "a:x", "-int", "1"])
        try root.succeed(["write", Self.d, "arr", "-array", "x"])
        let before = root.snapshot()
        let result = try root.run(["--key-path"] + arguments)
        #expect(result.isFailure(1), "\(result)")
        root.expectUnchanged(since: before, after: arguments.joined(separator: " "))
    }
}

extension TempRoot {
    /// Checks that AppHome's typed JSON in `json` equals the plist file (or one key of it).
    func pythonCheckJSON(_ json: Data, against file: URL, key: String? = nil,
                         sourceLocation: SourceLocation = #_sourceLocation) throws {
        let script = """
            j = from_typed_json(json.loads(sys.stdin.read()))
            d = load(sys.argv[1])
            if len(sys.argv) > 2: d = d[sys.argv[2]]
            report(typed(j) == typed(d), 'json differs: ' + repr(typed(j))[:1500])
            """
        let result = try python(script, [file.path] + (key.map { [$0] } ?? []), stdin: json)
        #expect(result.status == 0 && result.stdout == "OK\n", "\(result)", sourceLocation: sourceLocation)
    }
}
