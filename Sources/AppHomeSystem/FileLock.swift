#if canImport(Glibc)
import Glibc
#endif

/// An advisory lock (`flock`) held on a lock file until ``unlock()`` or
/// deinitialisation. The kernel drops it when the process dies, so a crashed
/// holder never leaves a stale lock. The one wrapper of `flock`: the domain
/// locks of the commit path and the homes' run locks are both this.
public final class FileLock {
    /// Whether others may hold the lock at the same time.
    public enum Mode: Sendable {
        case shared, exclusive

        var operation: Int32 { self == .shared ? LOCK_SH : LOCK_EX }
    }

    private var fd: Int32

    /// Opens (creating 0600 if needed) `path` and blocks until the lock is held.
    public init(path: String, mode: Mode = .exclusive) throws(SystemError) {
        fd = Syscalls.open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw SystemError("open lock", path: path, errno: errno) }
        do { _ = try Self.acquire(fd, mode.operation, path: path) } catch {
            fd = -1
            throw error
        }
    }

    private init(holding fd: Int32) { self.fd = fd }

    /// The lock on an existing lock file at `path` if no one holds it now,
    /// without waiting and without creating the file.
    ///
    /// - Returns: the held lock; `nil` when another process holds it.
    ///   A missing lock file is free: the returned lock then holds nothing
    ///   (no writer can be inside without having created the file).
    /// - Throws: ``SystemError`` when the file cannot be opened or locked.
    public static func exclusiveIfFree(path: String) throws(SystemError) -> FileLock? {
        let fd = Syscalls.open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        if fd < 0 {
            if errno == ENOENT { return FileLock(holding: -1) }
            throw SystemError("open lock", path: path, errno: errno)
        }
        return try acquire(fd, LOCK_EX | LOCK_NB, path: path) ? FileLock(holding: fd) : nil
    }

    /// The lock at `path` (created 0600 if needed) taken with `mode` without
    /// waiting; `nil` when another process holds it in a conflicting mode.
    public static func ifFree(path: String, mode: Mode) throws(SystemError) -> FileLock? {
        let fd = Syscalls.open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw SystemError("open lock", path: path, errno: errno) }
        return try acquire(fd, mode.operation | LOCK_NB, path: path) ? FileLock(holding: fd) : nil
    }

    /// `flock(fd, operation)`, retrying `EINTR`. False when a non-blocking
    /// attempt finds the lock held; on false or a throw `fd` is closed.
    private static func acquire(_ fd: Int32, _ operation: Int32, path: String) throws(SystemError) -> Bool {
        while Syscalls.lock(fd, operation, path: path) != 0 {
            if errno == EINTR { continue }
            let e = errno
            close(fd)
            if e == EWOULDBLOCK && operation & LOCK_NB != 0 { return false }
            throw SystemError("flock", path: path, errno: e)
        }
        return true
    }

    /// Releases the lock.
    public func unlock() {
        if fd >= 0 { close(fd); fd = -1 }
    }

    deinit { unlock() }
}
