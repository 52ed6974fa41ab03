#if canImport(Glibc)
import Glibc
#endif
import AppHomeSystem
import Containers
import Preferences
import PropertyList
import SQLiteBackup

extension HomeWalker {
    /// What became of a file that starts like a database.
    enum DatabaseOutcome {
        case stored(BackupEntry)
        /// Locked for too long, or unreadable: in ``notBackedUp``.
        case notBackedUp
        /// SQLite says it is none (or is damaged): backed up as plain bytes.
        case notADatabase
    }

    /// The database whose companion `name` is (`db` for `db-wal`,
    /// `db-shm`, `db-journal`), or `nil`.
    static func companionStem(_ name: String) -> String? {
        for suffix in ["-wal", "-shm", "-journal"] where name.hasSuffix(suffix) && name.utf8.count > suffix.utf8.count {
            return String(name.dropLast(suffix.count))
        }
        return nil
    }

    /// Whether the open file `fd` begins with SQLite's 16-byte header.
    static func startsWithSQLiteHeader(_ fd: Int32, path: String) throws -> Bool {
        var prefix: (UInt64, UInt64) = (0, 0)   // 16 bytes, on the stack: once per file
        var n: Int
        repeat { n = withUnsafeMutableBytes(of: &prefix) { pread(fd, $0.baseAddress, $0.count, 0) } } while n < 0 && errno == EINTR
        guard n >= 0 else { throw SystemError("read", path: path, errno: errno) }
        return n == 16 && withUnsafeBytes(of: &prefix) { read in
            sqliteHeader.withUnsafeBytes { memcmp(read.baseAddress!, $0.baseAddress!, 16) == 0 }
        }
    }

    private static let sqliteHeader: [UInt8] = {
        precondition(SQLiteDatabase.header.count == 16)
        return SQLiteDatabase.header
    }()

    /// Copies the database at `path` with SQLite's online backup API into
    /// a temp file of the store, then stores that file by its hash (nothing
    /// new when the store has it: the copy of an unchanged database is the
    /// same bytes). A database locked for longer than the options allow,
    /// on every attempt, is reported and not stored: never a torn copy.
    mutating func database(_ rel: String, path: String, _ st: stat) throws -> DatabaseOutcome {
        var failure = ""
        attempts: for _ in 0..<options.databaseAttempts {
            try store.space.reserve(Int(st.st_size), in: store.directory)
            let temp = try store.newSnapshotFile()
            do {
                try SQLiteDatabase.snapshot(from: path, into: temp, busyTimeoutMilliseconds: options.databaseBusyTimeoutMilliseconds)
            } catch {
                unlink(temp)
                switch error {
                case .busy:
                    failure = "the database stayed locked by another connection for more than "
                        + "\(options.databaseAttempts) × \(options.databaseBusyTimeoutMilliseconds) ms"
                    continue attempts
                case .notADatabase:
                    return .notADatabase
                case .needsRecovery:
                    failure = SQLiteError.recoveryReason
                    break attempts
                case .failed(_, let operation, let code, let message):
                    failure = "SQLite could not copy it: \(operation) failed: \(message) (SQLite result code \(code))"
                    break attempts
                }
            }
            let ingested = try store.adopt(temp, path: path)
            filesRead += 1
            bytesRead += ingested.size
            count(ingested)
            databases.append(rel)
            let state = FileStatus(st)
            return .stored(BackupEntry(path: rel, kind: .file(hash: ingested.hash, size: ingested.size), mode: UInt32(st.st_mode) & 0o7777,
                                       modificationTime: state.modificationTime, changeTime: state.changeTime, inode: state.inode))
        }
        notBackedUp.append(ContainerManager.NotBackedUp(path: rel, reason: failure))
        return .notBackedUp
    }

