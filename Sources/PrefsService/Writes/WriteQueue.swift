import Preferences
import PrefsProtocol
import PropertyList

/// The writes of one loop turn, by domain file, waiting for the turn's
/// group commit.
struct WriteQueue {
    /// One client's write request, as it waits.
    struct PendingWrite {
        var clientID: Int
        var requestID: Int
        var domain: Domain
        var change: ChangeSet
        var options: WriteOptions
    }

    /// By file path, compared by its exact scalars (see ``PlistKey``).
    private var pending: [PlistKey: [PendingWrite]] = [:]
    private var order: [String] = []

    var isEmpty: Bool { order.isEmpty }

    /// Queues `write` for the file at `path`.
    mutating func append(_ write: PendingWrite, path: String) {
        let key = PlistKey(path)
        if let at = pending.index(forKey: key) {
            pending.values[at].append(write)
        } else {
            pending[key] = [write]
            order.append(path)
        }
    }

    /// Empties the queue: each file's writes, files in the order they were first written.
    mutating func take() -> [(path: String, writes: [PendingWrite])] {
        let all = pending
        let paths = order
        pending = [:]
        order = []
        return paths.compactMap { path in all[path].map { (path, $0) } }
    }
}
