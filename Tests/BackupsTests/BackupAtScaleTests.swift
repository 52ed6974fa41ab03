import Foundation
import Testing
@testable import Containers
@testable import Backups
import ContainersTestSupport
import PropertyList
import CTestSupport

/// Issue 23's backups at scale and issue 26's unsettled files: sparse files
/// by extents, the free-space check, objects made durable together, and a
/// file rewritten while it is read never stored (or restored) as bytes it
/// never held.
@Suite struct BackupAtScaleTests {
    /// A writer rewriting `path` in place, without pause, between two
    /// contents of `size` bytes: all `a`, all `b` (one `pwrite` each).
    final class Rewriter: @unchecked Sendable {
        let stop = ManagedAtomicFlag()
        init(_ path: String, size: Int) {
            let thread = Thread { [stop] in
                let fd = open(path, O_WRONLY)
                let versions = [[UInt8](repeating: 0x61, count: size), [UInt8](repeating: 0x62, count: size)]
                var n = 0
                while !stop.isSet {
                    _ = versions[n & 1].withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
                    n += 1
                }
                close(fd)
                stop.finish()
            }
            thread.start()
        }
        func end() {
            stop.set()
            stop.waitForFinish()
        }
    }

    static let size = 1 << 20
    static let whole: Set<[UInt8]> = [[UInt8](repeating: 0x61, count: size), [UInt8](repeating: 0x62, count: size)]

    /// The restored or stored bytes of `entry`, or `nil` when it is no file.
    static func stored(_ f: BackupFixture, _ entry: BackupEntry) throws -> [UInt8]? {
        guard case .file(let hash, _) = entry.kind else { return nil }
        return Array(try Data(contentsOf: URL(fileURLWithPath: f.store.objectPath(hash))))
    }

