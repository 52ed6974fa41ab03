import Foundation
import Testing

/// `defaults apply FILE [--dry-run] [--json]`: a desired state for several
/// domains (`Schemas/apply.md`), checked as a whole before anything is
/// written, idempotent.
@Suite("defaults apply")
struct ApplyTests {
    /// The desired state of the tests, as a Python expression (typed values).
    static let desired = """
        {'$version': 1,
         'com.example.editor': {'fontSize': 14, 'showRuler': True, 'zoom': 1.5,
                                'opened': datetime.datetime(2026, 1, 2, 3, 4, 5),
                                'recent': ['a.txt', 'b.txt'], '$delete': ['legacyTheme', 'neverThere']},
         'NSGlobalDomain': {'AppleLocale': 'en_GB'},
         'com.example.kiosk': {'$exact': True, 'startPage': 'https://intranet.example'}}
        """

    /// A root with some state already there, and the desired file.
    func prepared() throws -> (TempRoot, URL) {
        let t = try TempRoot()
        try t.succeed(["write", "com.example.editor", "{fontSize = 12; legacyTheme = dark; keep = yes;}"])
        try t.succeed(["write", "com.example.kiosk", "{startPage = \"about:blank\"; debug = 1;}"])
        let file = t.workFile("desired.plist")
        let made = try t.python(PythonScripts.writePlist, [file.path, Self.desired, "xml"])
        #expect(made.stdout == "OK\n", "\(made)")
        return (t, file)
    }

    static let changes = """
        Apple Global Domain: added AppleLocale = "en_GB"
        com.example.editor: changed fontSize = 14 (was 12)
        com.example.editor: removed legacyTheme (was dark)
        com.example.editor: added opened = "2026-01-02 03:04:05 +0000"
        com.example.editor: added recent = ( "a.txt", "b.txt" )
        com.example.editor: added showRuler = 1
        com.example.editor: added zoom = "1.5"
        com.example.kiosk: removed debug (was 1)
        com.example.kiosk: changed startPage = "https://intranet.example" (was "about:blank")

        """

    /// Every file under the root but empty lock files and the compiled-schema
    /// cache (which a validation may fill).
    func files(_ t: TempRoot) -> [String: Data] {
        t.snapshot().filter { !($0.key.hasSuffix(".lock") && $0.value.isEmpty) && !$0.key.contains("/Library/Caches/SettingsSchemas/") }
    }

    @Test func dryRunPrintsTheChangesAndWritesNothingThenApplyMakesThemOnce() throws {
        let (t, file) = try prepared()
        let before = files(t)
        let dry = try t.succeed(["apply", "--dry-run", file.path])
        #expect(dry.stdout == Self.changes.replacingOccurrences(of: "Apple Global Domain", with: "NSGlobalDomain"), "\(dry)")
        #expect(files(t) == before, "--dry-run wrote")
        let applied = try t.succeed(["apply", file.path])
        #expect(applied.stdout == dry.stdout)
        try t.expectPlist(t.domainFile("com.example.editor"), equals: """
            {'fontSize': 14, 'showRuler': True, 'zoom': 1.5, 'keep': 'yes', 'opened': datetime.datetime(2026, 1, 2, 3, 4, 5), 'recent': ['a.txt', 'b.txt']}
            """)
        try t.expectPlist(t.domainFile("com.example.kiosk"), equals: "{'startPage': 'https://intranet.example'}")
        try t.expectPlist(t.globalFile, equals: "{'AppleLocale': 'en_GB'}")
        let after = files(t)
        let again = try t.succeed(["apply", file.path])
        #expect(again.stdout == "", "a second apply changed something: \(again)")
        #expect(files(t) == after)
    }

