import PrefsProtocol
import PropertyList

/// Who listens to which domain file: each subscription by the file its
/// domain resolves to, so that a change to a file reaches every
/// subscriber of it, whatever address they named it by.
struct SubscriptionTable {
    struct Subscription {
        var clientID: Int
        var id: Int
        var address: DomainAddress
    }

    /// By file path, compared by its exact scalars (see ``PlistKey``).
    private var byPath: [PlistKey: [Subscription]] = [:]
    private var nextID = 1

    /// The subscriptions to the file at `path`.
    subscript(path: String) -> [Subscription] { byPath[path] ?? [] }

    /// Every subscription, grouped by the file it listens to.
    var byFile: [(path: String, subscriptions: [Subscription])] { byPath.compactMap { $0.value.isEmpty ? nil : ($0.key.string, $0.value) } }

    /// Whether anyone listens to the file at `path`.
    func isSubscribed(_ path: String) -> Bool { byPath[path] != nil }

    /// How many subscriptions there are in all.
    var count: Int { byPath.values.map(\.count).reduce(0, +) }

    /// Adds a subscription of `clientID` to `address` (at `path`); returns its number.
    mutating func add(clientID: Int, address: DomainAddress, path: String) -> Int {
        let id = nextID
        nextID += 1
        byPath[path, default: []].append(Subscription(clientID: clientID, id: id, address: address))
        return id
    }

    /// Removes the subscription numbered `id` from the file at `path`.
    mutating func remove(_ id: Int, at path: String) {
        byPath[path]?.removeAll { $0.id == id }
    }

    /// Removes every subscription of a client that is gone (at `paths`).
    mutating func removeClient(_ clientID: Int, at paths: Set<PlistKey>) {
        for key in paths {
            let path = key.string
            byPath[path]?.removeAll { $0.clientID == clientID }
            if byPath[path]?.isEmpty == true { byPath[path] = nil }
        }
    }

    /// A group of subscriptions whose domain now resolves to another file.
    struct Move {
        var old: String
        var new: String
        var subscriptions: [Subscription]
    }

    /// The subscriptions whose domain `resolve` now puts in another file,
    /// grouped by old and new file, in a stable order.
    func moves(resolve: (DomainAddress) -> String?) -> [Move] {
        var moves: [PlistKey: [PlistKey: [Subscription]]] = [:]  // old path → new path → subscriptions
        for (old, subs) in byPath {
            for s in subs {
                guard let path = resolve(s.address) else { continue }
                let new = PlistKey(path)
                if new == old { continue }
                moves[old, default: [:]][new, default: []].append(s)
            }
        }
        var result: [Move] = []
        for old in moves.keys.sorted() {
            let targets = moves[old]!
            for new in targets.keys.sorted() {
                result.append(Move(old: old.string, new: new.string, subscriptions: targets[new]!))
            }
        }
        return result
    }

    /// Moves the subscriptions of `move` to its new file.
    mutating func apply(_ move: Move) {
        let moving = Set(move.subscriptions.map(\.id))
        byPath[move.old]?.removeAll { moving.contains($0.id) }
        if byPath[move.old]?.isEmpty == true { byPath[move.old] = nil }
        byPath[move.new, default: []].append(contentsOf: move.subscriptions)
    }
}
