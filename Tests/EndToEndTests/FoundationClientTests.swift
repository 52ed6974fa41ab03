import Foundation
import Testing

/// Stock Foundation as the client: a program that imports only Foundation,
/// built with `swiftc`, installed as an app and started with `apphome
/// launch`. Its `UserDefaults` is the app's AppHome domain both ways, sees
/// the global domain and its group's suite, and `defaults watch` sees what it
/// writes (with and without prefsd: the suite runs in both modes).
@Suite("stock Foundation's UserDefaults")
struct FoundationClientTests {
    let t: TempRoot
    init() throws { t = try TempRoot() }

    static let bundleID = "com.example.Probe"
    static let group = "group.com.example.probe"

    /// `Probe read SUITE KEY...` prints `KEY=VALUE` (or `KEY=nil`);
    /// `Probe write SUITE KEY VALUE` sets and synchronizes (status 1 when
    /// that fails). SUITE `-` is `UserDefaults.standard`; `write
    /// NSGlobalDomain KEY VALUE` replaces the global domain.
    static let source = """
    import Foundation

    let args = CommandLine.arguments
    guard args.count >= 3 else { print("usage: Probe read|write SUITE ..."); exit(2) }
    if args[1] == "write", args[2] == "NSGlobalDomain" {
        print("bundle=\\(Bundle.main.bundleIdentifier ?? "nil")")
        UserDefaults.standard.setPersistentDomain([args[3]: args[4]], forName: UserDefaults.globalDomain)
        exit(UserDefaults.standard.synchronize() ? 0 : 1)
    }
    let defaults = args[2] == "-" ? UserDefaults.standard : UserDefaults(suiteName: args[2])!
    print("bundle=\\(Bundle.main.bundleIdentifier ?? "nil")")
    switch args[1] {
    case "read":
        for key in args.dropFirst(3) { print("\\(key)=\\(defaults.object(forKey: key).map { "\\($0)" } ?? "nil")") }
    case "write":
        defaults.set(args[4], forKey: args[3])
        exit(defaults.synchronize() ? 0 : 1)
    default:
        exit(2)
    }

    """

    func apphome(_ arguments: String...) throws -> CommandResult {
        try Subprocess.run(try TestDaemon.binary("apphome"), ["--root", t.root.path] + arguments,
                           environment: t.environment(), ioDirectory: t.io)
    }

    /// Signs and installs `Probe.app` (the built program and an Info.plist
    /// naming it) with the group.
    func installProbe() throws {
        let probe = try RealClients.swiftProgram("Probe", source: Self.source)
        let app = t.workFile("Probe.app")
        try FileManager.default.createDirectory(at: app, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: probe, to: app.appendingPathComponent("Probe"))
        try t.writePlist("{'CFBundleIdentifier': '\(Self.bundleID)', 'CFBundleVersion': '1', 'CFBundleExecutable': 'Probe', 'com.apple.security.application-groups': ['\(Self.group)']}",
                         to: app.appendingPathComponent("Info.plist"), format: "xml")
        let key = t.workFile("team.key").path
        for r in [try apphome("keygen", key), try apphome("sign", app.path, "--key", key), try apphome("install", app.path)] {
            try #require(r.status == 0, "\(r)")
        }
    }

    /// A bundle with a `Resources/` folder, as `examples/ScaryBugs-v1` has:
    /// stock Foundation reads `Resources/Info.plist`. Without it `install`
    /// warns (and `Bundle.main` has no identifier); with it the app's
    /// `UserDefaults.standard` is its domain.
    @Test func aBundleWithResourcesNeedsItsInfoPlistInResourcesAndInstallSaysSo() throws {
        let probe = try RealClients.swiftProgram("Probe", source: Self.source)
        let app = t.workFile("Probe.app")
        try FileManager.default.createDirectory(at: app.appendingPathComponent("Resources"), withIntermediateDirectories: true)
        try Data("bugs\n".utf8).write(to: app.appendingPathComponent("Resources/bugs.txt"))
        try FileManager.default.copyItem(at: probe, to: app.appendingPathComponent("Probe"))
        try t.writePlist("{'CFBundleIdentifier': '\(Self.bundleID)', 'CFBundleVersion': '1', 'CFBundleExecutable': 'Probe'}",
                         to: app.appendingPathComponent("Info.plist"), format: "xml")
        let installed = try apphome("install", app.path)
        #expect(installed.status == 0 && installed.stderr.contains("apphome: warning: the bundle has a Resources/ folder, so stock Foundation's Bundle.main reads Resources/Info.plist"), "\(installed)")
        try t.succeed(["write", Self.bundleID, "fromDefaults", "one"])
        let missed = try apphome("launch", Self.bundleID, "read", "-", "fromDefaults")
        #expect(missed.stdout == "bundle=nil\nfromDefaults=nil\n", "\(missed)")
        // The layout Foundation needs: the same Info.plist in Resources/ too.
        try FileManager.default.copyItem(at: app.appendingPathComponent("Info.plist"), to: app.appendingPathComponent("Resources/Info.plist"))
        try t.writePlist("{'CFBundleIdentifier': '\(Self.bundleID)', 'CFBundleVersion': '2', 'CFBundleExecutable': 'Probe'}",
                         to: app.appendingPathComponent("Info.plist"), format: "xml")
        try t.writePlist("{'CFBundleIdentifier': '\(Self.bundleID)', 'CFBundleVersion': '2', 'CFBundleExecutable': 'Probe'}",
                         to: app.appendingPathComponent("Resources/Info.plist"), format: "xml")
        let updated = try apphome("update", app.path)
        #expect(updated.status == 0 && !updated.stderr.contains("warning"), "\(updated)")
        let found = try apphome("launch", Self.bundleID, "read", "-", "fromDefaults")
        #expect(found.status == 0 && found.stdout == "bundle=\(Self.bundleID)\nfromDefaults=one\n", "\(found)")
    }

