import Preferences
import PrefsProtocol
import PropertyList

/// Telling subscribers that an administrator changed what their domain forces.
extension PrefsServer {
    /// After the watcher's `paths` (`overflowed`: events lost, a watch
    /// lost, or the start), the managed directory as ``ManagedWatch/refresh(_:after:overflowed:)``
    /// reads it again: each subscriber whose domain's forced values changed
    /// hears the difference in its domain's effective contents (stored
    /// values under forced ones).
    func refreshManaged(after paths: [String], overflowed: Bool) {
        guard let (old, new) = managedWatch?.refresh(cache.watcher, after: paths, overflowed: overflowed), old != new else { return }
        for (path, subs) in subscriptions.byFile {
            let domain = subs[0].address.domain
            let before = ManagedPreferences.forcedValues(in: domain, of: old)
            let after = ManagedPreferences.forcedValues(in: domain, of: new)
            if before == after { continue }
            let stored = ((try? cache.load(domain, path: path)) ?? nil) ?? [:]
            notify(subs, old: stored.merging(before) { _, forced in forced }, new: stored.merging(after) { _, forced in forced })
        }
    }
}
