import PrefsProtocol
import PropertyList

/// Telling subscribers what changed: after a commit, after an edit behind
/// the service's back, and when the registry moved their domain.
extension PrefsServer {
    /// Sends each of `subs` the change from `old` to `new`, if any.
    func notify(_ subs: [SubscriptionTable.Subscription], old: [PlistKey: PlistValue], new: [PlistKey: PlistValue]) {
        for s in subs {
            guard let c = clients[s.clientID],
                  let change = DomainChange.between(old, new, subscription: s.id, address: s.address) else { continue }
            counters.notifications += 1
            send(c, .change(change))
        }
    }

    /// The file at `path` changed behind the service's back: its
    /// subscribers hear the difference from the last contents read.
    func notifyExternal(_ path: String) {
        let subs = subscriptions[path]
        guard let first = subs.first, let entry = cache.entry(path) else { return }
        let old = entry.contents ?? [:]
        let new: [PlistKey: PlistValue]?
        do { new = try cache.load(first.address.domain, path: path) } catch { return }
        notify(subs, old: old, new: new ?? [:])
    }

    /// After the registry changed: each subscription whose domain now
    /// resolves to another file moves to it, and its subscriber hears the
    /// difference between the old file's contents and the new one's (after
    /// an install, the app's domain is the new home's, empty; after an
    /// uninstall, the root's file again).
    func followMovedDomains() {
        for move in subscriptions.moves(resolve: cache.currentPath(for:)) {
            subscriptions.apply(move)
            let subs = move.subscriptions
            for s in subs { clients[s.clientID]?.subscriptions[s.id] = move.new }
            let domain = subs[0].address.domain
            let before = (try? cache.load(domain, path: move.old)) ?? nil
            let after = (try? cache.load(domain, path: move.new)) ?? nil
            // Only the moving subscriptions hear of the move, not those already at `new`.
            notify(subs, old: before ?? [:], new: after ?? [:])
        }
    }
}
