#if canImport(Glibc)
import Glibc
#endif
import AppHomeSystem

/// Waits for a store's notices (``KeyValueChange``) in any process: it
/// watches `<root>/Library/SyncedPreferences` with inotify and reads the
/// store's notice file when it is replaced.
///
/// The directory may be removed and made again while it waits (the root
/// restored, sync set up anew): it is then watched again (looked for every
/// 100 ms while it is missing), and since the new directory's notices are
/// numbered from 1 again, every notice in it is new to this observer.
public final class KeyValueObserver {
    private let watcher = DirectoryWatcher()
    private let directory: String
    private let path: String
    /// The directory whose notices ``lastSequence`` counts (device and
    /// inode; `nil` while it is missing).
    private var directoryIdentity: (device: UInt64, inode: UInt64)?
    /// The last sequence number delivered.
    public private(set) var lastSequence: Int

    /// Starts observing `store`: notices already kept are not delivered.
    public init(sync: KeyValueSync, store: StoreIdentifier) throws(SyncError) {
        do { try FileSystem.makeDirectories(sync.directory) } catch { throw .system(error) }
        directory = sync.directory
        path = sync.eventsPath(store)
        watcher.watch(directory)
        directoryIdentity = FileStatus.of(directory).map { ($0.device, $0.inode) }
        lastSequence = EventFile.read(path).last?.sequence ?? 0
    }

    /// The notices that arrived since the last call, waiting up to
    /// `timeout` seconds for one when there is none yet.
    public func next(timeout: Double) -> [KeyValueChange] {
        let deadline = SystemClock.monotonicSeconds() + timeout
        while true {
            // Watched before it is read: a notice written after the read is an event.
            let watching = watcher.fd >= 0 && (watcher.isWatching(directory) || watcher.watch(directory))
            let identity = FileStatus.of(directory).map { ($0.device, $0.inode) }
            if let identity, directoryIdentity.map({ $0 != identity }) ?? true {
                // Another directory than the one counted (or one again after none): its notices are all new.
                if directoryIdentity != nil { lastSequence = 0 }
                directoryIdentity = identity
            }
            let fresh = EventFile.read(path).filter { $0.sequence > lastSequence }
            if let last = fresh.last {
                lastSequence = last.sequence
                return fresh
            }
            let left = deadline - SystemClock.monotonicSeconds()
            if left <= 0 { return [] }
            var fds = pollfd(fd: watcher.fd, events: Int16(POLLIN), revents: 0)
            // Without inotify, or while the directory is missing, look again every 100 ms.
            let ms = watching ? Int32(min(left, 3600) * 1000) + 1 : Int32(min(left, 0.1) * 1000) + 1
            _ = poll(&fds, 1, ms)
            _ = watcher.drain()
        }
    }
}
