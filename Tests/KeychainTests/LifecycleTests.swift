import Foundation
import Testing
@testable import Keychain
import Containers
import Backups
import PropertyList

/// The keychain in app lifecycles: update keeps items, uninstall
/// crypto-shreds them (a shared group lasts until its last member goes),
/// backups restore on the same device only.
@Suite struct LifecycleTests {
    struct Setup {
        let scratch: KeychainScratch
        let manager: ContainerManager
        let participant: KeychainParticipant
        var keychain: Keychain { scratch.keychain() }

        init(_ s: KeychainScratch = KeychainScratch()) {
            scratch = s
            participant = KeychainParticipant(root: s.root, policy: .fileOnly, now: testClock)
            manager = ContainerManager(root: s.root, now: testClock, participants: [participant])
        }

        func install(_ id: String, version: String = "1", groups: [String] = []) throws -> KeychainContext {
            let bundle = try scratch.makeBundle(id + "-" + version, id: id, version: version, groups: groups)
            let report = try manager.install(AppBundle(path: bundle))
            return try KeychainContext(installed: report.entry)
        }
    }

    @Test func contextsComeFromTheRecordedEntitlementsInApplesOrderAndAnEditedInfoPlistGrantsNothing() throws {
        let t = Setup()
        let bundle = try t.scratch.makeBundle("v1", id: "com.example.A", groups: ["$(AppIdentifierPrefix)kc"], appGroups: ["group.com.example.app"])
        let entry = try t.manager.install(AppBundle(path: bundle)).entry
        let c = try KeychainContext(installed: entry)
        #expect(c.accessGroups.map(\.rawValue) == [team + ".kc", "com.example.A", "group.com.example.app"])
        // Editing the installed bundle's Info.plist changes nothing: the registry's record counts.
        let home = try t.manager.home(for: try BundleIdentifier("com.example.A"))
        chmod(home.app, 0o755)
        chmod(home.app + "/Info.plist", 0o644)
        let forged: PlistValue = .dictionary(["CFBundleIdentifier": .string("com.example.A"), "CFBundleVersion": .string("1"),
                                              "keychain-access-groups": .array([.string("com.example.Victim")])])
        try t.scratch.write(try PlistCodec.encode(forged, format: .xml), home.app + "/Info.plist")
        let again = try KeychainContext(installed: try t.manager.entry(for: try BundleIdentifier("com.example.A")))
        #expect(again == c)
        let victim = try t.install("com.example.Victim")
        try t.keychain.add(generic("v", "svc"), data: secret("pv"), context: victim)
        let victimGroup = try group("com.example.Victim")
        #expect(status { () throws(KeychainError) in
            _ = try t.keychain.copyMatching(query(account: "v", group: victimGroup), context: again)
        } == -34018)
        #expect(status { () throws(KeychainError) in _ = try t.keychain.copyMatching(query(account: "v"), context: again) } == -25300)
    }

    @Test func updateLeavesItemsUntouched() throws {
        let t = Setup()
        let a = try t.install("com.example.A")
        try t.keychain.add(generic("alice", "svc"), data: secret("pw"), context: a)
        let before = t.scratch.bytes(t.scratch.keychains + "/com.example.A.keychain")
        let v2 = try t.scratch.makeBundle("A-2", id: "com.example.A", version: "2")
        _ = try t.manager.update(AppBundle(path: v2))
        #expect(t.scratch.bytes(t.scratch.keychains + "/com.example.A.keychain") == before)
        #expect(text(try t.keychain.copyMatching(query(account: "alice"), context: a)[0].data) == "pw")
    }

    @Test func uninstallShredsTheAppsItemsAndASharedGroupLastsUntilItsLastMember() throws {
        let t = Setup()
        let a = try t.install("com.example.A", groups: ["$(AppIdentifierPrefix)shared"])
        let b = try t.install("com.example.B", groups: ["$(AppIdentifierPrefix)shared"])
        let shared = try group(team + ".shared")
        // An add without a group goes to the first group, the signed one (Apple's order).
        try t.keychain.add(generic("s", "svc"), data: secret("ps"), context: a)
        #expect(try t.keychain.copyMatching(query(account: "s", data: false, attributes: true), context: a)[0].attributes?.accessGroup == shared)
        try t.keychain.add(generic("a", "svc", group: try group("com.example.A")), data: secret("pa"), context: a)
        try t.keychain.add(generic("b", "svc"), data: secret("pb"), context: b)
        let leftover = t.scratch.bytes(t.scratch.keychains + "/com.example.A.keychain")!

        let report = try t.manager.uninstall(try BundleIdentifier("com.example.A"))
        #expect(report.participantFailures.isEmpty)
        #expect(t.scratch.files().contains("com.example.A.keychain") == false)
        #expect(text(try t.keychain.copyMatching(query(account: "s"), context: b)[0].data) == "ps")
        #expect(text(try t.keychain.copyMatching(query(account: "b"), context: b)[0].data) == "pb")

        // A leftover copy of the file cannot be opened: its key is gone.
        try t.scratch.write(leftover, t.scratch.keychains + "/com.example.A.keychain")
        let a2 = try t.install("com.example.A")
        #expect(status { () throws(KeychainError) in _ = try t.keychain.copyMatching(query(account: "a"), context: a2) } == -26275)
        _ = try t.manager.uninstall(try BundleIdentifier("com.example.A"))

        _ = try t.manager.uninstall(try BundleIdentifier("com.example.B"))
        #expect(t.scratch.files().filter { $0.hasSuffix(".keychain") } == [])
        let keys = try PlistCodec.decode(t.scratch.bytes(t.scratch.keychains + "/keys.plist")!).dictionaryValue!["Keys"]!.dictionaryValue!
        #expect(keys.isEmpty)
    }

    @Test func installIssuesTheCredentialUpdateKeepsItAndARestoreIssuesANewOneNotTheBackedUpOne() throws {
        let t = Setup()
        _ = try t.install("com.example.A")
        let id = try BundleIdentifier("com.example.A")
        let installed = try #require(try AppCredential.read(home: t.manager.home(for: id)))
        #expect(try AppCredential.issue(home: t.manager.home(for: id)) == installed)

        let v2 = try t.scratch.makeBundle("A-2", id: "com.example.A", version: "2")
        let update = try t.manager.update(AppBundle(path: v2))
        #expect(update.participantFailures.isEmpty)
        #expect(try AppCredential.read(home: update.home) == installed)

        let backup = try t.manager.backup(id, to: t.scratch.root + "/Backups")
        #expect(backup.excluded.isEmpty)
        #expect(!backup.manifest.entries.contains { $0.path.hasPrefix("Library/Keychains") })
        #expect(backup.manifest.entries.contains { $0.path == "Library/Preferences" })
        let restored = try t.manager.restore(from: backup.manifestPath)
        #expect(restored.participantFailures.isEmpty)
        let fresh = try #require(try AppCredential.read(home: restored.home))
        #expect(fresh != installed)
        #expect(AppCredential.verify(fresh, home: restored.home))
        #expect(!AppCredential.verify(installed, home: restored.home))
    }

    @Test func aCredentialThatCannotBeIssuedIsReportedAndTheInstallStands() throws {
        let t = Setup()
        let bundle = try t.scratch.makeBundle("A-1", id: "com.example.A")
        struct Failing: AppDataParticipant {
            var name: String { "keychain" }
            func appHomeReady(_ entry: RegistryEntry, home: ApplicationHome) throws { throw KeychainError.invalidParameter("no") }
            func appUninstalled(_ entry: RegistryEntry, remaining: [RegistryEntry]) throws {}
            func backupPayload(for entry: RegistryEntry, secrets: BackupSecrets) throws -> [UInt8]? { nil }
            func restore(_ payload: [UInt8], for entry: RegistryEntry, secrets: BackupSecrets) throws -> [String] { [] }
        }
        let manager = ContainerManager(root: t.scratch.root, now: testClock, participants: [Failing()])
        let report = try manager.install(AppBundle(path: bundle))
        #expect(report.participantFailures.count == 1)
        #expect(report.participantFailures[0].hasPrefix("keychain could not set up the home of com.example.A: "))
        #expect(try manager.entry(for: BundleIdentifier("com.example.A")).homeUUID == report.entry.homeUUID)
    }

    @Test func aDamagedInfoPlistOfARemainingAppChangesNothingAtUninstallTheRecordDecides() throws {
        let t = Setup()
        let a = try t.install("com.example.A")
        let b = try t.install("com.example.B", groups: ["$(AppIdentifierPrefix)shared"])
        try t.keychain.add(generic("a", "svc"), data: secret("pa"), context: a)
        try t.keychain.add(generic("s", "svc", group: try group(team + ".shared")), data: secret("ps"), context: b)
        let home = try t.manager.home(for: try BundleIdentifier("com.example.B"))
        chmod(home.app, 0o755)
        try t.scratch.write(Array("not a plist".utf8), home.app + "/Info.plist")
        let report = try t.manager.uninstall(try BundleIdentifier("com.example.A"))
        #expect(report.participantFailures.isEmpty)
        #expect(t.scratch.files().filter { $0.hasSuffix(".keychain") } == ["\(team).shared.keychain"])
        #expect(text(try t.keychain.copyMatching(query(account: "s"), context: b)[0].data) == "ps")
    }

    @Test func uninstallShredsWithoutNeedingTheDeviceKey() throws {
        let t = Setup()
        let a = try t.install("com.example.A")
        let service = InMemorySecretStore()
        try Keychain(root: t.scratch.root, policy: DeviceKeyPolicy(secretStore: service), now: testClock)
            .add(generic("alice", "svc"), data: secret("pw"), context: a)
        // The participant has no Secret Service at hand (.fileOnly): still shreds.
        let report = try t.manager.uninstall(try BundleIdentifier("com.example.A"))
        #expect(report.participantFailures.isEmpty)
        #expect(t.scratch.files().filter { $0.hasSuffix(".keychain") } == [])
    }

    @Test func aReinstalledAppStartsWithAnEmptyKeychain() throws {
        let t = Setup()
        let a = try t.install("com.example.A")
        try t.keychain.add(generic("alice", "svc"), data: secret("pw"), context: a)
        _ = try t.manager.uninstall(try BundleIdentifier("com.example.A"))
        let again = try t.install("com.example.A")
        #expect(status { () throws(KeychainError) in _ = try t.keychain.copyMatching(query(), context: again) } == -25300)
        try t.keychain.add(generic("alice", "svc"), data: secret("new"), context: again)
        #expect(text(try t.keychain.copyMatching(query(), context: again)[0].data) == "new")
    }

    @Test func aBackupRestoresOnTheSameDeviceEvenAfterUninstall() throws {
        let t = Setup()
        let a = try t.install("com.example.A")
        try t.keychain.add(generic("plain", "svc"), data: secret("plain-secret-p1"), context: a)
        try t.keychain.add(generic("local", "svc", accessibility: .whenUnlockedThisDeviceOnly), data: secret("p2"), context: a)
        let entry = try t.manager.entry(for: try BundleIdentifier("com.example.A"))
        let payload = try #require(try t.participant.backupPayload(for: entry, secrets: .none))
        // Nothing of the secrets or names is in the payload in clear.
        // (Long, so that random ciphertext cannot hold it by chance.)
        #expect(!String(decoding: payload, as: UTF8.self).contains("plain-secret-p1"))
        #expect(!String(decoding: payload, as: UTF8.self).contains("plain"))

        _ = try t.manager.uninstall(try BundleIdentifier("com.example.A"))
        let again = try t.install("com.example.A")
        try t.keychain.add(generic("plain", "svc"), data: secret("changed"), context: again)
        try t.keychain.add(generic("extra", "svc"), data: secret("p3"), context: again)
        let notes = try t.participant.restore(payload, for: try t.manager.entry(for: try BundleIdentifier("com.example.A")), secrets: .none)
        #expect(notes == ["keychain: restored 2 item(s) of access group com.example.A"])
        let all = try t.keychain.copyMatching(query(limit: .all, attributes: true), context: again)
        #expect(Dictionary(uniqueKeysWithValues: all.map { ($0.attributes!.account, text($0.data)!) }) == ["plain": "plain-secret-p1", "local": "p2", "extra": "p3"])
    }

    @Test func aBackupFromAnotherDeviceIsSkippedWithANote() throws {
        let here = Setup()
        let a = try here.install("com.example.A")
        try here.keychain.add(generic("plain", "svc"), data: secret("p1"), context: a)
        try here.keychain.add(generic("local", "svc", accessibility: .afterFirstUnlockThisDeviceOnly), data: secret("p2"), context: a)
        let payload = try #require(try here.participant.backupPayload(for: try here.manager.entry(for: try BundleIdentifier("com.example.A")), secrets: .none))

        // Another device: another root, so another device root key and id.
        let there = Setup()
        let b = try there.install("com.example.A")
        try there.keychain.add(generic("theirs", "svc"), data: secret("t"), context: b)
        #expect(try there.keychain.deviceID() != here.keychain.deviceID())
        let notes = try there.participant.restore(payload, for: try there.manager.entry(for: try BundleIdentifier("com.example.A")), secrets: .none)
        #expect(notes == ["keychain: 2 item(s) of access group com.example.A for com.example.A not restored: the backup was made on another device, and keychain items stay on the device that made them"])
        let all = try there.keychain.copyMatching(query(limit: .all, attributes: true), context: b)
        #expect(all.map { $0.attributes!.account } == ["theirs"])
    }

    @Test func anAppWithoutItemsHasNoPayload() throws {
        let t = Setup()
        _ = try t.install("com.example.A")
        #expect(try t.participant.backupPayload(for: try t.manager.entry(for: try BundleIdentifier("com.example.A")), secrets: .none) == nil)
    }
}
