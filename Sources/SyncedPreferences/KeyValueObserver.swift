#if canImport(Glibc)
import Glibc
#endif
import AppHomeSystem

/// Waits for a store's notices (``KeyValueChange``) in any process: it
/// watches `<root>/Library/SyncedPreferences` with inotify and reads the
/// store's notice file when it is replaced.
public final class KeyValueObserver {
    private let watcher = DirectoryWatcher()
    private let path: String
    /// The last sequence number delivered.
    public private(set) var lastSequence: Int

    /// Starts observing `store`: notices already kept are not delivered.
    public init(sync: KeyValueSync, store: StoreIdentifier) throws(SyncError) {
        do { try FileSystem.makeDirectories(sync.directory) } catch { throw .system(error) }
        path = sync.eventsPath(store)
        watcher.watch(sync.directory)
        lastSequence = EventFile.read(path).last?.sequence ?? 0
    }

    /// The notices that arrived since the last call, waiting up to
    /// `timeout` seconds for one when there is none yet.
    public func next(timeout: Double) -> [KeyValueChange] {
        let deadline = SystemClock.monotonicSeconds() + timeout
        while true {
            let fresh = EventFile.read(path).filter { $0.sequence > lastSequence }
            if let last = fresh.last {
                lastSequence = last.sequence
                return fresh
            }
            let left = deadline - SystemClock.monotonicSeconds()
            if left <= 0 { return [] }
            var fds = pollfd(fd: watcher.fd, events: Int16(POLLIN), revents: 0)
            // Without inotify, read again every 100 ms.
            let ms = watcher.fd >= 0 ? Int32(min(left, 3600) * 1000) + 1 : Int32(min(left, 0.1) * 1000) + 1
            _ = poll(&fds, 1, ms)
            _ = watcher.drain()
        }
    }
}
