#if canImport(Glibc)
import Glibc
#endif
import AppHomeSystem
import DefaultsCommand
import Preferences
import PrefsClient
import PrefsProtocol
import PropertyList
import Synchronization

/// What changed in an app's domain since the main loop last looked: the
/// keys set (with their new values) and removed, merged in order; or
/// `nil` (``Pending/delta``) when the whole domain must be read again (its
/// watch started, so changes before it are not known).
struct Pending: Sendable {
    var delta: (set: [PlistKey: PlistValue], removed: Set<String>)? = ([:], [])

    mutating func merge(_ change: DomainChange) {
        guard var d = delta else { return }
        for (k, v) in change.set { d.set[k] = v; d.removed.remove(k.string) }
        for k in change.removed { d.set[PlistKey(k)] = nil; d.removed.insert(k) }
        delta = d
    }
}

/// Watches the domains of the apps the page shows, each on a thread of its
/// own (prefsd's subscription when prefsd answers, else inotify on the
/// domain's file through ``FileDomainWatch``), and wakes the main loop
/// through a pipe with the ids of the apps whose values changed and what
/// changed in them.
final class DomainWatchers: Sendable {
    let root: String
    let prefsd: PrefsdSettings
    /// What changed since the main loop last looked (by app id, in the order
    /// of the first change), and the ids watched.
    let state = Mutex<(changed: [(String, Pending)], watched: Set<String>)>(([], []))
    /// The pipe: the watchers write a byte, the main loop reads it.
    let readEnd: Int32
    let writeEnd: Int32

    init(root: String, prefsd: PrefsdSettings) throws(SystemError) {
        self.root = root
        self.prefsd = prefsd
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw SystemError("pipe2", path: "", errno: errno) }
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC); _ = fcntl(fd, F_SETFL, O_NONBLOCK) }
        readEnd = fds[0]
        writeEnd = fds[1]
    }

    /// Starts watching `domain` for the app `id`, once.
    func watch(id: String, domain: Domain) {
        let started = state.withLock { $0.watched.insert(id).inserted }
        guard started else { return }
        let address = DomainAddress(domain, scope: .anyHost)
        let root = self.root, prefsd = self.prefsd
        let thread = Threads.spawn { [self] in
            let record = { (change: DomainChange?) in
                self.state.withLock { s in
                    var pending = s.changed.first { $0.0 == id }?.1 ?? Pending()
                    if let change { pending.merge(change) } else { pending.delta = nil }
                    if let i = s.changed.firstIndex(where: { $0.0 == id }) { s.changed[i].1 = pending } else { s.changed.append((id, pending)) }
                }
                var byte: UInt8 = 1
                _ = write(self.writeEnd, &byte, 1)
            }
            let report = { (change: DomainChange) -> Bool in record(change); return true }
            // Changes made before the watch started are not known: a page reads the whole domain again.
            let initial = { (_: [PlistKey: PlistValue]?) in record(nil) }
            if let connection = try? prefsd.connect(root: root) {
                try? connection.watch(address, initial: initial, handler: report)
            } else {
                try? FileDomainWatch(makeStore: { DefaultsCommand.fileStore(root: root) }, address: address,
                                     follow: ContainerLayout.registryPathForWatch(root: root)).watch(initial: initial, handler: report)
            }
            // The watch ended (prefsd went away, the domain could not be read):
            // a later page load starts it again.
            _ = self.state.withLock { $0.watched.remove(id) }
        }
        if let thread { pthread_detach(thread) } else { _ = state.withLock { $0.watched.remove(id) } }
    }

    /// Whether the app `id`'s domain is being watched.
    func isWatching(_ id: String) -> Bool {
        state.withLock { $0.watched.contains(id) }
    }

    /// The apps changed since the last call and what changed (drains the pipe).
    func takeChanged() -> [(String, Pending)] {
        var buffer = [UInt8](repeating: 0, count: 256)
        while read(readEnd, &buffer, buffer.count) > 0 {}
        return state.withLock { s in
            defer { s.changed = [] }
            return s.changed
        }
    }
}

import Containers

extension ContainerLayout {
    /// The registry file a domain watch follows (installs move an app's domain).
    static func registryPathForWatch(root: String) -> String { ContainerLayout(root: root).registryPath }
}
