import Foundation
import Testing

/// The built `security` with a built prefsd: add, find, delete through the
/// daemon, and the same items seen on the files.
@Suite("security through prefsd")
struct SecurityThroughPrefsdTests {
    static let bundleID = "com.example.ScaryBugs"

    func security(_ t: TempRoot, _ arguments: [String], env: [String: String], stdin: String? = nil) throws -> CommandResult {
        try Subprocess.run(try TestDaemon.binary("security"), ["--root", t.root.path, "--app", Self.bundleID] + arguments,
                           environment: t.environment(env.merging(["APPHOME_KEYCHAIN_KEY_STORE": "file"]) { $1 }),
                           stdin: stdin.map { Data($0.utf8) }, ioDirectory: t.io)
    }

    @Test func addFindDeleteThroughTheDaemon() throws {
        let t = try TempRoot()
        let v1 = InstalledAppTests.examples.appendingPathComponent("ScaryBugs-v1/ScaryBugs.app").path
        let install = try Subprocess.run(try TestDaemon.binary("apphome"), ["--root", t.root.path, "install", v1],
                                         environment: t.environment(), ioDirectory: t.io)
        try #require(install.status == 0, "\(install)")
        let daemon = try TestDaemon(t)
        let viaDaemon = daemon.environment, direct = ["APPHOME_PREFSD": "off"]

        let add = try security(t, ["add-generic-password", "-s", "bugs", "-a", "ray"], env: viaDaemon, stdin: "centipede\n")
        #expect(add.status == 0 && add.stdout.isEmpty && add.stderr.isEmpty, "\(add)")
        let found = try security(t, ["find-generic-password", "-s", "bugs", "-w"], env: viaDaemon)
        #expect(found.status == 0 && found.stdout == "centipede\n", "\(found)")
        // The same item on the files, and the same listing both ways.
        let listed = try security(t, ["find-generic-password", "-s", "bugs"], env: viaDaemon)
        let listedDirect = try security(t, ["find-generic-password", "-s", "bugs"], env: direct)
        #expect(listed.status == 0 && listed.stdout == listedDirect.stdout && listed.stdout.contains("\"svce\"<blob>=\"bugs\""), "\(listed)")
        let duplicate = try security(t, ["add-generic-password", "-s", "bugs", "-a", "ray"], env: viaDaemon, stdin: "x\n")
        let duplicateDirect = try security(t, ["add-generic-password", "-s", "bugs", "-a", "ray"], env: direct, stdin: "x\n")
        #expect(duplicate.status == 45 && duplicate.status == duplicateDirect.status && duplicate.stderr == duplicateDirect.stderr, "\(duplicate)")

        let deleted = try security(t, ["delete-generic-password", "-s", "bugs"], env: viaDaemon)
        #expect(deleted.status == 0 && deleted.stdout.hasSuffix("password has been deleted.\n"), "\(deleted)")
        for env in [viaDaemon, direct] {
            let gone = try security(t, ["find-generic-password", "-s", "bugs"], env: env)
            #expect(gone.status == 44 && gone.stderr == "security: SecKeychainSearchCopyNext: The specified item could not be found in the keychain.\n", "\(gone)")
        }
        // The secret went on standard input: never in the daemon's log.
        let stopped = try daemon.stop()
        #expect(!stopped.stderr.contains("centipede"))
    }

    /// libsecret and GLib are loaded only on the path that talks to the
    /// Secret Service: not when prefsd answers (a bus set or not), not with
    /// a key file (the dynamic loader's own report, LD_DEBUG=libs).
    @Test func securityLoadsNeitherLibsecretNorGLibWhenPrefsdAnswersOrTheKeyIsInAFile() throws {
        let t = try TempRoot()
        let v1 = InstalledAppTests.examples.appendingPathComponent("ScaryBugs-v1/ScaryBugs.app").path
        let install = try Subprocess.run(try TestDaemon.binary("apphome"), ["--root", t.root.path, "install", v1],
                                         environment: t.environment(), ioDirectory: t.io)
        try #require(install.status == 0, "\(install)")
        let daemon = try TestDaemon(t)
        var bus: [String: String] = [:]
        if let address = ProcessInfo.processInfo.environment["DBUS_SESSION_BUS_ADDRESS"] { bus["DBUS_SESSION_BUS_ADDRESS"] = address }
        #expect(try security(t, ["add-generic-password", "-s", "bugs", "-a", "ray"], env: daemon.environment, stdin: "centipede\n").status == 0)
        for env in [daemon.environment.merging(bus) { $1 }, ["APPHOME_PREFSD": "off"]] {
            let found = try security(t, ["find-generic-password", "-s", "bugs", "-w"], env: env.merging(["LD_DEBUG": "libs"]) { $1 })
            #expect(found.status == 0 && found.stdout == "centipede\n", "\(found.stdout)")
            #expect(found.stderr.contains("calling init"), "LD_DEBUG=libs reported nothing")
            for library in ["libsecret-1.so", "libglib-2.0.so", "libgio-2.0.so", "libgobject-2.0.so"] {
                #expect(!found.stderr.contains(library), "\(library) was loaded (\(env))")
            }
        }
        _ = try daemon.stop()
    }
}
