#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// What a long-running process (prefsd) parsed from files, kept while each
/// file stays the same version (``FileStatus``): a reader looks at the file
/// with one `stat` and parses it again only when a writer replaced, changed
/// or removed it.
///
/// The status is taken *before* the file is read, so a write racing the read
/// leaves a value kept under the older status, which the next look no longer
/// matches: the worst a race costs is one more read, never a stale answer.
/// Every AppHome writer replaces a file by renaming a new inode over it; a
/// change made in place in the same clock tick, with the same size, would go
/// unseen (the kernel's file times are coarse), which only the file's owner
/// can make. Errors are never kept: a file that failed to parse is read
/// again next time. What `load` makes of a missing file is kept too (an
/// empty registry, say) until the file appears; a `nil` is never kept.
///
/// Thread-safe (one lock around the table, never held while a file is read).
/// At most `limit` files are kept; past that the table starts afresh.
public final class StampedFileCache<Value: Sendable>: Sendable {
    private struct Entry {
        /// `nil`: the file was missing.
        var status: FileStatus?
        var value: Value
    }
    private let entries = Mutex<[String: Entry]>([:])
    private let limit: Int
    private let followsLinks: Bool

    /// - Parameters:
    ///   - limit: how many files are kept at most.
    ///   - followsLinks: whether the status is the file a final symbolic
    ///     link names (`stat`) or the link itself (`lstat`, for readers that
    ///     refuse links with `O_NOFOLLOW`).
    public init(limit: Int = 64, followsLinks: Bool = true) {
        self.limit = limit
        self.followsLinks = followsLinks
    }

    /// The value parsed from `path`: the one kept when the file is the
    /// version it was read at, else what `load` returns now (kept unless it
    /// is `nil`). `load` reads the file itself, with whatever checks it
    /// makes, and says what a missing file means.
    public func value<E: Error>(at path: String, load: () throws(E) -> Value?) throws(E) -> Value? {
        var st = stat()
        let status: FileStatus?
        if (followsLinks ? stat(path, &st) : lstat(path, &st)) == 0 {
            status = FileStatus(st)
        } else if errno == ENOENT {
            status = nil
        } else {
            // Not a version of the file: whatever `load` says, nothing is kept.
            entries.withLock { _ = $0.removeValue(forKey: path) }
            return try load()
        }
        if let kept = entries.withLock({ $0[path] }), kept.status == status { return kept.value }
        guard let value = try load() else {
            entries.withLock { _ = $0.removeValue(forKey: path) }
            return nil
        }
        entries.withLock { table in
            if table.count >= limit && table[path] == nil { table.removeAll() }
            table[path] = Entry(status: status, value: value)
        }
        return value
    }

    /// What `load` returns, through `cache` when there is one (a
    /// long-running process), else read now.
    public static func value<E: Error>(in cache: StampedFileCache?, at path: String, load: () throws(E) -> Value?) throws(E) -> Value? {
        guard let cache else { return try load() }
        return try cache.value(at: path, load: load)
    }

    /// Drops everything kept (a writer of this process changed files).
    public func removeAll() {
        entries.withLock { $0.removeAll() }
    }

    /// How many files are kept now (for tests).
    public var count: Int { entries.withLock { $0.count } }
}