    /// (The old `fontSize` came from old-style text: a string.)
    @Test func jsonSaysWhetherAnythingChangedWithTypedValues() throws {
        let (t, file) = try prepared()
        let first = try t.succeed(["apply", "--json", file.path])
        let object = try JSONSerialization.jsonObject(with: first.stdoutData) as? [String: Any]
        #expect(object?["changed"] as? Bool == true, "\(first)")
        let changes = object?["changes"] as? [[String: Any]] ?? []
        #expect(changes.count == 9)
        let font = changes.first { $0["key"] as? String == "fontSize" }
        #expect(font?["action"] as? String == "changed" && font?["old"] as? String == "12" && font?["new"] as? Int == 14, "\(changes)")
        #expect(changes.first { $0["key"] as? String == "debug" }?["action"] as? String == "removed")
        let second = try t.succeed([ "apply", file.path, "--json"])
        #expect(second.stdout == "{\"changed\": false, \"dry_run\": false, \"changes\": []}\n", "\(second)")
    }

    @Test func anInvalidValueInTheThirdDomainWritesNothingAtAll() throws {
        let t = try TempRoot()
        #expect(try CrashAndDoctorTests.apphome(t, ["install", SettingsBundleEndToEndTests.v1]).status == 0)
        let file = t.workFile("bad.plist")
        _ = try t.python(PythonScripts.writePlist, [file.path, """
            {'aaa.first': {'a': 1}, 'bbb.second': {'b': 2}, 'com.example.ScaryBugs': {'sortOrder': 'size'}}
            """, "binary"])
        let before = files(t)
        let result = try t.run(["apply", file.path])
        #expect(result.status == 1 && result.stdout == "", "\(result)")
        #expect(result.stderr.contains("[SB701]"), "\(result)")
        #expect(files(t) == before, "a refused apply wrote")
    }

    @Test func aManagedKeyAnywhereRefusesTheWholeApply() throws {
        let t = try TempRoot()
        try FileManager.default.createDirectory(at: t.managed, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        let managed = t.managed.appendingPathComponent("ccc.third.plist")
        _ = try t.python(PythonScripts.writePlist, [managed.path, "{'locked': 1}", "xml"])
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: managed.path)
        let file = t.workFile("managed.plist")
        _ = try t.python(PythonScripts.writePlist, [file.path, "{'aaa.first': {'a': 1}, 'ccc.third': {'locked': 2}}", "xml"])
        let result = try t.run(["apply", "--json", file.path])
        #expect(result.status == 1 && result.stdout == "", "\(result)")
        #expect(result.stderr == "defaults: Key locked of domain ccc.third is managed by \(managed.path) and cannot be changed.\nDefaults have not been changed.\n", "\(result)")
        #expect(!FileManager.default.fileExists(atPath: t.domainFile("aaa.first").path))
    }

    @Test(arguments: [
        ("[1, 2]", "the top level must be a dictionary of domains"),
        ("{'$version': 2}", "$version 2 is newer than this defaults reads (1)"),
        ("{'d': 1}", "domain d must be a dictionary of keys"),
        ("{'d': {'$delete': 'k'}}", "$delete of d must be an array of keys"),
        ("{'d': {'$exact': 1}}", "$exact of d must be a boolean"),
        ("{'d': {'$other': 1}}", "unknown directive $other in domain d"),
        ("{'d': {'k': 1, '$delete': ['k']}}", "key k of d is both set and in $delete"),
        ("{'$oops': 1}", "unknown directive $oops"),
        ("{'a..b': {}}", "Invalid domain name \"a..b\": a domain name must not contain '..'"),
    ])
    func aBadDesiredStateIsRefusedWithItsReason(_ contents: String, _ reason: String) throws {
        let t = try TempRoot()
        let file = t.workFile("bad.plist")
        _ = try t.python(PythonScripts.writePlist, [file.path, contents, "xml"])
        let result = try t.run(["apply", file.path])
        #expect(result.status == 1)
        #expect(result.stderr == "defaults: \(file.path): \(reason); defaults unchanged\n", "\(result)")
    }
}
