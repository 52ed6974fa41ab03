import AppHomeSystem
import Preferences
import PropertyList

/// The administrator's managed directory as prefsd last read it, so that
/// after an inotify event subscribers hear what their domains' forced
/// values became. Owned by the service's loop.
final class ManagedWatch {
    let managed: ManagedPreferences
    /// Every managed file's trusted contents, by domain, at the last look.
    private(set) var files: [Domain: [PlistKey: PlistValue]] = [:]

    init(_ managed: ManagedPreferences) {
        self.managed = managed
    }

    /// Watches the directory once it exists (a later `mkdir` is seen on the
    /// next turn) and reads it; true when it started watching now.
    func watchIfPresent(_ watcher: DirectoryWatcher) -> Bool {
        if watcher.isWatching(managed.directory) || !watcher.watch(managed.directory) { return false }
        return true
    }

    /// Whether `paths` (from the watcher) touch the managed directory.
    func concerns(_ paths: [String]) -> Bool {
        paths.contains { FileSystem.parentDirectory($0) == managed.directory || $0 == managed.directory }
    }

    /// Reads the directory again; returns the contents before and after.
    func reread() -> (old: [Domain: [PlistKey: PlistValue]], new: [Domain: [PlistKey: PlistValue]]) {
        let old = files
        files = managed.all()
        return (old, files)
    }
}
