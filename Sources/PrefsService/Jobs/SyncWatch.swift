#if canImport(Glibc)
import Glibc
#endif
import AppHomeSystem
import PrefsProtocol
import Synchronization
import SyncedPreferences

/// Keeps the synced key-value stores live while prefsd runs: a thread of
/// its own watches the sync folder (and the set-up, which `apphome sync
/// setup` may change) with inotify, and runs a merge pass as soon as
/// another device's log arrives there, so remote changes are applied and
/// their watchers notified within a second. A pass also runs once a
/// minute, in case an event was lost.
///
/// The pass takes the stores' own lock, so it never interleaves with a
/// write of `defaults --synced`, the Swift API or `apphome sync now`; it
/// touches no domain prefsd caches.
final class SyncWatch: @unchecked Sendable {
    private let sync: KeyValueSync
    private let log: @Sendable (String) -> Void
    private let stopped = Atomic<Bool>(false)

    init(root: String, log: @escaping @Sendable (String) -> Void) {
        sync = KeyValueSync(root: root)
        self.log = log
    }

    func start() { DetachedThread.start { [self] in loop() } }

    func stop() { stopped.store(true, ordering: .releasing) }

    private func loop() {
        var watcher = DirectoryWatcher()
        var folder: String? = nil
        var device: String? = nil
        var lastPass = -Double.infinity
        var due = true
        while !stopped.load(ordering: .acquiring) {
            // The directory appears with the first synced store or `apphome sync setup`;
            // until then a look once a second costs one failed open.
            if !watcher.isWatching(sync.directory) && !watcher.watch(sync.directory) { due = true }
            if let f = folder, !watcher.isWatching(f) { watcher.watch(f) }
            if due || SystemClock.monotonicSeconds() - lastPass > 60 {
                due = false
                lastPass = SystemClock.monotonicSeconds()
                if let configured = try? sync.folder(), configured != folder {
                    // A new folder: watch it instead (a fresh watcher drops the old one).
                    watcher = DirectoryWatcher()
                    watcher.watch(sync.directory)
                    watcher.watch(configured)
                    folder = configured
                }
                if folder != nil { runPass() }
                device = sync.configuredDevice()
            }
            var fds = pollfd(fd: watcher.fd, events: Int16(POLLIN), revents: 0)
            _ = poll(&fds, 1, watcher.fd >= 0 && watcher.isWatching(sync.directory) ? 250 : 1000)
            if watcher.fd < 0 { due = true; continue }
            for path in watcher.drain() {
                let name = FileSystem.lastComponent(path)
                if path == sync.configurationPath { due = true }
                if let folder, FileSystem.parentDirectory(path) == folder, name.hasSuffix(ChangeLog.fileExtension),
                   !name.hasPrefix("."), name != (device ?? "") + ChangeLog.fileExtension { due = true }
            }
            if watcher.overflowed { due = true }
        }
    }

    private func runPass() {
        do {
            let report = try sync.pass(warn: { [log] in log("prefsd: sync: \($0)") })
            for change in report.changes { log("prefsd: sync: \(change.store): \(change.keys.count) key(s) changed (\(change.reason))") }
        } catch {
            log("prefsd: sync: \(error)")
        }
    }
}
