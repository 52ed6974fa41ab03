import Foundation
import Testing
import TestSupport

/// An app's own SecItem calls (secitem-probe, installed as an app and started
/// with `apphome launch`) on the same items `security --app`, updates,
/// backups and uninstall see; another app and a process outside any app do not.
@Suite("Security: an app's SecItem calls on its own keychain")
struct AppSecItemTests {
    static let app = "com.example.SecProbe"
    static let other = "com.example.Other"

    let t: AppRoot
    init() throws { t = try AppRoot() }
    var root: String { t.root }

    func install(_ id: String = app, version: String = "1") throws { try t.install(id, version: version) }
    func bundle(_ id: String, version: String) throws -> String { try t.bundle(id, version: version) }
    func apphome(_ arguments: String..., env: [String: String] = [:]) throws -> ByteArgumentProcess.Result {
        try t.run("apphome", ["--root", t.root] + arguments, env: env)
    }
    func run(_ tool: String, _ arguments: [String], env: [String: String] = [:]) throws -> ByteArgumentProcess.Result {
        try t.run(tool, arguments, env: env)
    }
    /// The probe launched as the app: unconfined (`--no-sandbox`, the app's
    /// credential from its environment, on the files) unless `sandboxed`,
    /// where prefsd is the only door to the keychain.
    func probe(_ id: String = app, _ arguments: String..., sandboxed: Bool = false, env: [String: String] = [:]) throws -> ByteArgumentProcess.Result {
        try t.run("apphome", ["--root", t.root, "launch", id] + (sandboxed ? [] : ["--no-sandbox"]) + arguments, env: env)
    }

    @Test func anAddIsSeenBySecurityAndSurvivesAnUpdate() throws {
        defer { t.remove() }
        try install()
        let add = try probe(Self.app, "add", "api.example.com", "ray", "t0ken")
        #expect(add.status == 0 && add.standardOutput == "status 0: No error.\n", "\(add)")
        let seen = try run("security", ["--root", root, "--app", Self.app, "find-generic-password", "-s", "api.example.com", "-a", "ray", "-w"])
        #expect(seen.status == 0 && seen.standardOutput == "t0ken\n", "\(seen)")
        let again = try probe(Self.app, "add", "api.example.com", "ray", "other")
        #expect(again.status == 1 && again.standardOutput.hasPrefix("status -25299: "), "\(again)")

        let update = try apphome("update", try bundle(Self.app, version: "2"))
        try #require(update.status == 0, "\(update)")
        let after = try probe(Self.app, "get", "api.example.com", "ray")
        #expect(after.status == 0 && after.standardOutput == "t0ken\nstatus 0: No error.\n", "\(after)")
        let changed = try probe(Self.app, "update", "api.example.com", "ray", "n3w")
        #expect(changed.status == 0, "\(changed)")
        let listed = try probe(Self.app, "all")
        #expect(listed.standardOutput == "api.example.com/ray\nstatus 0: No error.\n", "\(listed)")
        let deleted = try probe(Self.app, "delete", "api.example.com", "ray")
        let gone = try probe(Self.app, "get", "api.example.com", "ray")
        #expect(deleted.status == 0 && gone.standardOutput.hasPrefix("status -25300: "), "\(deleted)\n\(gone)")
    }

    @Test func anItemIsInTheBackupAndGoesWithTheUninstall() throws {
        defer { t.remove() }
        try install()
        #expect(try probe(Self.app, "add", "svc", "ray", "s3cret").status == 0)
        let backup = try apphome("backup", Self.app)
        try #require(backup.status == 0, "\(backup)")
        let uninstall = try apphome("uninstall", Self.app)
        try #require(uninstall.status == 0, "\(uninstall)")
        try install()
        let wiped = try probe(Self.app, "get", "svc", "ray")
        #expect(wiped.status == 1 && wiped.standardOutput.hasPrefix("status -25300: "), "\(wiped)")
        #expect(try apphome("uninstall", Self.app).status == 0)

        let restore = try apphome("restore", Self.app, "--app", try bundle(Self.app, version: "1"))
        try #require(restore.status == 0, "\(restore)")
        let back = try probe(Self.app, "get", "svc", "ray")
        #expect(back.status == 0 && back.standardOutput == "s3cret\nstatus 0: No error.\n", "\(back)")
    }

