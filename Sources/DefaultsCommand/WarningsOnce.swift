import CommandSupport
import Synchronization

/// Prints each warning of the managed layer once per command, however many
/// times the directory is read (the write policy and `read --effective`
/// each read it).
final class WarningsOnce: @unchecked Sendable {
    // `console` is only used under `seen`'s lock.
    private let console: Console
    private let seen = Mutex<Set<String>>([])

    init(_ console: Console) { self.console = console }

    func warn(_ message: String) {
        seen.withLock { seen in
            guard seen.insert(message).inserted else { return }
            console.err("defaults: warning: \(message)\n")
        }
    }
}
