import Preferences
import PrefsProtocol
import PropertyList

/// Telling subscribers that an administrator changed what their domain forces.
extension PrefsServer {
    /// When `changed` (an event under the managed directory or on the way
    /// to it, a lost watch, or the start): watches the managed directory if
    /// it exists and reads it again. Each subscriber whose domain's forced
    /// values changed hears the difference in its domain's effective
    /// contents (stored values under forced ones). A turn without such an
    /// event costs nothing: while the directory does not exist, the
    /// nearest directory above it is watched (``ManagedWatch/ancestor``).
    func refreshManaged(changed: Bool) {
        guard let watch = managedWatch, changed else { return }
        _ = watch.watchIfPresent(cache.watcher)
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