    @Test func theAppReadsWhatDefaultsWroteInItsDomainTheGlobalDomainAndItsGroup() throws {
        try installProbe()
        try t.succeed(["write", Self.bundleID, "fromDefaults", "one"])
        try t.succeed(["write", "-g", "globalKey", "two"])
        try t.succeed(["write", Self.group, "groupKey", "three"])
        let app = try apphome("launch", Self.bundleID, "read", "-", "fromDefaults", "globalKey", "groupKey")
        #expect(app.status == 0 && app.stdout == "bundle=\(Self.bundleID)\nfromDefaults=one\nglobalKey=two\ngroupKey=nil\n", "\(app)")
        let suite = try apphome("launch", Self.bundleID, "read", Self.group, "groupKey", "globalKey")
        #expect(suite.status == 0 && suite.stdout == "bundle=\(Self.bundleID)\ngroupKey=three\nglobalKey=two\n", "\(suite)")
    }

    @Test func defaultsReadsWhatTheAppWroteAndWatchSeesIt() throws {
        try installProbe()
        try t.succeed(["write", Self.bundleID, "fromDefaults", "one"])
        let watch = try t.start(["watch", Self.bundleID])
        usleep(300_000)
        let wrote = try apphome("launch", Self.bundleID, "write", "-", "fromApp", "hello")
        #expect(wrote.status == 0, "\(wrote)")
        usleep(500_000)
        watch.kill(SIGKILL)
        let seen = try watch.finish()
        #expect(seen.stdout == "fromApp = hello\n", "\(seen)")
        #expect(try t.succeed(["read", Self.bundleID, "fromApp"]).stdout == "hello\n")
        // Foundation wrote XML, in place; AppHome's next write keeps its key.
        try t.succeed(["write", Self.bundleID, "fromDefaults", "again"])
        #expect(try t.succeed(["read", Self.bundleID]).stdout == "{\n    fromApp = hello;\n    fromDefaults = again;\n}\n")
        // The group suite, written by the app, is the group's.
        #expect(try apphome("launch", Self.bundleID, "write", Self.group, "groupFromApp", "shared").status == 0)
        #expect(try t.succeed(["read", Self.group, "groupFromApp"]).stdout == "shared\n")
    }

    @Test func theAppCannotChangeTheUsersGlobalDomain() throws {
        try installProbe()
        try t.succeed(["write", "-g", "globalKey", "two"])
        let before = try Data(contentsOf: t.globalFile)
        let r = try apphome("launch", Self.bundleID, "write", "NSGlobalDomain", "globalKey", "changed")
        #expect(r.stdout.hasPrefix("bundle=\(Self.bundleID)\n"), "\(r)")
        #expect(try Data(contentsOf: t.globalFile) == before)
        #expect(try t.succeed(["read", "-g", "globalKey"]).stdout == "two\n")
    }

    @Test func launchRefusesAnAppWhoseExecutableIsMissing() throws {
        try installProbe()
        let exe = try apphome("container", Self.bundleID, "app").stdout.trimmingCharacters(in: .whitespacesAndNewlines) + "/Probe"
        try FileManager.default.removeItem(atPath: exe)
        let r = try apphome("launch", Self.bundleID)
        #expect(r.status == 1 && r.stderr.hasSuffix("the executable 'Probe' is missing or not executable\n"), "\(r)")
        let unknown = try apphome("launch", "com.example.Nothing")
        #expect(unknown.status == 1 && unknown.stderr == "apphome: com.example.Nothing is not installed\n", "\(unknown)")
    }
}
