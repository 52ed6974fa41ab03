import CSQLite

/// What can go wrong when SQLite copies or checks a database file.
///
/// The cases follow SQLite's primary result codes (never its message
/// text): a caller decides by case whether to wait, fall back or give up.
public enum SQLiteError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Another connection held a lock for longer than the busy timeout
    /// (`SQLITE_BUSY`, `SQLITE_LOCKED`).
    case busy(path: String)
    /// The file starts like a database but is none, or is damaged
    /// (`SQLITE_NOTADB`, `SQLITE_CORRUPT`): the extended result code.
    case notADatabase(path: String, code: Int32)
    /// An interrupted transaction (a hot journal, or a WAL that needs
    /// recovery) that a read-only connection may not undo
    /// (`SQLITE_READONLY_ROLLBACK`, `SQLITE_READONLY_RECOVERY`).
    case needsRecovery(path: String)
    /// Any other failure: the step, the extended result code and SQLite's
    /// fixed text for that code (`sqlite3_errstr`).
    case failed(path: String, operation: String, code: Int32, message: String)

    public var description: String {
        switch self {
        case .busy(let path):
            return "\(path): the database stayed locked by another connection"
        case .notADatabase(let path, let code):
            return "\(path): not a valid SQLite database (\(Self.text(code)))"
        case .needsRecovery(let path):
            return "\(path): \(Self.recoveryReason)"
        case .failed(let path, let operation, let code, let message):
            return "\(path): \(operation) failed: \(message) (SQLite result code \(code))"
        }
    }

    /// Why a database that needs recovery is not copied.
    public static let recoveryReason = "an interrupted transaction is still in its journal, and only a writer may roll it back; "
        + "open the database with the app once, then back up again"

    /// The error for result code `code` of `operation` on `path`.
    static func from(_ code: Int32, operation: String, path: String) -> SQLiteError {
        // SQLITE_READONLY_ROLLBACK and SQLITE_READONLY_RECOVERY (extended codes of SQLITE_READONLY).
        if code == SQLITE_READONLY | (3 << 8) || code == SQLITE_READONLY | (1 << 8) { return .needsRecovery(path: path) }
        switch code & 0xFF {
        case SQLITE_BUSY, SQLITE_LOCKED:
            return .busy(path: path)
        case SQLITE_NOTADB, SQLITE_CORRUPT:
            return .notADatabase(path: path, code: code)
        default:
            return .failed(path: path, operation: operation, code: code, message: text(code))
        }
    }

    /// SQLite's fixed English text for a result code.
    static func text(_ code: Int32) -> String {
        guard let s = apphome_sqlite3_errstr(code) else { return "result code \(code)" }
        return String(cString: s)
    }
}
