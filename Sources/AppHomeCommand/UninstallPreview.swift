#if canImport(Glibc)
import Glibc
#endif
import AppHomeSystem
import CommandSupport
import Containers
import Keychain

extension AppHomeCommand {
    /// `uninstall --dry-run <bundle-id>`: what an uninstall would remove
    /// (the home, the app groups no other app holds, the keychain access
    /// groups no other app holds, with their files, bytes and items) and
    /// which hooks would run. Reads only: nothing changes, not even an
    /// interrupted operation's journal.
    func previewUninstall(_ id: BundleIdentifier) throws {
        var registry = try manager.registry.read()
        guard let entry = registry.entries.removeValue(forKey: id) else { throw ContainersError.notInstalled(id.rawValue) }
        console.out("would uninstall \(id) \(entry.displayVersion):\n")
        let home = manager.layout.home(uuid: entry.homeUUID, bundleName: entry.bundleName)
        var totalFiles = 0, totalBytes: UInt64 = 0
        func show(_ what: String, _ path: String) throws {
            let (files, bytes) = try Self.measure(path)
            totalFiles += files
            totalBytes += bytes
            console.out("  \(what) \(path): \(files) file\(files == 1 ? "" : "s"), \(ByteCount.human(bytes))\n")
        }
        try show("home", home.path)
        for group in entry.groups.sorted(by: { $0.rawValue < $1.rawValue }) where registry.members(of: group).isEmpty {
            guard let uuid = registry.groups[group] else { continue }
            try show("app group \(group.rawValue)", manager.layout.groupContainer(uuid: uuid).path)
        }
        let keychain = KeychainParticipant(root: manager.layout.root, policy: environment.keychainKeyPolicy)
        var items = 0
        for (group, count) in try keychain.groupsShredded(uninstalling: entry, remaining: Array(registry.entries.values)) {
            items += count
            console.out("  keychain access group \(group.rawValue): \(count) item\(count == 1 ? "" : "s") (shredded)\n")
        }
        let hooks = (try? FileSystem.directoryEntries(manager.layout.uninstallHooksDirectory))?.filter { !$0.hasPrefix(".") }.sorted() ?? []
        for hook in hooks { console.out("  hook \(manager.layout.uninstallHooksDirectory)/\(hook) would run (if executable)\n") }
        console.out("in total \(totalFiles) file\(totalFiles == 1 ? "" : "s") (\(ByteCount.human(totalBytes))) and "
                    + "\(items) keychain item\(items == 1 ? "" : "s"); nothing changed (dry run)\n")
    }

    /// The files (of every kind but directories) at or below the directory
    /// `path` and the bytes of the regular ones; symbolic links are counted,
    /// never followed.
    static func measure(_ path: String) throws(SystemError) -> (files: Int, bytes: UInt64) {
        guard let fd = try DirectoryTree.openDirectory(path) else { return (0, 0) }
        defer { close(fd) }
        var files = 0, bytes: UInt64 = 0
        for name in try DirectoryTree.entries(fd, path: path) {
            var st = stat()
            guard fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 else { continue }
            if st.st_mode & S_IFMT == S_IFDIR {
                let inner = try measure(path + "/" + name)
                files += inner.files
                bytes += inner.bytes
            } else {
                files += 1
                if st.st_mode & S_IFMT == S_IFREG { bytes += UInt64(max(0, st.st_size)) }
            }
        }
        return (files, bytes)
    }
}