    /// The cases of `secitem-probe api`, in an app: return keys and their
    /// combinations, persistent refs, access control, the classes and keys
    /// AppHome does not offer, synchronizable items, add with a return key.
    @Test func theAPIAnswersAsApplesDoesForEachCase() throws {
        defer { t.remove() }
        try install()
        let r = try probe(Self.app, "api")
        let expected = """
        add internet password: 0
        copy all: 0 1 item(s): class=inet srvr=example.com ptcl=htps atyp=form pdmn=ak labl=Example port=443 data=pw1 created=true
        by persistent ref: 0 pw1
        forged persistent ref: -50
        access control with biometry: -4 Function or operation not implemented. (kSecAttrAccessControl asks for biometry, which AppHome cannot check: there is no one to ask on this device)
        access control, protection only: 0 0 pdmn=cku
        key class: -4
        unknown key: -50
        no class: -50
        update with a return key: -50
        creator: -4
        add synchronizable: 0
        find it without synchronizable: -25300
        find it with kSecAttrSynchronizableAny: 0
        add returning data: 0 r
        delete all generic passwords: 0
        then none is found: -25300
        status 0: No error.

        """
        #expect(r.status == 0 && r.standardOutput == expected, "\(r)")
    }

    @Test func anotherAppAndAProcessOutsideAnyAppCannotReadIt() throws {
        defer { t.remove() }
        try install()
        try install(Self.other)
        #expect(try probe(Self.app, "add", "svc", "ray", "mine").status == 0)
        let other = try probe(Self.other, "get", "svc", "ray")
        #expect(other.status == 1 && other.standardOutput.hasPrefix("status -25300: "), "\(other)")
        let asGroup = try probe(Self.other, "get", "svc", "ray", Self.app)
        #expect(asGroup.status == 1 && asGroup.standardOutput.hasPrefix("status -34018: ") && asGroup.standardOutput.contains("'\(Self.app)'"), "\(asGroup)")
        let outside = try run("secitem-probe", ["get", "svc", "ray"], env: ["APPHOME_ROOT": root])
        #expect(outside.status == 1 && outside.standardOutput.hasPrefix("status -34018: ") && outside.standardOutput.contains("apphome run"), "\(outside)")
    }

    @Test func throughPrefsdTheAppsItemsAreTheSame() throws {
        defer { t.remove() }
        try install()
        let socket = t.base + "/run/prefsd.sock"
        let prefsd = Process()
        prefsd.executableURL = URL(fileURLWithPath: AppRoot.binary("prefsd"))
        prefsd.arguments = ["--foreground", "--root", root, "--socket", socket]
        prefsd.environment = t.environment()
        prefsd.standardOutput = FileHandle.nullDevice
        prefsd.standardError = FileHandle.nullDevice
        try prefsd.run()
        defer { prefsd.terminate(); prefsd.waitUntilExit() }
        var waited = 0
        while !FileManager.default.fileExists(atPath: socket) && waited < 1000 { usleep(10_000); waited += 1 }
        let through = ["APPHOME_PREFSD": "require", "APPHOME_SOCKET": socket]
        let add = try probe(Self.app, "add", "svc", "ray", "via-prefsd", sandboxed: true, env: through)
        #expect(add.status == 0, "\(add)")
        let direct = try probe(Self.app, "get", "svc", "ray")
        #expect(direct.standardOutput == "via-prefsd\nstatus 0: No error.\n", "\(direct)")
        let seen = try run("security", ["--root", root, "--app", Self.app, "find-generic-password", "-s", "svc", "-w"], env: through)
        #expect(seen.status == 0 && seen.standardOutput == "via-prefsd\n", "\(seen)")
    }
}
