#if canImport(Glibc)
import Glibc
#endif
import AppHomeSystem
import Preferences

/// The per-home lock that says "an app is running": `apphome run` holds it
/// shared while its command runs; `clean-tmp` and `purge-caches` try to take
/// it exclusively and leave the home alone when they cannot. The kernel
/// drops an `flock` when its holder dies, so it is never stale.
public final class RunLock {
    private var fd: Int32

    private init(fd: Int32) { self.fd = fd }

    private static func open(_ path: String) throws(SystemError) -> Int32 {
        let fd = Glibc.open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw SystemError("open lock", path: path, errno: errno) }
        return fd
    }

    /// Takes the lock at `path` shared, waiting only while a cleaner holds it.
    public static func shared(_ path: String) throws(SystemError) -> RunLock {
        let fd = try open(path)
        while flock(fd, LOCK_SH) != 0 {
            if errno == EINTR { continue }
            let e = errno
            close(fd)
            throw SystemError("flock", path: path, errno: e)
        }
        return RunLock(fd: fd)
    }

    /// Takes the lock at `path` exclusively without waiting; `nil` when a
    /// running app holds it.
    public static func exclusiveIfFree(_ path: String) throws(SystemError) -> RunLock? {
        let fd = try open(path)
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            if errno == EINTR { continue }
            let e = errno
            close(fd)
            if e == EWOULDBLOCK { return nil }
            throw SystemError("flock", path: path, errno: e)
        }
        return RunLock(fd: fd)
    }

    /// Releases the lock.
    public func unlock() {
        if fd >= 0 { close(fd); fd = -1 }
    }

    deinit { unlock() }
}

extension ContainerOperation {
    /// Takes the run lock of `entry`'s home exclusively for an operation
    /// that replaces or removes the home (update, uninstall, restore), so
    /// that no `apphome run` starts in it meanwhile.
    ///
    /// - Returns: a release function that also removes the lock file (it
    ///   belongs to a home that is about to go, and a `run` waiting on it
    ///   looks the home up again once it gets the lock).
    /// - Throws: ``ContainersError/appRunning(_:)`` when a command runs in the home.
    func lockAgainstRunning(_ entry: RegistryEntry) throws(ContainersError) -> () -> Void {
        let path = layout.runLockPath(uuid: entry.homeUUID)
        guard let held = try containersErrors({ try RunLock.exclusiveIfFree(path) }) else {
            throw .appRunning(entry.bundleIdentifier.rawValue)
        }
        return {
            unlink(path)
            held.unlock()
        }
    }
}
