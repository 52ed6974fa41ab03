import AppHomeSystem
import Foundation
import Testing
@testable import Containers
@testable import Backups
import ContainersTestSupport
import Preferences
import PropertyList

/// `prune-backups`: the newest backups stay, older manifests go, and a
/// stored file goes only when no remaining backup of any app names it.
@Suite struct PruneTests {
    /// Apps A and B; A backed up three times (its file changing each time),
    /// B twice; B's file has the same contents as A's first version.
    struct World {
        let s = Scratch()
        let manager: ContainerManager
        var a: [String] = [], b: [String] = []
        var store: BackupStore { BackupStore(directory: manager.defaultBackupDirectory) }

        init() throws {
            // A clock that moves, so each backup gets its own stamp and the quick check trusts nothing stale.
            let tick = Counter()
            manager = ContainerManager(root: s.root, now: { PlistDate(secondsSince1970: 1_800_000_000 + Double(tick.next())) })
            let homeA = try manager.install(AppBundle(path: s.makeBundle("A", name: "A.app", info: Scratch.info(id: "com.example.A")))).home
            let homeB = try manager.install(AppBundle(path: s.makeBundle("B", name: "B.app", info: Scratch.info(id: "com.example.B")))).home
            try s.write("kept by both", to: homeB.documents + "/same.txt")
            for version in ["kept by both", "second", "third"] {
                try s.write(version, to: homeA.documents + "/file.txt")
                a.append(try manager.backup(BundleIdentifier("com.example.A")).manifestPath)
            }
            b.append(try manager.backup(BundleIdentifier("com.example.B")).manifestPath)
            try s.write("B again", to: homeB.documents + "/other.txt")
            b.append(try manager.backup(BundleIdentifier("com.example.B")).manifestPath)
        }

        func objects() -> Set<String> {
            var all: Set<String> = []
            let top = store.directory + "/objects"
            for prefix in (try? FileManager.default.contentsOfDirectory(atPath: top)) ?? [] where !prefix.hasPrefix(".") {
                for name in (try? FileManager.default.contentsOfDirectory(atPath: top + "/" + prefix)) ?? [] { all.insert(prefix + name) }
            }
            return all
        }
    }

    final class Counter: @unchecked Sendable {
        private var n = 0
        func next() -> Int { n += 1; return n }
    }

    @Test func keepingOneRemovesOlderBackupsAndOnlyTheFilesNothingNamesAnyMore() throws {
        let w = try World()
        #expect(w.objects().count == 4)  // "kept by both", "second", "third", "B again"
        let dry = try w.manager.pruneBackups(keep: 1, dryRun: true)
        #expect(dry.removedManifests == [w.a[0], w.a[1], w.b[0]])
        #expect(dry.removedObjects == 1 && dry.bytesFreed == "second".utf8.count)
        #expect(w.objects().count == 4 && FileManager.default.fileExists(atPath: w.a[0]))

        let report = try w.manager.pruneBackups(keep: 1)
        #expect(report == dry)
        #expect(w.objects().count == 3)
        for path in w.a.prefix(2) + w.b.prefix(1) { #expect(!FileManager.default.fileExists(atPath: path)) }
        // What remains is whole: every stored file there, every hash right.
        for path in [w.a[2], w.b[1]] { _ = try w.manager.verifyBackup(at: path) }
        // "kept by both" is named by B's newest backup only now, and stays.
        let restored = try w.manager.restore(from: w.b[1])
        #expect(w.s.read(restored.home.documents + "/same.txt") == "kept by both")
        #expect(try w.manager.pruneBackups(keep: 1) == ContainerManager.PruneReport())
    }

    @Test func pruningOneAppLeavesTheOthersBackupsAndTheFilesTheyName() throws {
        let w = try World()
        let report = try w.manager.pruneBackups(of: BundleIdentifier("com.example.A"), keep: 2)
        #expect(report.removedManifests == [w.a[0]])
        #expect(report.removedObjects == 0)  // "kept by both" is still B's
        #expect(FileManager.default.fileExists(atPath: w.b[0]))
        #expect(throws: ContainersError.self) { try w.manager.pruneBackups(of: BundleIdentifier("com.example.None"), keep: 1) }
    }

    @Test func aRemainingBackupThatCannotBeReadKeepsEveryStoredFile() throws {
        let w = try World()
        try Data("garbage".utf8).write(to: URL(fileURLWithPath: w.b[1]))
        let report = try w.manager.pruneBackups(keep: 1)
        #expect(report.removedManifests == [w.a[0], w.a[1], w.b[0]])
        #expect(report.removedObjects == 0)
        #expect(report.objectsKeptBecause?.hasPrefix("backup \(w.b[1]) is damaged: ") == true)
        #expect(w.objects().count == 4)
    }
}
