import Foundation
import Testing

/// `apphome backup` while a real SQLite writer (Python's `sqlite3`) commits
/// numbered transactions as fast as it can: every backup, restored into
/// another root, is a sound database holding exactly the transactions
/// 1…N, with N at least what was committed before the backup began.
@Suite("backups of databases in use")
struct DatabaseBackupTests {
    static let bundleID = "com.example.ScaryBugs"
    static let v1 = InstalledAppTests.examples.appendingPathComponent("ScaryBugs-v1/ScaryBugs.app").path

    /// Commits transaction n (a row n with a payload, and `last.n = n`)
    /// for n = 1, 2, … until the stop file appears; after each commit,
    /// replaces the progress file with n; prints the last n.
    static let writer = #"""
    import os, sqlite3, sys
    path, mode, stop, progress = sys.argv[1:5]
    db = sqlite3.connect(path, timeout=30, isolation_level=None)
    db.execute("PRAGMA journal_mode=" + mode)
    db.execute("CREATE TABLE IF NOT EXISTS t(n INTEGER PRIMARY KEY, payload BLOB NOT NULL)")
    db.execute("CREATE TABLE IF NOT EXISTS last(id INTEGER PRIMARY KEY CHECK (id = 1), n INTEGER NOT NULL)")
    db.execute("INSERT OR IGNORE INTO last VALUES (1, 0)")
    n = 0
    while not os.path.exists(stop):
        n += 1
        while True:
            try:
                db.execute("BEGIN IMMEDIATE")
                db.execute("INSERT INTO t VALUES (?, randomblob(?))", (n, 200 + n % 1800))
                db.execute("UPDATE last SET n = ? WHERE id = 1", (n,))
                db.execute("COMMIT")
                with open(progress + ".tmp", "w") as f:
                    f.write(str(n))
                os.replace(progress + ".tmp", progress)
                break
            except sqlite3.OperationalError:
                if db.in_transaction:
                    db.execute("ROLLBACK")
    print(n)
    """#

    /// Checks a restored database: `PRAGMA integrity_check` says ok, the
    /// rows are exactly 1…N and `last` says N, N ≥ the floor given.
    static let check = #"""
    import sqlite3, sys
    path, floor = sys.argv[1], int(sys.argv[2])
    db = sqlite3.connect(path)
    integrity = db.execute("PRAGMA integrity_check").fetchall()
    count, low, high = db.execute("SELECT count(*), min(n), max(n) FROM t").fetchone()
    last = db.execute("SELECT n FROM last").fetchone()[0]
    if integrity != [("ok",)]:
        print("integrity_check:", integrity)
    elif count == 0 or low != 1 or high != count or last != high:
        print("rows: count %d, min %s, max %s, last %d" % (count, low, high, last))
    elif high < floor:
        print("only %d transactions, but %d were committed before the backup began" % (high, floor))
    else:
        print("OK")
    """#

    func apphome(_ root: TempRoot, _ arguments: [String]) throws -> CommandResult {
        try CrashAndDoctorTests.apphome(root, arguments)
    }

    /// The writer's count of committed transactions (a reader of the
    /// database itself could starve: a rollback-mode writer committing
    /// back to back leaves its lock only for moments).
    func committed(_ progress: String) -> Int {
        (try? String(contentsOfFile: progress, encoding: .utf8)).flatMap { Int($0) } ?? 0
    }

    @Test(arguments: ["wal", "delete"])
    func everyBackupTakenUnderAWriterRestoresToACommittedState(mode: String) throws {
        let root = try TempRoot()
        let other = try TempRoot()
        try #require(try apphome(root, ["install", Self.v1]).status == 0)
        let home = try apphome(root, ["container", Self.bundleID, "data"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let support = home + "/Library/Application Support"
        try FileManager.default.createDirectory(atPath: support, withIntermediateDirectories: true)
        let db = support + "/app.db"
        let stop = root.work.appendingPathComponent("stop").path
        let progress = root.work.appendingPathComponent("progress").path
        let writer = try Subprocess.start(URL(fileURLWithPath: "/usr/bin/env"), ["python3", "-c", Self.writer, db, mode, stop, progress],
                                          environment: ProcessInfo.processInfo.environment, ioDirectory: root.io, timeout: 120)
        var writerRunning = true
        defer {
            if writerRunning {
                _ = FileManager.default.createFile(atPath: stop, contents: nil)
                _ = try? writer.finish()
            }
        }
        let deadline = Date().addingTimeInterval(30)
        while committed(progress) < 200 && Date() < deadline { usleep(20_000) }

        var floors: [Int] = []
        for round in 0..<8 {
            let floor = committed(progress)
            floors.append(floor)
            let backup = try apphome(root, ["backup", Self.bundleID])
            try #require(backup.status == 0 && backup.stderr.isEmpty, "round \(round): \(backup)")
            #expect(backup.stdout.contains("1 database copied with SQLite's backup API"), "\(backup)")
            let manifest = String(backup.stdout.split(separator: "\n")[0].split(separator: " ").last!)

            let restore = try apphome(other, ["restore", manifest, "--app", Self.v1])
            try #require(restore.status == 0, "round \(round): \(restore)")
            let restored = try apphome(other, ["container", Self.bundleID, "data"]).stdout
                .trimmingCharacters(in: .whitespacesAndNewlines) + "/Library/Application Support"
            // One file: no -wal, -shm or -journal came with it.
            #expect(try FileManager.default.contentsOfDirectory(atPath: restored) == ["app.db"], "round \(round)")
            let result = try other.python(Self.check, [restored + "/app.db", String(floor)])
            #expect(result.status == 0 && result.stdout == "OK\n", "round \(round), \(mode) mode: \(result)")
        }
        _ = FileManager.default.createFile(atPath: stop, contents: nil)
        writerRunning = false
        let written = try writer.finish()
        #expect(written.status == 0, "\(written)")
        // The writer went on committing through every backup.
        #expect(Int(written.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0 > floors.last ?? 0, "\(written)")

        let verified = try apphome(root, ["backups", "--verify"])
        #expect(verified.status == 0 && verified.stderr.isEmpty, "\(verified)")
        // The writer has stopped: two backups of the unchanged database, the second stores nothing.
        try #require(try apphome(root, ["backup", Self.bundleID]).status == 0)
        let again = try apphome(root, ["backup", Self.bundleID])
        #expect(again.stdout.contains(" 0 bytes stored in 0 new objects\n"), "\(again)")
    }
}
