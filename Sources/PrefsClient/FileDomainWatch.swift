#if canImport(Glibc)
import Glibc
#endif
import AppHomeSystem
import Preferences
import PrefsProtocol
import PropertyList

/// Watches one domain's file directly, without prefsd: inotify on the
/// directory that holds it (writers replace the file by `rename`, so the
/// file itself cannot be watched), then a fresh read and a diff against the
/// last contents. The embedded-mode counterpart of a prefsd subscription
/// (``PrefsConnection/watch(_:initial:handler:)``): the same
/// ``DomainChange``s, from any writer, `defaults` or an editor.
///
/// A directory that does not exist yet is looked for again every
/// ``retryInterval`` milliseconds; when it appears (or comes back after
/// being removed) the domain is read again, so no change is missed.
///
/// Like a subscription, the watch follows its domain: when the file
/// `follow` changes (the app registry, whose installs and uninstalls move
/// an app's domain between the root and a home), the store is made again
/// and, if the domain now lives in another file, the watch moves there and
/// reports the difference.
///
/// A read that fails (a file caught half-written by an editor) is skipped;
/// the next change is reported against the last good contents.
public final class FileDomainWatch {
    let makeStore: () -> any PreferenceStore
    let address: DomainAddress
    let follow: String?
    /// How often a missing directory is looked for, in milliseconds.
    let retryInterval: Int32 = 500

    /// - Parameters:
    ///   - makeStore: builds the store the domain is read through; called
    ///     again when `follow` changes.
    ///   - follow: a file whose changes may move the domain
    ///     (`<root>/Applications/registry.plist`), or `nil`.
    public init(makeStore: @escaping () -> any PreferenceStore, address: DomainAddress, follow: String? = nil) {
        self.makeStore = makeStore
        self.address = address
        self.follow = follow
    }

    /// Calls `handler` with each change until it returns `false`.
    ///
    /// - Parameter initial: called once with the contents when watching starts.
    /// - Throws: ``PreferencesError`` when the domain cannot be located or
    ///   read when watching starts (a damaged file), or when inotify is not
    ///   available.
    public func watch(initial: ([PlistKey: PlistValue]?) -> Void = { _ in },
                      handler: (DomainChange) -> Bool) throws(PreferencesError) {
        var store = makeStore()
        var path = try store.location(of: address.domain, scope: address.scope)
        let watcher = DirectoryWatcher()
        guard watcher.fd >= 0 else { throw .system(SystemError("inotify_init1", path: path, errno: errno)) }
        // The follow file's directory, or its parent while it does not exist yet.
        let followDirectory = follow.map(FileSystem.parentDirectory)
        func watchFollowed() -> Bool {
            guard let followDirectory else { return false }
            if watcher.isWatching(followDirectory) { return false }
            if watcher.watch(followDirectory) { return true }
            _ = watcher.watch(FileSystem.parentDirectory(followDirectory))
            return false
        }
        _ = watchFollowed()
        _ = watcher.watch(FileSystem.parentDirectory(path))
        // Read after the watches are set, so a write in between is not lost.
        var current = try store.read(address.domain, scope: address.scope)
        initial(current)
        while true {
            let directory = FileSystem.parentDirectory(path)
            let followed = followDirectory.map { watcher.isWatching($0) || watcher.isWatching(FileSystem.parentDirectory($0)) } ?? true
            var pfd = pollfd(fd: watcher.fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&pfd, 1, watcher.isWatching(directory) && followed ? -1 : retryInterval)
            if ready < 0 {
                if errno == EINTR { continue }
                throw .system(SystemError("poll", path: directory, errno: errno))
            }
            let touched = ready > 0 ? watcher.drain() : []
            var moved = false
            if let follow, watchFollowed() || watcher.overflowed || touched.contains(follow) {
                store = makeStore()
                if let now = try? store.location(of: address.domain, scope: address.scope), now != path {
                    path = now
                    _ = watcher.watch(FileSystem.parentDirectory(path))
                    moved = true
                }
            }
            let rewatched = !watcher.isWatching(FileSystem.parentDirectory(path)) && watcher.watch(FileSystem.parentDirectory(path))
            guard moved || watcher.overflowed || rewatched || touched.contains(path) else { continue }
            let next: [PlistKey: PlistValue]?
            do { next = try store.read(address.domain, scope: address.scope) } catch { continue }
            if let change = DomainChange.between(current ?? [:], next ?? [:], subscription: 0, address: address) {
                current = next
                if !handler(change) { return }
            }
        }
    }
}
