import Foundation
import Testing

/// Values an administrator forces (`APPHOME_MANAGED_DIR`): above every layer,
/// refused to every writer, ignored when anyone but root could have put them
/// there. Run with and without prefsd (`make test` runs the suite both ways).
@Suite("managed preferences")
struct ManagedPreferencesTests {
    static let domain = "com.example.managed"

    /// Makes the managed directory (root's, 0755) and forces `contents` (a
    /// Python expression) in `file`, 0644.
    func force(_ t: TempRoot, _ contents: String, in file: String = "\(Self.domain).plist") throws -> URL {
        try FileManager.default.createDirectory(at: t.managed, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        let url = t.managed.appendingPathComponent(file)
        let written = try t.python(PythonScripts.writePlist, [url.path, contents, "xml"])
        #expect(written.stdout == "OK\n", "\(written)")
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: url.path)
        return url
    }

    @Test func aForcedValueBeatsEveryLayerWhileReadShowsTheDomainsOwnFile() throws {
        let t = try TempRoot()
        try t.succeed(["write", Self.domain, "volume", "-int", "3"])
        _ = try force(t, "{'volume': 7}")
        try t.expectOutput(["read", Self.domain, "volume"], "3\n")
        try t.expectOutput(["read", "--effective", Self.domain, "volume"], "7\n(layer: managed)\n")
        // Above the argument domain too.
        try t.expectOutput(["read", "--effective", Self.domain, "volume", "-volume", "9"], "7\n(layer: managed)\n")
        try t.expectOutput(["--format", "json", "read", "--effective", Self.domain, "volume"], "{\"layer\": \"managed\", \"value\": 7}\n")
    }

