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
public final class FileDomainWatch {
    let store: any PreferenceStore
    let address: DomainAddress
    let path: String
    /// How often a missing directory is looked for, in milliseconds.
    public var retryInterval: Int32 = 500

    /// - Throws: ``PreferencesError`` when the domain's file cannot be located.
    public init(store: any PreferenceStore, address: DomainAddress) throws(PreferencesError) {
        self.store = store
        self.address = address
        self.path = try store.location(of: address.domain, scope: address.scope)
    }

    /// Calls `handler` with each change until it returns `false`.
    ///
    /// - Parameter initial: called once with the contents when watching starts.
    /// - Throws: ``PreferencesError`` when the domain cannot be read (a
    ///   damaged file), or when inotify is not available.
    public func watch(initial: ([String: PlistValue]?) -> Void = { _ in },
                      handler: (DomainChange) -> Bool) throws(PreferencesError) {
        let watcher = DirectoryWatcher()
        guard watcher.fd >= 0 else { throw .system(SystemError("inotify_init1", path: path, errno: errno)) }
        let directory = FileSystem.parentDirectory(path)
        _ = watcher.watch(directory)
        // Read after the watch is set, so a write in between is not lost.
        var current = try store.read(address.domain, scope: address.scope)
        initial(current)
        while true {
            let watching = watcher.isWatching(directory)
            var pfd = pollfd(fd: watcher.fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&pfd, 1, watching ? -1 : retryInterval)
            if ready < 0 {
                if errno == EINTR { continue }
                throw .system(SystemError("poll", path: directory, errno: errno))
            }
            let touched = ready > 0 ? watcher.drain() : []
            let rewatched = !watcher.isWatching(directory) && watcher.watch(directory)
            guard watcher.overflowed || rewatched || touched.contains(path) else { continue }
            let next = try store.read(address.domain, scope: address.scope)
            if let change = DomainChange.between(current ?? [:], next ?? [:], subscription: 0, address: address) {
                current = next
                if !handler(change) { return }
            }
        }
    }
}
