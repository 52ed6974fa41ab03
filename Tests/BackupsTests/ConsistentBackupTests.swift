import Foundation
import Testing
@testable import Containers
@testable import Backups
import ContainersTestSupport
import PropertyList

/// Runs `python3 -c script args…` (the real `sqlite3` module as the app's
/// database library).
final class Python: @unchecked Sendable {
    let process = Process()
    private let output = Pipe()

    init(_ script: String, _ arguments: [String]) throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script] + arguments
        process.standardOutput = output
        try process.run()
    }

    /// Waits for the end; the exit status and what it printed.
    func finish() -> (status: Int32, out: String) {
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    @discardableResult
    static func run(_ script: String, _ arguments: [String]) throws -> String {
        let (status, out) = try Python(script, arguments).finish()
        guard status == 0 else { throw Failure(description: "python3 exited \(status): \(out)") }
        return out
    }

    struct Failure: Error, CustomStringConvertible { var description: String }
}

@Suite struct ConsistentBackupTests {
    static let dbPath = "Library/Application Support/app.db"

    /// Makes a database of `rows` rows in `mode`; in WAL mode, ends without
    /// closing, so the rows stay in the `-wal` (not checkpointed).
    static let make = #"""
    import os, sqlite3, sys
    path, mode, rows = sys.argv[1], sys.argv[2], int(sys.argv[3])
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode=" + mode)
    db.execute("PRAGMA wal_autocheckpoint=0")
    db.execute("CREATE TABLE IF NOT EXISTS t(n INTEGER PRIMARY KEY, payload BLOB)")
    db.execute("BEGIN")
    for n in range(rows):
        db.execute("INSERT INTO t(payload) VALUES (randomblob(300))")
    db.execute("COMMIT")
    os._exit(0)
    """#

    /// Prints `integrity_check`'s first row and the number of rows.
    static let inspect = #"""
    import sqlite3, sys
    db = sqlite3.connect(sys.argv[1])
    print(db.execute("PRAGMA integrity_check").fetchone()[0], db.execute("SELECT count(*) FROM t").fetchone()[0])
    """#

    @Test(arguments: ["wal", "delete"])
    func aDatabaseIsStoredAsOneFileHoldingWhatItsWALHeld(mode: String) throws {
        let f = try BackupFixture()
        let db = f.home.path + "/" + Self.dbPath
        try Python.run(Self.make, [db, mode, "200"])
        if mode == "wal" { #expect(FileManager.default.fileExists(atPath: db + "-wal")) }
        let report = try f.manager.backup(f.bundle.identifier)
        #expect(report.databases == [Self.dbPath])
        #expect(report.unsettled.isEmpty && report.notBackedUp.isEmpty)
        let paths = report.manifest.entries.map(\.path)
        #expect(paths.contains(Self.dbPath))
        #expect(!paths.contains { $0.hasSuffix("-wal") || $0.hasSuffix("-shm") || $0.hasSuffix("-journal") }, "\(paths)")
        #expect(try f.manager.verifyBackup(at: report.manifestPath) == report.manifest)

        let restored = try f.manager.restore(from: report.manifestPath)
        let support = restored.home.path + "/Library/Application Support"
        #expect(f.s.entries(support) == ["app.db", "db.sqlite"])
        #expect(try Python.run(Self.inspect, [support + "/app.db"]) == "ok 200\n")
    }

    @Test(arguments: ["wal", "delete"])
    func aSecondBackupOfAnUnchangedDatabaseStoresNothing(mode: String) throws {
        let f = try BackupFixture()
        try Python.run(Self.make, [f.home.path + "/" + Self.dbPath, mode, "500"])
        let first = try f.manager.backup(f.bundle.identifier)
        #expect(first.bytesStored > 150_000)
        let second = try f.manager.backup(f.bundle.identifier)
        #expect(second.databases == [Self.dbPath])
        #expect(second.bytesStored == 0 && second.objectsStored == 0)
        #expect(second.manifest.entries.first { $0.path == Self.dbPath }?.kind == first.manifest.entries.first { $0.path == Self.dbPath }?.kind)
        // One more transaction: a new copy is stored.
        try Python.run(Self.make, [f.home.path + "/" + Self.dbPath, mode, "1"])
        #expect(try f.manager.backup(f.bundle.identifier).objectsStored == 1)
    }

    /// Holds an exclusive lock (rollback mode, a transaction in its journal)
    /// until the stop file appears.
    static let holdLock = #"""
    import os, sqlite3, sys, time
    path, ready, stop = sys.argv[1:4]
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("CREATE TABLE IF NOT EXISTS t(n INTEGER PRIMARY KEY, payload BLOB)")
    db.execute("INSERT INTO t(payload) VALUES (randomblob(300))")
    db.execute("BEGIN EXCLUSIVE")
    db.execute("INSERT INTO t(payload) VALUES (randomblob(300))")
    open(ready, "w").close()
    while not os.path.exists(stop):
        time.sleep(0.01)
    db.execute("COMMIT")
    """#

    @Test func aDatabaseLockedLongerThanTheBoundIsReportedAndNotStored() throws {
        let f = try BackupFixture()
        let db = f.home.path + "/" + Self.dbPath
        let ready = f.s.path + "/ready", stop = f.s.path + "/stop"
        let holder = try Python(Self.holdLock, [db, ready, stop])
        defer {
            _ = FileManager.default.createFile(atPath: stop, contents: nil)
            _ = holder.finish()
        }
        while !FileManager.default.fileExists(atPath: ready) && holder.process.isRunning { usleep(10_000) }
        #expect(FileManager.default.fileExists(atPath: db + "-journal"))
        let options = BackupOptions(databaseBusyTimeoutMilliseconds: 50, databaseAttempts: 2)
        let report = try f.manager.backup(f.bundle.identifier, options: options)
        #expect(report.notBackedUp == [ContainerManager.NotBackedUp(
            path: Self.dbPath, reason: "the database stayed locked by another connection for more than 2 × 50 ms")])
        #expect(report.databases.isEmpty)
        let paths = report.manifest.entries.map(\.path)
        #expect(!paths.contains(Self.dbPath) && !paths.contains(Self.dbPath + "-journal"), "\(paths)")
        #expect(paths.contains("Library/Application Support/db.sqlite"))
        #expect(f.s.entries(f.store.incomingDirectory).isEmpty)
    }

    /// Leaves a hot journal: a transaction that spilled into the database
    /// file, and a process that died before committing it.
    static let die = #"""
    import os, sqlite3, sys
    db = sqlite3.connect(sys.argv[1], isolation_level=None)
    db.execute("CREATE TABLE t(n INTEGER PRIMARY KEY, payload BLOB)")
    db.execute("PRAGMA cache_size=1")
    db.execute("BEGIN")
    for n in range(2000):
        db.execute("INSERT INTO t(payload) VALUES (randomblob(1000))")
    os._exit(0)
    """#

    @Test func aDatabaseWithAnInterruptedTransactionIsReportedNotStoredTorn() throws {
        let f = try BackupFixture()
        let db = f.home.path + "/" + Self.dbPath
        try Python.run(Self.die, [db])
        #expect(FileManager.default.fileExists(atPath: db + "-journal"))
        let report = try f.manager.backup(f.bundle.identifier)
        #expect(report.notBackedUp == [ContainerManager.NotBackedUp(
            path: Self.dbPath, reason: "an interrupted transaction is still in its journal, and only a writer may roll it back; "
                + "open the database with the app once, then back up again")])
        let paths = report.manifest.entries.map(\.path)
        #expect(!paths.contains(Self.dbPath) && !paths.contains(Self.dbPath + "-journal"), "\(paths)")
        // The app's journal is left for the app.
        #expect(FileManager.default.fileExists(atPath: db + "-journal"))
    }

    @Test func aFileThatOnlyStartsLikeADatabaseIsStoredAsItsBytes() throws {
        let f = try BackupFixture()
        let bytes = Array("SQLite format 3\0".utf8) + [UInt8](repeating: 0xA5, count: 5000)
        try Data(bytes).write(to: URL(fileURLWithPath: f.home.path + "/" + Self.dbPath))
        let report = try f.manager.backup(f.bundle.identifier)
        #expect(report.databases.isEmpty && report.notBackedUp.isEmpty)
        #expect(report.manifest.entries.first { $0.path == Self.dbPath }?.kind == .file(hash: ContentHash(of: bytes), size: bytes.count))
    }

    /// A writer rewriting a 4 MiB file in place, in bursts of 10 versions
    /// with a pause after each, version v being the byte v repeated, each in
    /// one `pwrite`. The file only ever holds a whole version, or, while a
    /// write is under way, version v+1 up to some offset and v after it. A
    /// read that mixes them otherwise (v then v+1, read in 1 MiB pieces
    /// before and after a write) holds bytes the file never held.
    @Test func aFileRewrittenWhileItIsReadIsNeverStoredAsBytesItNeverHeld() throws {
        let f = try BackupFixture()
        let path = f.home.documents + "/rewritten.bin"
        let size = 4 << 20
        try Data(count: size).write(to: URL(fileURLWithPath: path))
        let stop = ManagedAtomicFlag()
        let writer = Thread {
            let fd = open(path, O_WRONLY)
            var version: UInt8 = 0
            while !stop.isSet {
                for _ in 0..<10 {
                    version &+= 1
                    let bytes = [UInt8](repeating: version, count: size)
                    _ = bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
                }
                usleep(20_000)
            }
            close(fd)
            stop.finish()
        }
        writer.start()
        var settled = 0
        for _ in 0..<12 {
            let report = try f.manager.backup(f.bundle.identifier, options: BackupOptions(fileAttempts: 3))
            guard let entry = report.manifest.entries.first(where: { $0.path == "Documents/rewritten.bin" }) else {
                // Never settled, and no earlier backup read it whole: left out, and named.
                #expect(report.unsettled == ["Documents/rewritten.bin"] && report.manifest.leftOut == ["Documents/rewritten.bin"])
                continue
            }
            guard case .file(let hash, _) = entry.kind else { Issue.record("not a file"); continue }
            if entry.unsettled {
                // Never settled: the state an earlier backup read whole (checked when that backup was).
                #expect(report.unsettled == ["Documents/rewritten.bin"] && entry.earlierState != nil)
                continue
            }
            let stored = Array(try Data(contentsOf: URL(fileURLWithPath: f.store.objectPath(hash))))
            var runs: [UInt8] = []
            for b in stored where runs.last != b { runs.append(b) }
            let held = runs.count == 1 || (runs.count == 2 && runs[0] == runs[1] &+ 1)
            #expect(stored.count == size && held, "a settled entry holds the versions \(runs) in this order")
            settled += 1
        }
        stop.set()
        stop.waitForFinish()
        // Backups that fell in a pause got a whole version (most of them do).
        #expect(settled > 0)
        // Every torn read that was stored is marked; once the writer stops, the file settles.
        let after = try f.manager.backup(f.bundle.identifier)
        #expect(after.unsettled.isEmpty)
        #expect(after.manifest.entries.first { $0.path == "Documents/rewritten.bin" }?.unsettled == false)
    }

    @Test func anUnsettledEntryNeedsVersion3AndRestoresWithANote() throws {
        let f = try BackupFixture()
        let report = try f.manager.backup(f.bundle.identifier)
        #expect(try PlistCodec.decode(Array(Data(contentsOf: URL(fileURLWithPath: report.manifestPath)))).dictionaryValue?["FormatVersion"]
                == .integer(1))
        var manifest = report.manifest
        let index = try #require(manifest.entries.firstIndex { $0.path == "Documents/bug1.txt" })
        manifest.entries[index].unsettled = true
        let bytes = try manifest.encoded()
        let envelope = try #require(try PlistCodec.decode(bytes).dictionaryValue)
        #expect(envelope["FormatVersion"] == .integer(3))
        #expect(try BackupManifest(decoding: bytes, path: "/b/m.plist") == manifest)

        // The same body in a version-2 envelope is refused.
        var older = envelope
        older["FormatVersion"] = .integer(2)
        #expect(throws: ContainersError.backupDamaged(path: "/b/m.plist", reason: "Documents/bug1.txt: Unsettled is not a boolean of version 3")) {
            try BackupManifest(decoding: try PlistCodec.encode(.dictionary(older), format: .binary), path: "/b/m.plist")
        }

        try Data(bytes).write(to: URL(fileURLWithPath: report.manifestPath))
        let restored = try f.manager.restore(from: report.manifestPath)
        #expect(restored.notWhole == [BackupService.NotWhole(path: "Documents/bug1.txt", restored: .asLastRead)])
        #expect(f.s.read(restored.home.documents + "/bug1.txt") == "a scary bug")
    }

    /// Overwrites the middle of the database's second page (a table's
    /// b-tree page): the copy is made page by page, so the damage is stored.
    static let damage = #"""
    import sys
    with open(sys.argv[1], "r+b") as f:
        f.seek(4096 + 8)
        f.write(b"\xff" * 2000)
    """#

    @Test func verifyRunsTheIntegrityCheckOnEveryStoredDatabase() throws {
        let f = try BackupFixture()
        let db = f.home.path + "/" + Self.dbPath
        try Python.run(Self.make, [db, "delete", "100"])
        try Python.run(Self.damage, [db])
        let report = try f.manager.backup(f.bundle.identifier)
        let error = try #require(throws: ContainersError.self) { try f.manager.verifyBackup(at: report.manifestPath) }
        guard case .backupDamaged(let path, let reason) = error else { Issue.record("\(error)"); return }
        #expect(path == report.manifestPath)
        #expect(reason.hasPrefix(Self.dbPath + " is a database that fails SQLite's integrity check: "), "\(reason)")
    }
}

/// A stop flag shared with a writer thread, and its acknowledgement.
final class ManagedAtomicFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    private let finished = DispatchSemaphore(value: 0)
    var isSet: Bool { lock.withLock { value } }
    func set() { lock.withLock { value = true } }
    func finish() { finished.signal() }
    func waitForFinish() { finished.wait() }
}
