import Foundation
import Testing

/// Signed bundles and team-scoped groups, with the built binaries: every
/// forged claim refused through `security` (and, in daemon mode, through
/// prefsd with the claiming app's own credential), also after the
/// installed `Info.plist` is edited; two apps of one team share an item;
/// tampering and an update from another team are refused.
@Suite("signed entitlements")
struct SignedEntitlementsTests {
    let t: TempRoot
    init() throws { t = try TempRoot() }

    func run(_ tool: String, _ arguments: [String], stdin: String? = nil) throws -> CommandResult {
        var env = ["APPHOME_KEYCHAIN_KEY_STORE": "file"]
        // Daemon mode: every keychain call must go through prefsd, with the app's own credential.
        env["APPHOME_PREFSD"] = TempRoot.daemonMode ? "require" : "off"
        return try Subprocess.run(try TestDaemon.binary(tool), ["--root", t.root.path] + arguments,
                                  environment: t.environment(env), stdin: stdin.map { Data($0.utf8) }, ioDirectory: t.io)
    }

    func apphome(_ arguments: String...) throws -> CommandResult { try run("apphome", arguments) }

    func security(_ app: String, _ arguments: [String], stdin: String? = nil) throws -> CommandResult {
        try run("security", ["--app", app] + arguments, stdin: stdin)
    }

    /// `<work>/<dir>/<Name>.app` with an old-style Info.plist holding `extra`.
    func bundle(_ dir: String, _ name: String, id: String, version: String = "1", extra: String = "") throws -> String {
        let path = t.workFile(dir).appendingPathComponent(name + ".app").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        try Data("{ CFBundleIdentifier = \(id); CFBundleVersion = \(version); \(extra) }\n".utf8)
            .write(to: URL(fileURLWithPath: path + "/Info.plist"))
        try Data("#!/bin/sh\n".utf8).write(to: URL(fileURLWithPath: path + "/\(name)"))
        return path
    }

    /// A new key pair in the work directory, and its team.
    func keygen(_ name: String) throws -> (file: String, team: String) {
        let file = t.workFile(name).path
        let r = try apphome("keygen", file)
        try #require(r.status == 0, "\(r)")
        let firstLine: Substring? = r.stdout.split(separator: "\n").first
        let lastWord: Substring? = firstLine?.split(separator: " ").last
        let team = try #require(lastWord.map { String($0) })
        return (file, team)
    }

    func sign(_ bundle: String, _ key: String) throws {
        let r = try apphome("sign", bundle, "--key", key)
        try #require(r.status == 0, "\(r)")
    }

    static let claims = "keychain-access-groups = (\"$(AppIdentifierPrefix)shared\"); \"com.apple.security.application-groups\" = (group.com.example.bugs);"

