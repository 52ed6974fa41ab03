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
    /// The directory whose notices ``lastSequence`` counts.
    private var counted: DirectoryIdentity?
    /// The last sequence number delivered.
    public private(set) var lastSequence: Int

    /// Starts observing `store`: notices already kept are not delivered.
    public init(sync: KeyValueSync, store: StoreIdentifier) throws(SyncError) {
        do { try FileSystem.makeDirectories(sync.directory) } catch { throw .system(error) }
        directory = sync.directory
        path = sync.eventsPath(store)
        watcher.watch(directory)
        counted = DirectoryIdentity(directory)
        lastSequence = EventFile.read(path).last?.sequence ?? 0
    }

    /// The notices that arrived since the last call, waiting up to
    /// `timeout` seconds for one when there is none yet.
    public func next(timeout: Double) -> [KeyValueChange] {
        let deadline = SystemClock.monotonicSeconds() + timeout
        while true {
            // Watched before it is read: a notice written after the read is an event.
            let watching = watcher.watch(directory)   // true at once when it is watched already
            if let now = DirectoryIdentity(directory), now != counted {
                // Another directory than the one counted: its notices are all new.
                if counted != nil { lastSequence = 0 }
                counted = now
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

/// A directory as itself, not its name: device and inode.
private struct DirectoryIdentity: Equatable {
    let device: UInt64, inode: UInt64

    init?(_ path: String) {
        guard let status = FileStatus.of(path) else { return nil }
        (device, inode) = (status.device, status.inode)
    }
}
