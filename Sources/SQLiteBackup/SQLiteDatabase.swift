#if canImport(Glibc)
import Glibc
#endif
import CSQLite

/// SQLite databases as backups see them: recognising one, copying a live
/// one consistently, and checking a stored copy.
///
/// The only Swift code that calls SQLite. Every result code becomes a
/// ``SQLiteError`` here.
public enum SQLiteDatabase {
    /// The first 16 bytes of every SQLite 3 database file.
    public static let header: [UInt8] = Array("SQLite format 3".utf8) + [0]

    /// Whether `prefix` (a file's first bytes) is SQLite's header.
    public static func hasHeader(_ prefix: some Collection<UInt8>) -> Bool {
        prefix.count >= header.count && prefix.prefix(header.count).elementsEqual(header)
    }

    /// Copies the live database at `source` into `destination`, an empty
    /// file that exists, with SQLite's online backup API in one step, so in
    /// one read transaction: the copy holds exactly the transactions
    /// committed when that transaction began, whether the source is in WAL
    /// or rollback-journal mode, and is a self-contained database file
    /// (no `-wal` or `-journal` beside it is needed).
    ///
    /// The source is opened read-only, never through a symbolic link; a
    /// writer holding its lock is waited for up to
    /// `busyTimeoutMilliseconds`. The destination gets no journal: a
    /// failed copy is thrown away by the caller.
    ///
    /// - Throws: ``SQLiteError/busy(path:)`` when the lock was not had in
    ///   time; ``SQLiteError/notADatabase(path:code:)``;
    ///   ``SQLiteError/failed(path:operation:code:message:)``.
    public static func snapshot(from source: String, into destination: String,
                                busyTimeoutMilliseconds: Int32) throws(SQLiteError) {
        let src = try Connection(path: source, flags: SQLITE_OPEN_READONLY | SQLITE_OPEN_NOFOLLOW)
        defer { src.close() }
        let patience = BusyPatience(milliseconds: busyTimeoutMilliseconds)
        defer { patience.release() }
        apphome_sqlite3_busy_handler(src.handle, BusyPatience.callback, patience.context)
        let dst = try Connection(path: destination, flags: SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOFOLLOW)
        defer { dst.close() }
        try dst.execute("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF", path: destination)
        guard let backup = apphome_sqlite3_backup_init(dst.handle, "main", src.handle, "main") else {
            throw .from(apphome_sqlite3_extended_errcode(dst.handle), operation: "sqlite3_backup_init", path: destination)
        }
        let stepped = apphome_sqlite3_backup_step(backup, -1)
        let finished = apphome_sqlite3_backup_finish(backup)
        // Reported against the source: the copy is a temp file of the caller's.
        guard stepped == SQLITE_DONE else { throw .from(stepped, operation: "sqlite3_backup_step", path: source) }
        guard finished == SQLITE_OK else { throw .from(finished, operation: "sqlite3_backup_finish", path: source) }
    }

    /// Runs `PRAGMA integrity_check` on the database file at `path`, opened
    /// read-only as immutable, so SQLite writes nothing beside it (no
    /// `-wal`, `-shm` or `-journal`) and takes no lock.
    ///
    /// - Returns: the problems SQLite lists; empty when it says `ok`.
    /// - Throws: ``SQLiteError/notADatabase(path:code:)`` when the file is
    ///   none or is too damaged to check; ``SQLiteError/failed(path:operation:code:message:)``.
    public static func integrityProblems(ofFileAt path: String) throws(SQLiteError) -> [String] {
        let db = try Connection(path: "file:" + uriEscaped(path) + "?immutable=1",
                                flags: SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOFOLLOW, shownAs: path)
        defer { db.close() }
        var statement: OpaquePointer?
        let prepared = apphome_sqlite3_prepare_v2(db.handle, "PRAGMA integrity_check", -1, &statement, nil)
        guard prepared == SQLITE_OK, let statement else {
            throw .from(apphome_sqlite3_extended_errcode(db.handle), operation: "PRAGMA integrity_check", path: path)
        }
        defer { apphome_sqlite3_finalize(statement) }
        var rows: [String] = []
        while true {
            let rc = apphome_sqlite3_step(statement)
            if rc == SQLITE_DONE { break }
            guard rc == SQLITE_ROW else { throw .from(apphome_sqlite3_extended_errcode(db.handle), operation: "PRAGMA integrity_check", path: path) }
            rows.append(apphome_sqlite3_column_text(statement, 0).map { String(cString: $0) } ?? "")
        }
        return rows == ["ok"] ? [] : rows
    }

    /// `path` with every byte but unreserved ones and `/` percent-encoded,
    /// for a `file:` URI (a `?`, `#` or `%` in a directory name stays a name).
    static func uriEscaped(_ path: String) -> String {
        let digits = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        for b in path.utf8 {
            switch b {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "/"):
                out.append(b)
            default:
                out += [UInt8(ascii: "%"), digits[Int(b >> 4)], digits[Int(b & 15)]]
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}

/// A busy handler that tries again every 100 µs until a deadline.
///
/// SQLite's own (`sqlite3_busy_timeout`) sleeps up to 100 ms between tries:
/// a writer in rollback-journal mode that commits back to back holds its
/// exclusive lock nearly all the time and leaves it only for moments
/// between transactions, which so long a sleep keeps missing. A reader
/// that looks often gets in within a few of them.
private struct BusyPatience {
    /// Points at the deadline, in `CLOCK_MONOTONIC` nanoseconds.
    let context: UnsafeMutableRawPointer

    init(milliseconds: Int32) {
        context = UnsafeMutableRawPointer.allocate(byteCount: MemoryLayout<Int64>.size, alignment: MemoryLayout<Int64>.alignment)
        context.storeBytes(of: Self.monotonicNanoseconds() + Int64(max(0, milliseconds)) * 1_000_000, as: Int64.self)
    }

    func release() { context.deallocate() }

    /// Called by SQLite with the context and the number of tries so far:
    /// non-zero means try again.
    static let callback: @convention(c) (UnsafeMutableRawPointer?, Int32) -> Int32 = { context, _ in
        guard let context, monotonicNanoseconds() < context.load(as: Int64.self) else { return 0 }
        usleep(100)
        return 1
    }

    static func monotonicNanoseconds() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
    }
}

/// One open `sqlite3` handle.
private struct Connection {
    let handle: OpaquePointer

    /// - Parameter shownAs: the path for messages, when `path` is a URI.
    init(path: String, flags: Int32, shownAs: String? = nil) throws(SQLiteError) {
        var db: OpaquePointer?
        let rc = apphome_sqlite3_open_v2(path, &db, flags, nil)
        guard rc == SQLITE_OK, let db else {
            let code = db.map { apphome_sqlite3_extended_errcode($0) } ?? rc
            if let db { apphome_sqlite3_close_v2(db) }
            throw .from(code, operation: "open", path: shownAs ?? path)
        }
        apphome_sqlite3_extended_result_codes(db, 1)
        handle = db
    }

    func execute(_ sql: String, path: String) throws(SQLiteError) {
        let rc = apphome_sqlite3_exec(handle, sql, nil, nil, nil)
        guard rc == SQLITE_OK else { throw .from(rc, operation: sql, path: path) }
    }

    func close() { apphome_sqlite3_close_v2(handle) }
}
