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
    /// While the managed directory does not exist: the nearest directory
    /// above it that does, watched, so that the managed directory (or a
    /// directory on the way to it) appearing is an event there. No turn
    /// looks for it otherwise.
    private(set) var ancestor: String?
    /// How many times it tried to start watching the managed directory.
    private(set) var looks = 0

    init(_ managed: ManagedPreferences) {
        self.managed = managed
    }

    /// After the loop drained `paths` from the watcher (`overflowed`: events
    /// were lost or a watched directory went away; also the start): when
    /// they concern the managed directory or the way to it, watches it if
    /// it exists and reads it again, returning the contents before and
    /// after. Else `nil`, at no cost: no turn looks for a missing directory.
    func refresh(_ watcher: DirectoryWatcher, after paths: [String], overflowed: Bool)
        -> (old: [Domain: [PlistKey: PlistValue]], new: [Domain: [PlistKey: PlistValue]])? {
        guard overflowed || concerns(paths) else { return nil }
        watchIfPresent(watcher)
        return reread()
    }

    /// Watches the managed directory if it exists and is not watched yet:
    /// true when it started watching now. Else watches the nearest
    /// directory above it that exists (``ancestor``) and looks once more,
    /// for a managed directory made between the two looks.
    @discardableResult
    func watchIfPresent(_ watcher: DirectoryWatcher) -> Bool {
        if watcher.isWatching(managed.directory) { return false }
        looks += 1
        if watcher.watch(managed.directory) { ancestor = nil; return true }
        var directory = managed.directory
        ancestor = nil
        while true {
            let parent = FileSystem.parentDirectory(directory)
            if parent == directory { break }
            directory = parent
            if watcher.watch(directory) { ancestor = directory; break }
        }
        looks += 1
        if watcher.watch(managed.directory) { ancestor = nil; return true }
        return false
    }

    /// Whether `paths` (from the watcher) touch the managed directory, or,
    /// while it does not exist, a directory on the way to it.
    func concerns(_ paths: [String]) -> Bool {
        let target = managed.directory.utf8
        return paths.contains { path in
            if FileSystem.parentDirectory(path) == managed.directory || path == managed.directory { return true }
            guard ancestor != nil else { return false }
            // `path` is above the managed directory: `target` begins with `path` + "/".
            return target.count > path.utf8.count && target.starts(with: path.utf8)
                && target[target.index(target.startIndex, offsetBy: path.utf8.count)] == UInt8(ascii: "/")
        }
    }

    /// Reads the directory again; returns the contents before and after.
    func reread() -> (old: [Domain: [PlistKey: PlistValue]], new: [Domain: [PlistKey: PlistValue]]) {
        let old = files
        files = managed.all()
        return (old, files)
    }
}
