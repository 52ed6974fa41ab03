import AppHomeSystem
import Foundation
import Testing
@testable import Containers
@testable import Backups
import ContainersTestSupport
import Preferences
import PropertyList

/// App-group containers in backups (`../shared/reference/lifecycle.md` §2:
/// "included (with a member)", "restored"): minus `Library/Caches`,
/// incremental like the home, checked like the home, and never restored
/// over a live container another installed app shares.
@Suite struct GroupBackupTests {
    static let group = "group.com.example.G"

    struct World {
        let s = Scratch()
        let manager: ContainerManager
        let member: ContainerManager.InstallReport
        var container: GroupContainer
        var backups: String { s.root + "/Backups" }

        init() throws {
            manager = ContainerManager(root: s.root, now: fixedClock)
            member = try manager.install(AppBundle(path: s.makeBundle("M", name: "M.app",
                                                                     info: Scratch.info("com.example.M", groups: [GroupBackupTests.group]))))
            container = manager.layout.groupContainer(uuid: try #require(try manager.registry.read().groups.values.first))
            try s.write("shared suite", to: container.preferences + "/\(GroupBackupTests.group).plist")
            try s.write("shared doc", to: container.path + "/Shared/notes.txt")
            try s.write("cache", to: container.caches + "/blob")
            try s.write("mine", to: member.home.documents + "/own.txt")
        }

        func id(_ name: String) throws -> BundleIdentifier { try BundleIdentifier(name) }
        func groupID() throws -> AppGroupIdentifier { try AppGroupIdentifier(GroupBackupTests.group) }
        func currentContainer() throws -> GroupContainer {
            manager.layout.groupContainer(uuid: try #require(try manager.registry.read().groups[groupID()]))
        }
    }

    @Test func aBackupHoldsTheGroupsContainerMinusCachesAndTheNextOneReadsNothingAgain() throws {
        let w = try World()
        let first = try w.manager.backup(w.id("com.example.M"), to: w.backups)
        let paths = try #require(first.manifest.groups[w.groupID()]).map(\.path)
        #expect(paths == ["Library", "Library/Preferences", "Library/Preferences/\(Self.group).plist", "Shared", "Shared/notes.txt"])
        #expect(first.manifest.fileCount == 3)
        #expect(first.filesRead == 3)
        // Version 3, since the app (which may hold groups only when signed) has a team; a backup of an
        // unsigned app without groups stays version 1.
        let envelope = try PlistCodec.decode(Array(try Data(contentsOf: URL(fileURLWithPath: first.manifestPath))))
        #expect(envelope.dictionaryValue?["FormatVersion"] == .integer(3))

        let second = try w.manager.backup(w.id("com.example.M"), to: w.backups)
        #expect(second.filesRead == 0 && second.bytesStored == 0)
        #expect(second.manifest.groups == first.manifest.groups.mapValues { $0 })
        _ = try w.manager.verifyBackup(at: second.manifestPath)
    }

    @Test func restoreAfterUninstallBringsTheGroupsDataBack() throws {
        let w = try World()
        let backup = try w.manager.backup(w.id("com.example.M"), to: w.backups)
        _ = try w.manager.uninstall(w.id("com.example.M"))
        #expect(!FileSystem_exists(w.container.path))

        let bundle = try AppBundle(path: w.s.path + "/M/M.app")
        let report = try w.manager.restore(from: backup.manifestPath, bundle: bundle)
        #expect(report.notes.isEmpty)
        #expect(report.filesRestored == 3)
        let restored = try w.currentContainer()
        #expect(w.s.read(restored.preferences + "/\(Self.group).plist") == "shared suite")
        #expect(w.s.read(restored.path + "/Shared/notes.txt") == "shared doc")
        #expect(w.s.entries(restored.caches) == [])
        #expect(FileSystem_exists(restored.identityFile))
        #expect(w.s.read(report.home.documents + "/own.txt") == "mine")
        #expect(try w.manager.doctor().findings.isEmpty)
    }

    @Test func restoreOverTheInstalledAppReplacesTheGroupItAloneUses() throws {
        let w = try World()
        let backup = try w.manager.backup(w.id("com.example.M"), to: w.backups)
        try w.s.write("changed later", to: w.container.path + "/Shared/notes.txt")
        let report = try w.manager.restore(from: backup.manifestPath)
        let restored = try w.currentContainer()
        #expect(restored != w.container)
        #expect(!FileSystem_exists(w.container.path))
        #expect(w.s.read(restored.path + "/Shared/notes.txt") == "shared doc")
        #expect(report.notes.isEmpty)
    }

    @Test func aGroupAnotherInstalledAppSharesIsKeptAsItIs() throws {
        let w = try World()
        let backup = try w.manager.backup(w.id("com.example.M"), to: w.backups)
        _ = try w.manager.install(AppBundle(path: w.s.makeBundle("O", name: "O.app", info: Scratch.info("com.example.O", groups: [Self.group]))))
        try w.s.write("written by O", to: w.container.path + "/Shared/notes.txt")
        let report = try w.manager.restore(from: backup.manifestPath)
        #expect(report.notes == ["app group \(Self.group): kept as it is, since com.example.O also uses it; the backup's copy was not restored"])
        #expect(try w.currentContainer() == w.container)
        #expect(w.s.read(w.container.path + "/Shared/notes.txt") == "written by O")
    }

    @Test func aTamperedGroupFileIsRefusedAndNothingChanges() throws {
        let w = try World()
        let backup = try w.manager.backup(w.id("com.example.M"), to: w.backups)
        let entry = try #require(backup.manifest.groups[w.groupID()]?.first { $0.path == "Shared/notes.txt" })
        guard case .file(let hash, _) = entry.kind else { Issue.record("not a file"); return }
        let object = BackupStore(directory: w.backups).objectPath(hash)
        chmod(object, 0o600)
        try Data("shared dog".utf8).write(to: URL(fileURLWithPath: object))
        let registryBefore = try w.manager.registry.read()
        do {
            _ = try w.manager.restore(from: backup.manifestPath)
            Issue.record("restored a tampered backup")
        } catch {
            #expect(error.description == "backup \(backup.manifestPath) is damaged: \(Self.group):Shared/notes.txt does not match its checksum")
        }
        #expect(try w.manager.registry.read() == registryBefore)
        #expect(w.s.read(w.container.path + "/Shared/notes.txt") == "shared doc")
        #expect(try FileManager.default.contentsOfDirectory(atPath: w.manager.layout.groupsDirectory) == [w.container.path.split(separator: "/").last.map(String.init)!])
    }

    @Test(arguments: [
        ("Library/Caches/x", "is never backed up"),
        (".apphome-container.plist", "is never backed up"),
        ("../escape", "is not a relative path inside the group's container"),
        ("", "is not a valid path"),
    ])
    func aManifestNamingAGroupPathThatIsNeverBackedUpIsRefused(_ path: String, _ reason: String) throws {
        func manifest(_ entries: [BackupEntry]) throws -> BackupManifest {
            BackupManifest(bundleIdentifier: try BundleIdentifier("com.example.M"), bundleName: "M.app", version: "1", shortVersion: nil,
                           deviceIdentifier: "D", creationTime: PlistDate(secondsSince1970: 0), entries: [], participants: [:],
                           groups: [try AppGroupIdentifier(Self.group): entries])
        }
        // The path is checked before its parent is looked for, so only the path itself is at fault.
        let library = BackupEntry(path: "Library", kind: .directory, mode: 0o700)
        let file = BackupEntry(path: path, kind: .file(hash: ContentHash(of: [1]), size: 1), mode: 0o600)
        #expect(throws: ContainersError.backupDamaged(path: "/m.plist", reason: "entry '\(Self.group):\(path)' \(reason)")) {
            try BackupManifest(decoding: try manifest([library, file]).encoded(), path: "/m.plist")
        }
        // A path that may be backed up decodes.
        let kept = BackupEntry(path: "Library/kept", kind: .file(hash: ContentHash(of: [1]), size: 1), mode: 0o600)
        #expect(try BackupManifest(decoding: try manifest([library, kept]).encoded(), path: "/m.plist").groups[try AppGroupIdentifier(Self.group)]?.count == 2)
    }
}
