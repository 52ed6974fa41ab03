#if canImport(Glibc)
import Glibc
#endif

/// An exclusive advisory lock (`flock`) held on a lock file until
/// ``unlock()`` or deinitialisation. The kernel drops it when the process
/// dies, so a crashed writer never leaves a stale lock.
public final class FileLock {
    private var fd: Int32

    /// Opens (creating 0600 if needed) `path` and blocks until the lock is held.
    public init(path: String) throws(SystemError) {
        fd = Syscalls.open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw SystemError("open lock", path: path, errno: errno) }
        while Syscalls.lock(fd, LOCK_EX, path: path) != 0 {
            if errno == EINTR { continue }
            let e = errno
            close(fd)
            fd = -1
            throw SystemError("flock", path: path, errno: e)
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
        while Syscalls.lock(fd, LOCK_EX | LOCK_NB, path: path) != 0 {
            if errno == EINTR { continue }
            let e = errno
            close(fd)
            if e == EWOULDBLOCK { return nil }
            throw SystemError("flock", path: path, errno: e)
        }
        return FileLock(holding: fd)
    }

    /// Releases the lock.
    public func unlock() {
        if fd >= 0 { close(fd); fd = -1 }
    }

    deinit { unlock() }
}