    @Test func twoAppsOfOneTeamShareAnItemAndEveryForgedClaimIsRefused() throws {
        let (key, team) = try keygen("team.key")
        let (otherKey, _) = try keygen("other.key")
        let bugs = try bundle("bugs", "Bugs", id: "com.example.Bugs", extra: Self.claims)
        let notes = try bundle("notes", "Notes", id: "com.example.Notes", extra: Self.claims)
        try sign(bugs, key)
        try sign(notes, key)
        for b in [bugs, notes] { #expect(try apphome("install", b).status == 0) }

        // An unsigned app that lists the team's group installs nothing.
        let registry = t.root.appendingPathComponent("Applications/registry.plist")
        let before = try Data(contentsOf: registry)
        let forged = try bundle("evil1", "Evil", id: "com.evil.App", extra: "keychain-access-groups = (\(team).shared, com.example.Bugs);")
        let refused = try apphome("install", forged)
        #expect(refused.status == 1)
        #expect(refused.stderr == "apphome: com.evil.App may not claim '\(team).shared': the bundle is unsigned, and an unsigned app holds only its own group (com.evil.App); sign it with 'apphome sign Evil.app --key KEYFILE' to claim shared groups\n")
        // Another team's app that claims the team's app group installs nothing either.
        let foreign = try bundle("evil2", "Evil", id: "com.evil.App", extra: "\"com.apple.security.application-groups\" = (group.com.example.bugs);")
        try sign(foreign, otherKey)
        let refusedToo = try apphome("install", foreign)
        #expect(refusedToo.status == 1 && refusedToo.stderr.contains("may not claim 'group.com.example.bugs': it belongs to team \(team)"), "\(refusedToo)")
        #expect(try Data(contentsOf: registry) == before)

        // Another team's app with no claims installs, and sees nothing of the team's.
        let evil = try bundle("evil3", "Evil", id: "com.evil.App")
        try sign(evil, otherKey)
        #expect(try apphome("install", evil).status == 0)

        let add = try security("com.example.Bugs", ["add-generic-password", "-a", "alice", "-s", "svc"], stdin: "team-secret\n")
        #expect(add.status == 0, "\(add)")
        // The add went to the first group, the team's: Notes sees it.
        let shared = try security("com.example.Notes", ["find-generic-password", "-a", "alice", "-s", "svc", "-w"])
        #expect(shared.status == 0 && shared.stdout == "team-secret\n", "\(shared)")
        let back = try security("com.example.Notes", ["--access-group", "\(team).shared", "add-generic-password", "-a", "bob", "-s", "svc"], stdin: "from-notes\n")
        #expect(back.status == 0, "\(back)")
        #expect(try security("com.example.Bugs", ["find-generic-password", "-a", "bob", "-w"]).stdout == "from-notes\n")

        func evilIsRefused(_ when: String) throws {
            let find = try security("com.evil.App", ["find-generic-password", "-a", "alice", "-s", "svc", "-w"])
            #expect(find.status == 44 && find.stdout.isEmpty, "\(when): \(find)")
            let named = try security("com.evil.App", ["--access-group", "\(team).shared", "find-generic-password", "-a", "alice", "-w"])
            #expect(named.status == 30 && named.stdout.isEmpty, "\(when): \(named)")
            #expect(named.stderr == "security: SecKeychainSearchCopyNext: A required entitlement isn't present. (The app does not hold the keychain access group '\(team).shared'.)\n", "\(when)")
            let own = try security("com.evil.App", ["--access-group", "com.example.Bugs", "dump-keychain", "-d"])
            #expect(own.status == 30, "\(when): \(own)")
            let dump = try security("com.evil.App", ["dump-keychain", "-d"])
            #expect(!dump.stdout.contains("team-secret") && !dump.stdout.contains("from-notes"), "\(when): \(dump)")
            let delete = try security("com.evil.App", ["--access-group", "\(team).shared", "delete-generic-password", "-a", "alice"])
            #expect(delete.status == 30, "\(when): \(delete)")
        }
        try evilIsRefused("as installed")
        // Editing the installed Info.plist grants nothing: the registry's record decides.
        let app = try apphome("container", "com.evil.App", "app").stdout.trimmingCharacters(in: .newlines)
        chmod(app, 0o755)
        chmod(app + "/Info.plist", 0o644)
        try Data("{ CFBundleIdentifier = com.evil.App; CFBundleVersion = 1; keychain-access-groups = (\(team).shared, com.example.Bugs); \"com.apple.security.application-groups\" = (group.com.example.bugs); }\n".utf8)
            .write(to: URL(fileURLWithPath: app + "/Info.plist"))
        try evilIsRefused("after editing the installed Info.plist")
        #expect(try apphome("container", "com.evil.App", "groups").stdout == "")
        #expect(try security("com.example.Notes", ["find-generic-password", "-a", "alice", "-w"]).stdout == "team-secret\n")

        // The team's group goes with its last member.
        #expect(try apphome("uninstall", "com.example.Bugs").status == 0)
        #expect(try security("com.example.Notes", ["find-generic-password", "-a", "alice", "-w"]).stdout == "team-secret\n")
        #expect(try apphome("uninstall", "com.example.Notes").status == 0)
        #expect(try apphome("install", bugs).status == 0)
        #expect(try security("com.example.Bugs", ["find-generic-password", "-a", "alice", "-w"]).status == 44)
    }

    @Test func verifyNamesTheProblemAndInstallAndUpdateRefuseTamperingAndAnotherPublisher() throws {
        let (key, team) = try keygen("team.key")
        let (otherKey, otherTeam) = try keygen("other.key")
        let v1 = try bundle("v1", "Bugs", id: "com.example.Bugs")
        try sign(v1, key)
        let ok = try apphome("verify", v1)
        #expect(ok.status == 0 && ok.stdout == "\(v1): valid signature, team \(team)\n", "\(ok)")
        #expect(try apphome("install", v1).status == 0)
        let info = try apphome("info", "com.example.Bugs")
        #expect(info.stdout.contains("Team: \(team)\n"), "\(info)")
        #expect(try apphome("list", "--json").stdout.contains("\"team\": \"\(team)\""))

        let unsigned = try bundle("u", "Plain", id: "com.example.Plain")
        let notSigned = try apphome("verify", unsigned)
        #expect(notSigned.status == 1 && notSigned.stderr == "apphome: \(unsigned) is not signed (no _CodeSignature/CodeResources); sign it with 'apphome sign'\n")
        #expect(try apphome("install", unsigned).status == 0)
        #expect(try apphome("list", "--json").stdout.contains("\"team\": \"unsigned\""))

        // A tampered bundle: verify names the file; update refuses it, nothing changes.
        let v2 = try bundle("v2", "Bugs", id: "com.example.Bugs", version: "2")
        try sign(v2, key)
        try Data("#!/bin/sh\necho changed\n".utf8).write(to: URL(fileURLWithPath: v2 + "/Bugs"))
        let tampered = try apphome("verify", v2)
        #expect(tampered.status == 1 && tampered.stderr == "apphome: \(v2) failed signature verification: file changed: Bugs\n", "\(tampered)")
        let home = try apphome("container", "com.example.Bugs", "data").stdout
        let refusedUpdate = try apphome("update", v2)
        #expect(refusedUpdate.status == 1 && refusedUpdate.stderr.contains("failed signature verification: file changed: Bugs"), "\(refusedUpdate)")
        // An update signed by another team (or unsigned) is refused; the home stays.
        try sign(v2, otherKey)
        let otherPublisher = try apphome("update", v2)
        #expect(otherPublisher.status == 1)
        #expect(otherPublisher.stderr == "apphome: com.example.Bugs is signed by a different publisher: installed team \(team), offered team \(otherTeam); an update must be signed by the same team\n")
        try FileManager.default.removeItem(atPath: v2 + "/_CodeSignature")
        #expect(try apphome("update", v2).stderr.contains("offered an unsigned bundle"))
        #expect(try apphome("container", "com.example.Bugs", "data").stdout == home)
        try sign(v2, key)
        #expect(try apphome("update", v2).status == 0)
    }
}