    @Test func aManagedGlobalKeyBeatsAnAppsOwnValue() throws {
        let t = try TempRoot()
        try t.succeed(["write", Self.domain, "AppleLocale", "fr_FR"])
        _ = try force(t, "{'AppleLocale': 'en_GB'}", in: ".GlobalPreferences.plist")
        try t.expectOutput(["read", "--effective", Self.domain, "AppleLocale"], "en_GB\n(layer: managed)\n")
        try t.expectOutput(["read", "--effective", "-g", "AppleLocale"], "en_GB\n(layer: managed)\n")
        let refused = try t.run(["write", Self.domain, "AppleLocale", "de_DE"])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains(t.managed.appendingPathComponent(".GlobalPreferences.plist").path), "\(refused)")
    }

    @Test(arguments: [
        ["write", domain, "volume", "-int", "1"],
        ["write", domain, "volume", "-int", "7"],
        ["write", "--force", domain, "volume", "-int", "1"],
        ["write", domain, "{volume = 1; other = 2;}"],
        ["write", domain, "{other = 2;}"],
        ["delete", domain, "volume"],
        ["delete", domain],
        ["rename", domain, "volume", "loudness"],
        ["rename", domain, "other", "volume"],
    ])
    func everyWriterOfAForcedKeyIsRefusedAndNothingIsWritten(_ arguments: [String]) throws {
        let t = try TempRoot()
        try t.succeed(["write", Self.domain, "{volume = 3; other = 1;}"])
        let file = try force(t, "{'volume': 7}")
        let before = t.snapshot()
        let result = try t.run(arguments)
        #expect(result.status == 1, "\(result)")
        #expect(result.stderr == "defaults: Key volume of domain \(Self.domain) is managed by \(file.path) and cannot be changed.\nDefaults have not been changed.\n", "\(result)")
        #expect(t.snapshot().filter { !$0.key.hasSuffix(".lock") } == before.filter { !$0.key.hasSuffix(".lock") })
    }

    /// Issue 23, finding 4: the managed layer holds whatever the spelling.
    /// The domain named by its file's path (with or without `.plist`, with
    /// a doubled slash, through a link to the directory) is the domain.
    @Test func aForcedKeyIsHeldWhenTheDomainIsNamedByItsPath() throws {
        let t = try TempRoot()
        try t.succeed(["write", Self.domain, "{volume = 3; other = 1;}"])
        let file = try force(t, "{'volume': 7}")
        let link = t.workFile("prefs-link")
        try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: t.preferences.path)
        let before = t.snapshot()
        let spellings = [t.preferences.path + "/" + Self.domain, t.preferences.path + "/" + Self.domain + ".plist",
                         t.root.path + "//Library/Preferences/" + Self.domain, link.path + "/" + Self.domain]
        for path in spellings {
            let result = try t.run(["write", path, "volume", "-int", "1"])
            #expect(result.status == 1, "\(path): \(result)")
            #expect(result.stderr == "defaults: Key volume of domain \(Self.domain) is managed by \(file.path) and cannot be changed.\nDefaults have not been changed.\n", "\(path): \(result)")
            let deleted = try t.run(["delete", path, "volume"])
            #expect(deleted.status == 1, "\(path): \(deleted)")
            // apply, with the path as the domain.
            let desired = t.workFile("desired.json")
            try Data("{\"\(path)\": {\"volume\": 2}}".utf8).write(to: desired)
            let applied = try t.run(["apply", desired.path])
            #expect(applied.status == 1 && applied.stderr.contains("Key volume of domain \(Self.domain) is managed"), "\(path): \(applied)")
        }
        #expect(t.snapshot().filter { !$0.key.hasSuffix(".lock") } == before.filter { !$0.key.hasSuffix(".lock") })
        // Another key of the domain, by path, is written as before.
        try t.succeed(["write", spellings[0], "other", "-int", "5"])
        try t.expectOutput(["read", Self.domain, "other"], "5\n")
    }

    /// Issue 23, finding 8: a FIFO where a managed file should be is named
    /// as one, not reported as a bare "Invalid argument".
    @Test func aManagedFIFOIsNamedAsAFIFO() throws {
        let t = try TempRoot()
        try t.succeed(["write", Self.domain, "volume", "-int", "3"])
        try FileManager.default.createDirectory(at: t.managed, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        let fifo = t.managed.appendingPathComponent("\(Self.domain).plist").path
        #expect(mkfifo(fifo, 0o644) == 0)
        let read = try t.run(["read", "--effective", Self.domain, "volume"])
        #expect(read.status == 0 && read.stdout == "3\n(layer: application)\n", "\(read)")
        #expect(read.stderr.contains("ignoring managed preferences file \(fifo): is a FIFO, not a regular file"), "\(read)")
        #expect(!read.stderr.contains("Invalid argument"), "\(read)")
    }

    @Test func importOfAForcedKeyIsRefused() throws {
        let t = try TempRoot()
        let file = try force(t, "{'volume': 7}")
        let source = t.workFile("in.plist")
        _ = try t.python(PythonScripts.writePlist, [source.path, "{'volume': 1, 'free': 2}", "binary"])
        let result = try t.run(["import", Self.domain, source.path])
        #expect(result.status == 1)
        #expect(result.stderr.contains("managed by \(file.path)"), "\(result)")
        #expect(!FileManager.default.fileExists(atPath: t.domainFile(Self.domain).path))
        // Keys nobody forces are written as before.
        try t.succeed(["write", Self.domain, "free", "-int", "2"])
    }

    @Test(arguments: ["owner", "group-writable", "directory"])
    func aManagedFileAnyoneButRootCouldWriteIsIgnoredWithAWarning(_ flaw: String) throws {
        let t = try TempRoot()
        try t.succeed(["write", Self.domain, "volume", "-int", "3"])
        let file = try force(t, "{'volume': 7}")
        let named: String
        switch flaw {
        case "owner":
            #expect(chown(file.path, 65534, 65534) == 0)
            named = file.path
        case "group-writable":
            try FileManager.default.setAttributes([.posixPermissions: 0o664], ofItemAtPath: file.path)
            named = file.path
        default:
            try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: t.managed.path)
            named = t.managed.path
        }
        let read = try t.run(["read", "--effective", Self.domain, "volume"])
        #expect(read.status == 0 && read.stdout == "3\n(layer: application)\n", "\(read)")
        #expect(read.stderr.hasPrefix("defaults: warning: ignoring ") && read.stderr.contains(named), "\(read)")
        #expect(read.stderr.components(separatedBy: "\n").count == 2, "one warning: \(read)")
        // Not forced, so writable.
        let write = try t.run(["write", Self.domain, "volume", "-int", "4"])
        #expect(write.status == 0, "\(write)")
        try t.expectPlist(t.domainFile(Self.domain), key: "volume", equals: "4")
    }

    @Test func aWatcherThroughPrefsdIsToldWhenAManagedValueChanges() throws {
        let t = try TempRoot()
        let daemon = try TestDaemon(t)
        try t.succeed(["write", Self.domain, "volume", "-int", "3"], env: daemon.environment)
        let watch = try t.start(["watch", Self.domain], env: daemon.environment)
        usleep(300_000)
        let file = try force(t, "{'volume': 7}")
        usleep(400_000)
        // Another domain's managed file: not this watcher's business.
        _ = try force(t, "{'x': 1}", in: "com.example.other.plist")
        usleep(300_000)
        try FileManager.default.removeItem(at: file)
        usleep(500_000)
        watch.kill(SIGKILL)
        let seen = try watch.finish()
        #expect(seen.stdout == "volume = 7\nvolume = 3\n", "\(seen)")
        // prefsd refuses the forced key for a raw client too.
        _ = try force(t, "{'volume': 7}")
        usleep(200_000)
        let refused = try t.run(["write", Self.domain, "volume", "-int", "1"], env: daemon.environment)
        #expect(refused.status == 1 && refused.stderr.contains("is managed by"), "\(refused)")
        _ = try daemon.stop()
    }
}