    @Test func aFileRewrittenDuringTenBackupsIsKeptAsItsLastWholeStateNeverAsBytesItNeverHeld() throws {
        let f = try BackupFixture()
        let path = f.home.documents + "/rewritten.bin"
        try Data([UInt8](repeating: 0x61, count: Self.size)).write(to: URL(fileURLWithPath: path))
        // Taken while the file holds still: its whole state.
        let first = try f.manager.backup(f.bundle.identifier)
        #expect(first.unsettled.isEmpty)
        let writer = Rewriter(path, size: Self.size)
        var reports: [ContainerManager.BackupReport] = []
        // One read per file: a read within 10 ms of the writer's last write cannot settle.
        for _ in 0..<10 { reports.append(try f.manager.backup(f.bundle.identifier, options: BackupOptions(fileAttempts: 1))) }
        writer.end()
        var unsettled = 0
        for report in reports {
            let entry = try #require(report.manifest.entries.first { $0.path == "Documents/rewritten.bin" })
            let bytes = try #require(try Self.stored(f, entry))
            #expect(Self.whole.contains(bytes), "a backup holds bytes the file never held")
            if entry.unsettled {
                unsettled += 1
                #expect(report.unsettled == ["Documents/rewritten.bin"] && report.leftOut.isEmpty)
                #expect(entry.earlierState != nil)
            }
        }
        #expect(unsettled > 0, "the writer never kept a backup from settling the file")
        // The last one restored: the whole state, and said to be not the file as it was at the backup.
        let last = try #require(reports.last { r in r.manifest.entries.contains { $0.path == "Documents/rewritten.bin" && $0.unsettled } })
        let restored = try f.manager.restore(from: last.manifestPath)
        #expect(Self.whole.contains(Array(try Data(contentsOf: URL(fileURLWithPath: restored.home.documents + "/rewritten.bin")))))
        #expect(restored.notWhole.map(\.path) == ["Documents/rewritten.bin"])
        if case .earlierState = restored.notWhole.first?.restored {} else { Issue.record("\(restored.notWhole)") }
        #expect(try BackupManifest(decoding: Array(Data(contentsOf: URL(fileURLWithPath: last.manifestPath))), path: last.manifestPath)
                .allEntries.contains { $0.unsettled && $0.earlierState != nil })
    }

    /// A write that stamped the file's times long ago and sleeps in the
    /// middle of its copy (dirty-page throttling does this under load: how
    /// CI caught it) holds the inode's lock: the backup waits for it to end
    /// and stores what it wrote, never the half it had written so far.
    @Test(.enabled(if: apphome_test_userfaultfd_available() == 1,
                   "stops a write with userfaultfd, which needs CAP_SYS_PTRACE or vm.unprivileged_userfaultfd = 1"))
    func aWriteAsleepInTheMiddleOfItsCopyIsWaitedForAndNeverStoredHalfDone() throws {
        let f = try BackupFixture()
        let path = f.home.documents + "/halfway.bin"
        let size = 4 << 20
        let old = [UInt8](repeating: 0x61, count: size), new = [UInt8](repeating: 0x62, count: size)
        try Data(old).write(to: URL(fileURLWithPath: path))
        let fd = open(path, O_WRONLY)
        #expect(fd >= 0)
        defer { close(fd) }
        var error: Int32 = 0
        // Stops at 3 MiB: past any chunk the kernel copies in one go (a 2 MiB folio).
        let stalled = new.withUnsafeBufferPointer { apphome_test_stalled_write_begin(fd, $0.baseAddress, size, 3 << 20, &error) }
        let write = try #require(stalled, "the stopped write could not start: errno \(error)")
        var finished = false
        defer { if !finished { _ = apphome_test_stalled_write_finish(write) } }
        try #require(apphome_test_stalled_write_wait(write, 10_000) == 1, "the write never reached its missing pages")
        // The times were stamped when the write began: older than the settle check's window now.
        usleep(useconds_t(3 * HomeWalker.timestampGranularity / 1000))
        let halfDone = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        #expect(halfDone.first == 0x62 && halfDone.last == 0x61, "the write is stopped half done")
        #expect(apphome_test_stalled_write_release(write, 300) == 0)
        let report = try f.manager.backup(f.bundle.identifier, options: BackupOptions(fileAttempts: 1))
        finished = true
        #expect(apphome_test_stalled_write_finish(write) == size)
        let entry = try #require(report.manifest.entries.first { $0.path == "Documents/halfway.bin" })
        #expect(!entry.unsettled && report.unsettled.isEmpty)
        #expect(try Self.stored(f, entry) == new, "the backup stored bytes the file never held")
    }

    @Test func aFileThatNeverSettledAndWasNeverReadWholeIsLeftOutNamedAndNotRestored() throws {
        let f = try BackupFixture()
        let path = f.home.documents + "/rewritten.bin"
        try Data([UInt8](repeating: 0x61, count: Self.size)).write(to: URL(fileURLWithPath: path))
        // The fixture's other files, written just now, settle in one read
        // only once they are older than a clock tick: only the rewritten
        // file may be left out.
        usleep(useconds_t(2 * HomeWalker.timestampGranularity / 1000))
        let writer = Rewriter(path, size: Self.size)
        var leftOut: ContainerManager.BackupReport?
        for _ in 0..<10 {
            let report = try f.manager.backup(f.bundle.identifier, options: BackupOptions(fileAttempts: 1))
            if let entry = report.manifest.entries.first(where: { $0.path == "Documents/rewritten.bin" }) {
                #expect(Self.whole.contains(try #require(try Self.stored(f, entry))))
            } else {
                #expect(report.unsettled == ["Documents/rewritten.bin"] && report.leftOut == ["Documents/rewritten.bin"])
                #expect(report.manifest.leftOut == ["Documents/rewritten.bin"])
                leftOut = report
            }
            if leftOut != nil { break }
            // No earlier state for the next backup either.
            try FileManager.default.removeItem(atPath: report.manifestPath)
        }
        writer.end()
        let report = try #require(leftOut, "the writer never kept a backup from settling the file")
        let bytes = try report.manifest.encoded()
        #expect(try PlistCodec.decode(bytes).dictionaryValue?["FormatVersion"] == .integer(4))
        #expect(try BackupManifest(decoding: bytes, path: "/m").leftOut == ["Documents/rewritten.bin"])
        let restored = try f.manager.restore(from: report.manifestPath)
        #expect(restored.notWhole == [BackupService.NotWhole(path: "Documents/rewritten.bin", restored: .notRestored)])
        #expect(!FileManager.default.fileExists(atPath: restored.home.documents + "/rewritten.bin"))
    }

    @Test func aSparseFileIsStoredWithoutItsHolesAndRestoredSparse() throws {
        let f = try BackupFixture()
        let path = f.home.documents + "/disk.img"
        // 1 TiB with 4 KiB of data at 1 MiB and 8 KiB near the middle.
        let fd = open(path, O_WRONLY | O_CREAT, 0o600)
        #expect(ftruncate(fd, 1 << 40) == 0)
        let a = [UInt8](repeating: 0x41, count: 4096), b = [UInt8](repeating: 0x42, count: 8192)
        _ = a.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 1 << 20) }
        _ = b.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 1 << 39) }
        close(fd)
        let started = Date()
        let report = try f.manager.backup(f.bundle.identifier)
        let entry = try #require(report.manifest.entries.first { $0.path == "Documents/disk.img" })
        #expect(entry.kind == .file(hash: ContentHash(of: a + b), size: 1 << 40))
        #expect(entry.extents == [FileExtent(offset: 1 << 20, length: 4096), FileExtent(offset: 1 << 39, length: 8192)])
        #expect(try Self.stored(f, entry) == a + b)
        #expect(try BackupManifest(decoding: Array(Data(contentsOf: URL(fileURLWithPath: report.manifestPath))), path: "/m") == report.manifest)
        #expect(try f.manager.verifyBackup(at: report.manifestPath) == report.manifest)

        let restored = try f.manager.restore(from: report.manifestPath)
        let copy = restored.home.documents + "/disk.img"
        var st = stat()
        #expect(stat(copy, &st) == 0 && st.st_size == 1 << 40 && st.st_blocks * 512 < 1 << 20)
        let h = try FileHandle(forReadingFrom: URL(fileURLWithPath: copy))
        defer { try? h.close() }
        try h.seek(toOffset: 1 << 20)
        #expect(Array(try h.read(upToCount: 4096) ?? Data()) == a)
        try h.seek(toOffset: 1 << 39)
        #expect(Array(try h.read(upToCount: 8192) ?? Data()) == b)
        try h.seek(toOffset: 1 << 30)
        #expect(Array(try h.read(upToCount: 16) ?? Data()) == [UInt8](repeating: 0, count: 16))
        #expect(Date().timeIntervalSince(started) < 60)
    }

    @Test func extentsOutsideTheFileOrOutOfOrderAreADamagedManifest() throws {
        let f = try BackupFixture()
        let report = try f.manager.backup(f.bundle.identifier)
        var manifest = report.manifest
        let index = try #require(manifest.entries.firstIndex { $0.path == "Documents/bug1.txt" })
        manifest.entries[index].extents = [FileExtent(offset: 4, length: 20)]   // past its 11 bytes
        #expect(throws: ContainersError.backupDamaged(path: "/m", reason: "Documents/bug1.txt: Extents are not ranges in order inside the file's size")) {
            try BackupManifest(decoding: try manifest.encoded(), path: "/m")
        }
    }

    @Test func theFreeSpaceCheckRefusesBeforeWriting() throws {
        let s = Scratch()
        let free = try SpaceCheck.free(at: s.path)
        let check = SpaceCheck()
        try check.reserve(1 << 20, in: s.path)
        #expect(throws: ContainersError.self) { try check.reserve(free.available, in: s.path) }
        do {
            try SpaceCheck().reserve(free.available, in: s.path)
            Issue.record("not refused")
        } catch let error as ContainersError {
            guard case .notEnoughSpace(let path, let needed, _) = error else { Issue.record("\(error)"); return }
            #expect(path == s.path && needed == free.available)
            #expect(error.description.hasPrefix("not enough free space on the file system of \(s.path): \(free.available) bytes are needed"))
        }
    }

    /// Every file under `objects/<2 hex>/` holds the bytes its name says:
    /// what a crash at any point must leave.
    static func everyObjectIsWhole(_ f: BackupFixture) throws -> Int {
        var count = 0
        let objects = f.store.objectsDirectory
        for prefix in try FileManager.default.contentsOfDirectory(atPath: objects) where !prefix.hasPrefix(".") {
            guard FileSystem_isDirectory(objects + "/" + prefix) else { continue }
            for name in try FileManager.default.contentsOfDirectory(atPath: objects + "/" + prefix) {
                let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: objects + "/" + prefix + "/" + name)))
                #expect(ContentHash(of: bytes).hex == prefix + name, "objects/\(prefix)/\(name) does not hold its bytes")
                count += 1
            }
        }
        return count
    }

    @Test func objectsPutInPlaceInBatchesDuringTheWalkMakeTheSameBackup() throws {
        let f = try BackupFixture()
        for i in 0..<300 { try f.s.write("batched \(i)", to: f.home.documents + "/many/\(i).txt") }
        var options = BackupOptions()
        options.objectsPerCommit = 50   // six batches on the writer's threads, the last five objects at the commit
        let report = try f.manager.backup(f.bundle.identifier, options: options)
        #expect(report.objectsStored == 300 + BackupFixture.userData.count)
        #expect(f.s.entries(f.store.incomingDirectory).isEmpty)
        #expect(try Self.everyObjectIsWhole(f) == report.objectsStored)
        for e in report.manifest.allEntries {
            if case .file(let hash, _) = e.kind { #expect(FileManager.default.fileExists(atPath: f.store.objectPath(hash))) }
        }
        // Unchanged: nothing read, nothing stored.
        let again = try f.manager.backup(f.bundle.identifier, options: options)
        #expect(again.filesRead == 0 && again.objectsStored == 0)
        let restored = try f.manager.restore(from: report.manifestPath)
        #expect(f.s.read(restored.home.documents + "/many/299.txt") == "batched 299")
    }

    /// A restore copies files on several threads, a directory at a time:
    /// every file arrives whole with its mode and time; with two damaged
    /// objects the error names the first in the manifest's order, whichever
    /// thread met it first, and the installed home is left as it was.
    @Test func aRestoreOnSeveralThreadsIsWholeAndNamesItsFirstDamage() throws {
        let f = try BackupFixture()
        func name(_ d: Int, _ i: Int) -> String { "Documents/d\(d)/\(String(format: "%03d", i)).txt" }
        for d in 0..<6 { for i in 0..<100 { try f.s.write("file \(d).\(i)", to: f.home.path + "/" + name(d, i)) } }
        chmod(f.home.path + "/" + name(3, 7), 0o640)
        let report = try f.manager.backup(f.bundle.identifier)
        let restored = try f.manager.restore(from: report.manifestPath)
        for d in 0..<6 { for i in 0..<100 { #expect(f.s.read(restored.home.path + "/" + name(d, i)) == "file \(d).\(i)") } }
        var st = stat()
        #expect(stat(restored.home.path + "/" + name(3, 7), &st) == 0 && st.st_mode & 0o777 == 0o640)
        let entry = try #require(report.manifest.entries.first { $0.path == name(3, 7) })
        #expect(Int64(st.st_mtim.tv_sec) * 1_000_000_000 + Int64(st.st_mtim.tv_nsec) == entry.modificationTime)

        let again = try f.manager.backup(f.bundle.identifier)
        for (d, i) in [(4, 10), (1, 50)] {
            let e = try #require(again.manifest.entries.first { $0.path == name(d, i) })
            guard case .file(let hash, _) = e.kind else { Issue.record("not a file"); return }
            try Data("not what it was".utf8).write(to: URL(fileURLWithPath: f.store.objectPath(hash)))
        }
        let home = try f.manager.home(for: f.bundle.identifier).path
        let before = try FileManager.default.contentsOfDirectory(atPath: FileSystem_parent(home)).sorted()
        #expect(throws: ContainersError.backupDamaged(path: again.manifestPath, reason: "\(name(1, 50)) does not match its checksum")) {
            _ = try f.manager.restore(from: again.manifestPath)
        }
        #expect(try f.manager.home(for: f.bundle.identifier).path == home)
        #expect(f.s.read(home + "/" + name(5, 99)) == "file 5.99")
        #expect(try FileManager.default.contentsOfDirectory(atPath: FileSystem_parent(home)).sorted() == before, "a half-made home was left")
    }

    @Test func aBatchThatCannotBePutInPlaceFailsTheBackupAndLeavesOnlyWholeObjects() throws {
        let f = try BackupFixture()
        let first = try f.manager.backup(f.bundle.identifier)
        var options = BackupOptions()
        options.objectsPerCommit = 16
        // New files, one of whose object directories cannot be made: a
        // batch put in place on the writer's threads (not the last, partial
        // one, which the commit puts in place) fails part-way.
        for i in 0..<200 { try f.s.write("blocked \(i)", to: f.home.documents + "/new/\(i).txt") }
        let inWalkOrder = (0..<200).map { "\($0).txt" }.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
        let blocked = inWalkOrder[40...150].lazy.map { name in
            FileSystem_parent(f.store.objectPath(ContentHash(of: Array("blocked \(name.dropLast(4))".utf8))))
        }.first { !FileManager.default.fileExists(atPath: $0) }
        let dir = try #require(blocked)
        try f.s.write("not a directory", to: dir)
        #expect(throws: ContainersError.system(SystemError_("mkdir", path: dir, errno: EEXIST))) {
            try f.manager.backup(f.bundle.identifier, options: options)
        }
        // No manifest, nothing left in .incoming, and what reached objects/ is whole.
        #expect(try f.store.manifests(of: f.bundle.identifier) == [first.manifestPath])
        #expect(f.s.entries(f.store.incomingDirectory).isEmpty)
        #expect(try Self.everyObjectIsWhole(f) > 0)
        #expect(try BackupStore.openBackup(first.manifestPath).1 == first.manifest)
        unlink(dir)
        let second = try f.manager.backup(f.bundle.identifier, options: options)
        #expect(second.filesRead == 200)
        #expect(f.s.entries(f.store.incomingDirectory).isEmpty)
        let restored = try f.manager.restore(from: second.manifestPath)
        #expect(f.s.read(restored.home.documents + "/new/199.txt") == "blocked 199")
        #expect(try Self.everyObjectIsWhole(f) == 200 + BackupFixture.userData.count)
    }

    @Test func aBackupLeavesItsObjectsInPlaceAndNothingInIncoming() throws {
        let f = try BackupFixture()
        for i in 0..<300 { try f.s.write("file \(i)", to: f.home.documents + "/many/\(i).txt") }
        let report = try f.manager.backup(f.bundle.identifier)
        #expect(report.objectsStored >= 300)
        #expect(f.s.entries(f.store.incomingDirectory).isEmpty)
        for e in report.manifest.allEntries {
            if case .file(let hash, _) = e.kind { #expect(FileManager.default.fileExists(atPath: f.store.objectPath(hash))) }
        }
        let restored = try f.manager.restore(from: report.manifestPath)
        #expect(f.s.read(restored.home.documents + "/many/299.txt") == "file 299")
    }
}
