import Preferences
import PrefsProtocol
import PropertyList

/// Telling subscribers that an administrator changed what their domain forces.
extension PrefsServer {
    /// Watches the managed directory when it exists and reads it; when it
    /// appeared after the start, or `changed` (an event under it), each
    /// subscriber whose domain's forced values changed hears the difference
    /// in its domain's effective contents (stored values under forced ones).
    func refreshManaged(changed: Bool) {
        guard let watch = managedWatch else { return }
        let appeared = watch.watchIfPresent(cache.watcher)
        guard appeared || changed else { return }
        let (old, new) = watch.reread()
        if old == new { return }
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
