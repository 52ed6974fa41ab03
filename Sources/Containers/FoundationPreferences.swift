#if canImport(Glibc)
import Glibc
#endif
import AppHomeSystem
import Preferences

/// What `apphome run` and `apphome launch` put in a home's
/// `Library/Preferences` so that stock Foundation (swift-corelibs-foundation)
/// finds the app's preferences where AppHome keeps them.
///
/// With `XDG_CONFIG_HOME=<home>/Library/Preferences`, Foundation's
/// `UserDefaults` reads and writes `<XDG_CONFIG_HOME>/<name>.plist` for every
/// domain it opens: the app's own domain (already there), the global domain
/// as `.GlobalPreferences.plist`, and a suite `group.…` as
/// `group.….plist`. Two of those live elsewhere in AppHome, so before the
/// program starts:
///
/// - the global domain (`<root>/Library/Preferences/.GlobalPreferences.plist`)
///   is **copied** into the home, read-only (0400): the app sees what
///   `defaults write -g` set when it started, and cannot change the user's
///   global domain (on iOS an app cannot either); a copy, not a link,
///   because Foundation writes through links;
/// - each app group the registry gives the app gets a **symbolic link**
///   `group.<id>.plist` → the suite's file in the group's container.
///   Foundation opens the path with `O_TRUNC` and writes in place (measured
///   with `strace`: no temporary file, no `rename`), so it follows the link
///   both ways and the group's other apps, `defaults` and prefsd see the
///   write. Links of groups the app no longer holds are removed.
///
/// Nothing here follows a link the app may have placed: the home's entries
/// are examined with `lstat`, and only links and AppHome's own copy are
/// replaced.
public enum FoundationPreferences {
    /// The name of the global domain's file, which Foundation looks for.
    public static let globalFileName = ".GlobalPreferences.plist"

    /// Prepares `home`'s `Library/Preferences` for Foundation: the global
    /// domain's copy and the group links.
    ///
    /// - Parameters:
    ///   - home: the app's home.
    ///   - root: the AppHome root (where the global domain lives).
    ///   - groups: the app's groups and their containers.
    /// - Throws: ``SystemError`` when the directory cannot be written.
    public static func prepare(home: ApplicationHome, root: String, groups: [(AppGroupIdentifier, GroupContainer)]) throws(SystemError) {
        let dir = home.preferences
        try FileSystem.makeDirectories(dir)
        try copyGlobalDomain(from: DomainResolver(root: root).preferencesDirectory + "/" + globalFileName,
                             to: dir + "/" + globalFileName)
        let wanted = Dictionary(uniqueKeysWithValues: groups.map { ($0.0.rawValue + ".plist", $0.1.preferences + "/" + $0.0.rawValue + ".plist") })
        for name in try FileSystem.directoryEntries(dir) where name.hasPrefix("group.") && name.hasSuffix(".plist") {
            let path = dir + "/" + name
            guard isSymbolicLink(path) else { continue }
            if let target = wanted[name], readLink(path) == target { continue }
            try FileSystem.removeFile(path)
        }
        for (name, target) in wanted.sorted(by: { $0.key < $1.key }) {
            let path = dir + "/" + name
            if isSymbolicLink(path) { continue }  // kept above: it points at the suite
            // A regular file of that name is the app's own (written before it
            // held the group, or placed by it): left alone, Foundation uses it.
            if FileSystem.exists(path) { continue }
            guard symlink(target, path) == 0 else { throw SystemError("symlink", path: path, errno: errno) }
        }
    }

    private static func copyGlobalDomain(from source: String, to destination: String) throws(SystemError) {
        let bytes = try? FileSystem.readFileIfPresent(source)
        // Only a regular file or AppHome's own copy is replaced; an app's
        // link there is removed so that it cannot redirect the copy.
        if isSymbolicLink(destination) { try FileSystem.removeFile(destination) }
        guard let bytes = bytes ?? nil else {
            if FileSystem.exists(destination) { try FileSystem.removeFile(destination) }
            return
        }
        try FileSystem.writeAtomically(bytes, to: destination)
        guard chmod(destination, 0o400) == 0 else { throw SystemError("chmod", path: destination, errno: errno) }
    }

    private static func isSymbolicLink(_ path: String) -> Bool {
        var st = stat()
        return lstat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFLNK
    }

    private static func readLink(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: 4096)
        let n = readlink(path, &buffer, buffer.count - 1)
        guard n >= 0 else { return nil }
        return String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