    /// Reads the regular file open as `fd` (at `path`) until a read is
    /// known to hold bytes the file held: its size, modification and change
    /// times and inode the same before and after the read, the path still
    /// naming it, and either the times older than the start of the read by
    /// more than the clock's granularity, or a second read giving the same
    /// bytes and times. Each read begins by waiting out a write still
    /// copying (``FileExtent/waitForWritesInProgress(_:)``): a write stamps
    /// the times when it begins, so one that began long ago and sleeps
    /// mid-copy would otherwise pass the check with half its bytes. A sparse file is read by its extents (`SEEK_DATA`,
    /// `SEEK_HOLE`): its holes are neither read nor stored.
    ///
    /// A file that never settles within ``BackupOptions/fileAttempts``
    /// reads is never stored as read (those bytes may be a mix the file
    /// never held): it keeps the state the previous backup read whole, when
    /// it has one, its entry marked ``BackupEntry/unsettled`` with that
    /// backup's time; otherwise it is left out (``leftOut``). Either way it
    /// is in ``unsettled``.
    ///
    /// A file up to ``BackupStore/inMemoryLimit`` is read into memory and
    /// stored only once a read is accepted (so a check is as quick as a
    /// read); a larger one is stored as it is read, and an object a
    /// rejected read wrote is dropped again (nothing else names it: it was new).
    ///
    /// - Parameters:
    ///   - status: `fstat` of `firstFD`, taken before anything of it was read.
    ///   - dirFD: the directory holding the file as `name`: it is opened
    ///     again there, and checked to be still named so there.
    /// - Returns: the entry, or `nil` when the file is left out or vanished.
    mutating func settledFile(_ rel: String, path: String, fd firstFD: Int32, status: stat, in dirFD: Int32, name: String) throws -> BackupEntry? {
        var fd = firstFD
        defer { if fd != firstFD { close(fd) } }
        var written: Set<ContentHash> = []
        var confirmable: (state: FileStatus, hash: ContentHash)?
        var accepted: (read: SettleRead, st: stat, extents: [FileExtent]?)?
        var readAtAll = false
        for attempt in 1...options.fileAttempts {
            var before = status
            if attempt > 1 {
                usleep(useconds_t(1_000 * (attempt - 1)))   // let a burst of writes end
                let again = openat(dirFD, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
                guard again >= 0 else { break }   // removed or replaced by a non-file
                if fd != firstFD { close(fd) }
                fd = again
                guard fstat(fd, &before) == 0 else { throw SystemError("stat", path: path, errno: errno) }
                guard before.st_mode & S_IFMT == S_IFREG else { break }
            }
            let started = Self.realTimeNanoseconds()
            // A write still copying from before `started` ends first; one
            // that begins later stamps times the check below sees as recent.
            FileExtent.waitForWritesInProgress(fd)
            let size = Int(before.st_size)
            let extents = try FileExtent.dataRanges(of: fd, size: size, blocks: Int(before.st_blocks), path: path)
            let dataSize = extents.map(FileExtent.dataSize) ?? size
            let read: SettleRead
            do {
                if dataSize <= BackupStore.inMemoryLimit {
                    var bytes: [UInt8]
                    if extents == nil {
                        bytes = try FileExtent.readWhole(fd, size: size, path: path)
                    } else {
                        bytes = []
                        bytes.reserveCapacity(dataSize + 1)
                        try FileExtent.read(fd, extents, path: path, sizeHint: dataSize) { chunk in bytes.append(contentsOf: chunk) }
                    }
                    read = .inMemory(bytes, ContentHash(of: bytes))
                } else {
                    let ingested = try store.ingest(fd: fd, extents: extents, path: path)
                    if ingested.isNew { written.insert(ingested.hash) }
                    read = .stored(ingested)
                }
            } catch let error as SystemError where error.errno == EIO && extents != nil {
                confirmable = nil   // a sparse file that shrank under the read
                continue
            }
            readAtAll = true
            var after = stat()
            guard fstat(fd, &after) == 0 else { throw SystemError("stat", path: path, errno: errno) }
            var named = stat()
            let state = FileStatus(after)
            let stillNamed = fstatat(dirFD, name, &named, AT_SYMLINK_NOFOLLOW) == 0
                && FileStatus(named).inode == state.inode && FileStatus(named).device == state.device
            guard FileStatus(before) == state, stillNamed, dataSize == read.size else {
                confirmable = nil
                continue
            }
            let recent = started - Self.timestampGranularity
            if state.modificationTime < recent && state.changeTime < recent {
                accepted = (read, after, extents)
                break
            }
            // Written within a clock tick of this read: a write after the
            // read began might not have moved the times. The same bytes and
            // times from a second read settle it.
            if let c = confirmable, c.state == state, c.hash == read.hash {
                accepted = (read, after, extents)
                break
            }
            confirmable = (state, read.hash)
        }
        guard let accepted else {
            for hash in written { store.discard(hash) }
            guard readAtAll else { return nil }   // vanished before a read: as if removed
            unsettled.append(rel)
            if let earlier = previousFiles[PlistKey(rel)], case .file(let hash, _) = earlier.kind {
                if let ost = try store.objectStatus(hash), Int(ost.st_size) == earlier.storedSize {
                    var kept = earlier
                    kept.unsettled = true
                    kept.earlierState = earlier.earlierState ?? previousTime
                    return kept
                }
            }
            leftOut.append(rel)
            return nil
        }
        let ingested: BackupStore.Ingested
        switch accepted.read {
        case .inMemory(let bytes, let hash): ingested = try store.ingest(bytes, hash: hash)
        case .stored(let stored): ingested = written.contains(stored.hash) ? stored : BackupStore.Ingested(hash: stored.hash, size: stored.size, storedBytes: 0)
        }
        for hash in written where hash != ingested.hash { store.discard(hash) }
        filesRead += 1
        bytesRead += ingested.size
        count(ingested)
        let state = FileStatus(accepted.st)
        return BackupEntry(path: rel, kind: .file(hash: ingested.hash, size: Int(accepted.st.st_size)), mode: UInt32(accepted.st.st_mode) & 0o7777,
                           modificationTime: state.modificationTime, changeTime: state.changeTime, inode: state.inode,
                           extents: accepted.extents)
    }

    /// One read of a file being settled: in memory, or already stored.
    enum SettleRead {
        case inMemory([UInt8], ContentHash)
        case stored(BackupStore.Ingested)

        var size: Int {
            switch self {
            case .inMemory(let bytes, _): return bytes.count
            case .stored(let ingested): return ingested.size
            }
        }

        var hash: ContentHash {
            switch self {
            case .inMemory(_, let hash): return hash
            case .stored(let ingested): return ingested.hash
            }
        }
    }

    /// Counts a stored object.
    private mutating func count(_ ingested: BackupStore.Ingested) {
        bytesStored += ingested.storedBytes
        if ingested.isNew { objectsStored += 1 }
    }

    /// The kernel's clock, which stamps file times: what a file's times are
    /// compared with (the manager's injected clock is for manifests).
    static func realTimeNanoseconds() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
    }

