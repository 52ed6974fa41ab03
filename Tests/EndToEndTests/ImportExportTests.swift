import Foundation
import Testing

@Suite("import and export")
struct ImportExportTests {
    static let d = "com.example.io"

    static let mixed = """
        {'s': 'text', 'i': -3, 'r': 2.5, 'b': False, 'when': datetime.datetime(2024, 2, 29, 23, 59, 59),
         'blob': bytes(range(40)), 'list': [1, 'two', [3.0]], 'nested': {'deeper': {'x': True}}}
        """

    @Test(arguments: ["binary", "xml"])
    func importFromAFileMergesIntoTheDomain(_ format: String) throws {
        let root = try TempRoot()
        try root.succeed(["write", Self.d, "kept", "-int", "1"])
        try root.succeed(["write", Self.d, "s", "overwritten"])
        let fixture = root.workFile("in.plist")
        try root.writePlist(Self.mixed, to: fixture, format: format)
        try root.succeed(["import", Self.d, fixture.path])
        try root.expectPlist(root.domainFile(Self.d), equals: "dict(\(Self.mixed), kept=1)")
        #expect(try Data(contentsOf: root.domainFile(Self.d)).starts(with: Data("bplist00".utf8)))
    }

    @Test func importFromAnOldStyleTextFile() throws {
        let root = try TempRoot()
        let fixture = root.workFile("in.txt")
        try root.write("{ a = 1; list = (x, \"y z\"); sub = { k = <0102>; }; }", to: fixture)
        try root.succeed(["import", Self.d, fixture.path])
        try root.expectPlist(root.domainFile(Self.d),
                             equals: "{'a': '1', 'list': ['x', 'y z'], 'sub': {'k': b'\\x01\\x02'}}")
    }

    @Test func importFromStdinMerges() throws {
        let root = try TempRoot()
        try root.succeed(["write", Self.d, "kept", "yes"])
        let fixture = root.workFile("in.plist")
        try root.writePlist("{'fromStdin': 42}", to: fixture, format: "xml")
        try root.succeed(["import", Self.d, "-"], stdin: try Data(contentsOf: fixture))
        try root.expectPlist(root.domainFile(Self.d), equals: "{'kept': 'yes', 'fromStdin': 42}")
    }

    @Test func exportToAPathWritesABinaryPlist() throws {
        let root = try TempRoot()
        let fixture = root.workFile("in.plist")
        try root.writePlist(Self.mixed, to: fixture, format: "xml")
        try root.succeed(["import", Self.d, fixture.path])
        let out = root.workFile("out.plist")
        let result = try root.succeed(["export", Self.d, out.path])
        #expect(result.stdoutData.isEmpty)
        #expect(try Data(contentsOf: out).starts(with: Data("bplist00".utf8)))
        try root.expectSamePlist(fixture, out)
    }

    @Test func exportToStdoutWritesAnXMLPlist() throws {
        let root = try TempRoot()
        let fixture = root.workFile("in.plist")
        try root.writePlist(Self.mixed, to: fixture)
        try root.succeed(["import", Self.d, fixture.path])
        let result = try root.succeed(["export", Self.d, "-"])
        #expect(result.stdout.hasPrefix("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"), "\(result)")
        #expect(result.stdout.contains("<plist version=\"1.0\">"))
        let exported = root.workFile("stdout.plist")
        try result.stdoutData.write(to: exported)
        try root.expectSamePlist(fixture, exported)
    }

    @Test func exportThenImportRoundTripsEveryType() throws {
        let root = try TempRoot()
        let fixture = root.workFile("in.plist")
        try root.writePlist(Self.mixed, to: fixture)
        try root.succeed(["import", Self.d, fixture.path])
        let out = root.workFile("out.plist")
        try root.succeed(["export", Self.d, out.path])
        try root.succeed(["import", "com.example.copy", out.path])
        try root.expectSamePlist(fixture, root.domainFile("com.example.copy"))
    }

    struct ErrorCase: Sendable, CustomTestStringConvertible {
        var name: String
        /// Arguments; `@WORK` is replaced by the work directory.
        var arguments: [String]
        var stdin: String?
        var statuses: Set<Int32>
        var phrase: String
        var testDescription: String { name }
    }

    @Test(arguments: [
        ErrorCase(name: "import of a missing file", arguments: ["import", d, "@WORK/missing.plist"],
                  statuses: [1], phrase: "@WORK/missing.plist"),
        ErrorCase(name: "import of garbage", arguments: ["import", d, "@WORK/garbage.plist"],
                  statuses: [1], phrase: "@WORK/garbage.plist"),
        ErrorCase(name: "import of a non-dictionary", arguments: ["import", d, "@WORK/array.plist"],
                  statuses: [1], phrase: "not a dictionary"),
        ErrorCase(name: "import of garbage from stdin", arguments: ["import", d, "-"], stdin: "{ unterminated",
                  statuses: [1], phrase: ""),
        ErrorCase(name: "import of an empty stdin", arguments: ["import", d, "-"], stdin: "",
                  statuses: [1], phrase: ""),
        ErrorCase(name: "import without a path", arguments: ["import", d], statuses: [1, 255], phrase: ""),
        ErrorCase(name: "export without a path", arguments: ["export", d], statuses: [1, 255], phrase: ""),
        ErrorCase(name: "export of a missing domain", arguments: ["export", "com.example.none", "-"],
                  statuses: [1], phrase: "com.example.none does not exist"),
        ErrorCase(name: "export into a missing directory", arguments: ["export", d, "@WORK/no/such/dir/x.plist"],
                  statuses: [1], phrase: "@WORK/no/such/dir/x.plist"),
    ])
    func importAndExportFailuresChangeNothing(_ row: ErrorCase) throws {
        let root = try TempRoot()
        try root.succeed(["write", Self.d, "present", "1"])
        try root.write("this is not a plist {{{", to: root.workFile("garbage.plist"))
        try root.writePlist("[1, 2]", to: root.workFile("array.plist"), format: "xml")
        let before = root.snapshot()
        let arguments = row.arguments.map { $0.replacingOccurrences(of: "@WORK", with: root.work.path) }
        let result = try root.run(arguments, stdin: row.stdin.map { Data($0.utf8) })
        #expect(row.statuses.contains(result.status) && !result.signaled, "\(result)")
        #expect(result.stdoutData.isEmpty && result.stderr.hasPrefix("defaults: "), "\(result)")
        let phrase = row.phrase.replacingOccurrences(of: "@WORK", with: root.work.path)
        #expect(phrase.isEmpty || result.stderr.contains(phrase), "\(result)")
        root.expectUnchanged(since: before, after: row.name)
    }
}
