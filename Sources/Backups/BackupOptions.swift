import Containers
/// How hard a backup tries to get a consistent copy of files that are in
/// use: how long it waits for a locked database, how often it reads a file
/// that changes while it is read.
public struct BackupOptions: Equatable, Sendable {
    /// How long one attempt waits for a database's lock (SQLite's busy
    /// timeout), in milliseconds.
    public var databaseBusyTimeoutMilliseconds: Int32
    /// Attempts at copying a locked database before it is reported as not
    /// backed up.
    public var databaseAttempts: Int
    /// Reads of a file that changes while it is read before it is stored
    /// as last read and marked unsettled.
    public var fileAttempts: Int
    /// Objects written that a backup makes durable and puts in place
    /// together while it goes on (``ObjectWriter``); small in tests, so
    /// that a small home takes several batches.
    var objectsPerCommit = ObjectWriter.commitBatch

    /// - Parameters:
    ///   - databaseBusyTimeoutMilliseconds: 2 s by default: a writer's
    ///     transaction that holds the lock longer is unusual.
    ///   - databaseAttempts: 3 by default (so up to about 6 s for one database).
    ///   - fileAttempts: 5 by default.
    public init(databaseBusyTimeoutMilliseconds: Int32 = 2_000, databaseAttempts: Int = 3, fileAttempts: Int = 5) {
        self.databaseBusyTimeoutMilliseconds = databaseBusyTimeoutMilliseconds
        self.databaseAttempts = max(1, databaseAttempts)
        self.fileAttempts = max(1, fileAttempts)
    }
}