    /// How far a file's times may lag the real time of the write that set
    /// them: twice the coarse clock's tick (file systems stamp with it), at
    /// least 10 ms.
    static let timestampGranularity: Int64 = {
        var ts = timespec()
        guard clock_getres(CLOCK_REALTIME_COARSE, &ts) == 0 else { return 20_000_000 }
        return max(10_000_000, 2 * (Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)))
    }()
}

extension BackupStore {
    /// A new empty file (0600) in `.incoming` for a database copy; one at a
    /// time, since the lock holder is the only writer there.
    func newSnapshotFile() throws -> String {
        let path = incomingDirectory + "/snapshot.sqlite"
        for stale in [path, path + "-journal"] where unlink(stale) != 0 && errno != ENOENT {
            throw SystemError("unlink", path: stale, errno: errno)
        }
        let fd = Glibc.open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw SystemError("create", path: path, errno: errno) }
        close(fd)
        return path
    }

    /// Stores the finished file `temp` (in `.incoming`) as an object named
    /// by its hash, or removes it when the store has that object already.
    /// `path` is the file it is a copy of, for messages.
    func adopt(_ temp: String, path: String) throws -> Ingested {
        let hasher = ContentHasher()
        var count = 0
        do {
            let fd = Glibc.open(temp, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
            guard fd >= 0 else { throw SystemError("open", path: temp, errno: errno) }
            defer { close(fd) }
            try TreeOperations.readAll(fd, path: temp) { chunk in
                hasher.update(chunk)
                count += chunk.count
            }
        } catch {
            unlink(temp)
            throw error
        }
        let hash = hasher.finish()
        if try has(hash) {
            unlink(temp)
            return Ingested(hash: hash, size: count, storedBytes: 0)
        }
        try pending.add(hash, from: temp, incoming: incomingDirectory)
        return Ingested(hash: hash, size: count, storedBytes: count, isNew: true)
    }
}

extension BackupService {
    /// Why the stored object at `object`, whose contents begin with
    /// `prefix`, is not a sound database (SQLite's first complaint), or
    /// `nil` when it passes `PRAGMA integrity_check` or is no database.
    static func databaseProblem(_ object: String, prefix: [UInt8]) -> String? {
        guard SQLiteDatabase.hasHeader(prefix) else { return nil }
        do {
            let problems = try SQLiteDatabase.integrityProblems(ofFileAt: object)
            guard let first = problems.first else { return nil }
            return problems.count == 1 ? first : "\(first) (and \(problems.count - 1) more)"
        } catch {
            switch error {
            case .notADatabase(_, let code): return "not a valid database (SQLite result code \(code))"
            case .busy, .needsRecovery: return "it could not be opened"
            case .failed(_, let operation, let code, let message): return "\(operation): \(message) (SQLite result code \(code))"
            }
        }
    }
}
