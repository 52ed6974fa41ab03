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
    private let lock: FileLock

    private init(_ lock: FileLock) { self.lock = lock }

    /// Takes the lock at `path` shared, waiting only while a cleaner holds it.
    public static func shared(_ path: String) throws(SystemError) -> RunLock {
        RunLock(try FileLock(path: path, mode: .shared))
    }

    /// Takes the lock at `path` exclusively without waiting; `nil` when a
    /// running app holds it.
    public static func exclusiveIfFree(_ path: String) throws(SystemError) -> RunLock? {
        try FileLock.ifFree(path: path, mode: .exclusive).map(RunLock.init)
    }

    /// Releases the lock.
    public func unlock() { lock.unlock() }
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
    public func lockAgainstRunning(_ entry: RegistryEntry) throws(ContainersError) -> () -> Void {
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
