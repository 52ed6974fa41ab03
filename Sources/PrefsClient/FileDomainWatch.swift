#if canImport(Glibc)
import Glibc
#endif
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
/// Like a subscription, the watch follows its domain: when a file in
/// `followDirectory` changes (the app registry, whose installs and
/// uninstalls move an app's domain between the root and a home), the
/// store is made again and, if the domain now lives in another file, the
/// watch moves there and reports the difference.
public final class FileDomainWatch {
    let makeStore: () -> any PreferenceStore
    let address: DomainAddress
    let followDirectory: String?
    /// How often a missing directory is looked for, in milliseconds.
    public var retryInterval: Int32 = 500

    /// - Parameters:
    ///   - makeStore: builds the store the domain is read through; called
    ///     again when something in `followDirectory` changes.
    ///   - followDirectory: a directory whose changes may move the domain
    ///     (`<root>/Applications`), or `nil`.
    public init(makeStore: @escaping () -> any PreferenceStore, address: DomainAddress, followDirectory: String? = nil) {
        self.makeStore = makeStore
        self.address = address
        self.followDirectory = followDirectory
    }

    /// Calls `handler` with each change until it returns `false`.
    ///
    /// - Parameter initial: called once with the contents when watching starts.
    /// - Throws: ``PreferencesError`` when the domain cannot be located or
    ///   read (a damaged file), or when inotify is not available.
    public func watch(initial: ([String: PlistValue]?) -> Void = { _ in },
                      handler: (DomainChange) -> Bool) throws(PreferencesError) {
        var store = makeStore()
        var path = try store.location(of: address.domain, scope: address.scope)
        let watcher = DirectoryWatcher()
        guard watcher.fd >= 0 else { throw .system(SystemError("inotify_init1", path: path, errno: errno)) }
        // A follow directory that does not exist yet is noticed through its parent.
        if let followDirectory, !watcher.watch(followDirectory) { _ = watcher.watch(FileSystem.parentDirectory(followDirectory)) }
        _ = watcher.watch(FileSystem.parentDirectory(path))
        // Read after the watches are set, so a write in between is not lost.
        var current = try store.read(address.domain, scope: address.scope)
        initial(current)
        while true {
            let directory = FileSystem.parentDirectory(path)
            let watching = watcher.isWatching(directory) && (followDirectory.map(watcher.isWatching) ?? true)
            var pfd = pollfd(fd: watcher.fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&pfd, 1, watching ? -1 : retryInterval)
            if ready < 0 {
                if errno == EINTR { continue }
                throw .system(SystemError("poll", path: directory, errno: errno))
            }
            let touched = ready > 0 ? watcher.drain() : []
            var moved = false
            if let followDirectory {
                let followed = !watcher.isWatching(followDirectory) && watcher.watch(followDirectory)
                if !watcher.isWatching(followDirectory) { _ = watcher.watch(FileSystem.parentDirectory(followDirectory)) }
                if watcher.overflowed || followed || touched.contains(where: { FileSystem.parentDirectory($0) == followDirectory }) {
                    store = makeStore()
                    let now = try store.location(of: address.domain, scope: address.scope)
                    if now != path {
                        path = now
                        _ = watcher.watch(FileSystem.parentDirectory(path))
                        moved = true
                    }
                }
            }
            let rewatched = !watcher.isWatching(FileSystem.parentDirectory(path)) && watcher.watch(FileSystem.parentDirectory(path))
            guard moved || watcher.overflowed || rewatched || touched.contains(path) else { continue }
            let next = try store.read(address.domain, scope: address.scope)
            if let change = DomainChange.between(current ?? [:], next ?? [:], subscription: 0, address: address) {
                current = next
                if !handler(change) { return }
            }
        }
    }
}
