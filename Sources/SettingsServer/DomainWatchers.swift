#if canImport(Glibc)
import Glibc
#endif
import AppHomeSystem
import DefaultsCommand
import Preferences
import PrefsClient
import PrefsProtocol
import Synchronization

/// Watches the domains of the apps the page shows, each on a thread of its
/// own (prefsd's subscription when prefsd answers, else inotify on the
/// domain's file through ``FileDomainWatch``), and wakes the main loop
/// through a pipe with the ids of the apps whose values changed.
final class DomainWatchers: Sendable {
    let root: String
    let prefsd: PrefsdSettings
    /// The ids changed since the main loop last looked, and the ids watched.
    let state = Mutex<(changed: [String], watched: Set<String>)>(([], []))
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
            let report = { (_: DomainChange) -> Bool in
                self.state.withLock { if !$0.changed.contains(id) { $0.changed.append(id) } }
                var byte: UInt8 = 1
                _ = write(self.writeEnd, &byte, 1)
                return true
            }
            if let connection = try? prefsd.connect(root: root) {
                try? connection.watch(address, handler: report)
            } else {
                try? FileDomainWatch(makeStore: { DefaultsCommand.fileStore(root: root) }, address: address,
                                     follow: ContainerLayout.registryPathForWatch(root: root)).watch(handler: report)
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

    /// The ids changed since the last call (drains the pipe).
    func takeChanged() -> [String] {
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
