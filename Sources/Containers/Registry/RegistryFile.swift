import AppHomeSystem
import Preferences

/// The registry file under a root (`<root>/Applications/registry.plist`,
/// holding a ``Registry``): reading it, the writers' lock, and replacing it
/// atomically and durably while the caller holds that lock. Writers go
/// through ``beginTransaction(refusingPendingJournal:)``.
public struct RegistryFile: Sendable {
    /// The layout of the root.
    public let layout: ContainerLayout

    public init(layout: ContainerLayout) {
        self.layout = layout
    }

    /// The registry on disk; empty when the file does not exist yet.
    ///
    /// Readers take no lock: the file is only ever replaced by `rename`, so
    /// a reader sees the old registry or the new one.
    public func read() throws(ContainersError) -> Registry {
        let bytes: [UInt8]?
        do { bytes = try FileSystem.readFileIfPresent(layout.registryPath) } catch { throw .system(error) }
        guard let bytes else { return Registry() }
        return try Registry(decoding: bytes, path: layout.registryPath)
    }

    /// Replaces the registry file (temp file 0600, `fsync`, `rename`, `fsync`
    /// of the directory). Call with the lock from ``lock()`` held.
    public func write(_ registry: Registry) throws(ContainersError) {
        let bytes = try registry.encoded()
        do { try FileSystem.writeAtomically(bytes, to: layout.registryPath) } catch { throw .system(error) }
    }

    /// Creates `<root>/Applications` if needed and takes the writers' lock.
    public func lock() throws(ContainersError) -> FileLock {
        do {
            try FileSystem.makeDirectories(layout.applicationsDirectory)
            return try FileLock(path: layout.lockPath)
        } catch { throw .system(error) }
    }

    /// The registry entry of `identifier`, read now.
    ///
    /// - Throws: ``ContainersError/notInstalled(_:)`` when there is none.
    public func entry(for identifier: BundleIdentifier) throws(ContainersError) -> RegistryEntry {
        guard let e = try read().entries[identifier] else { throw .notInstalled(identifier.rawValue) }
        return e
    }

    /// The current home of `identifier`, or `nil` when it is not installed.
    public func home(for identifier: BundleIdentifier) throws(ContainersError) -> ApplicationHome? {
        guard let e = try read().entries[identifier] else { return nil }
        return layout.home(uuid: e.homeUUID, bundleName: e.bundleName)
    }

    /// A look-up for `DomainResolver.appPreferencesDirectory`: given a
    /// domain name, `<home>/Library/Preferences` of the installed app with
    /// that bundle id, else `nil`.
    ///
    /// The registry is read once, when this function is called; a missing,
    /// damaged or too-new registry gives a look-up that finds nothing, so
    /// `defaults` keeps working on the root's own domains.
    ///
    /// - Parameter root: the AppHome root.
    /// - Returns: a function safe to call from any thread.
    public static func preferencesDirectoryLookup(root: String) -> @Sendable (String) -> String? {
        let frozen = preferencesDirectories(root: root)
        return { name in frozen[name] }
    }

    /// Every installed app's bundle id mapped to its home's
    /// `Library/Preferences`, and every app group of an installed app to
    /// its container's `Library/Preferences` (so the suite `group.x` lives
    /// in `<group container>/Library/Preferences/group.x.plist`), read from
    /// the registry once. A missing, damaged or newer-format registry gives
    /// an empty table.
    public static func preferencesDirectories(root: String) -> [String: String] {
        preferencesDirectories(readOrEmpty(root: root), layout: ContainerLayout(root: root))
    }

    /// The registry under `root`, or an empty one when it cannot be read
    /// (what `defaults` resolves domains with: no app is installed there).
    public static func readOrEmpty(root: String) -> Registry {
        (try? RegistryFile(layout: ContainerLayout(root: root)).read()) ?? Registry()
    }

    /// ``preferencesDirectories(root:)`` from a registry already read.
    public static func preferencesDirectories(_ registry: Registry, layout: ContainerLayout) -> [String: String] {
        var table: [String: String] = [:]
        for e in registry.entries.values {
            table[e.bundleIdentifier.rawValue] = layout.home(uuid: e.homeUUID, bundleName: e.bundleName).preferences
            for group in e.groups {
                if let uuid = registry.groups[group] { table[group.rawValue] = layout.groupContainer(uuid: uuid).preferences }
            }
        }
        return table
    }

    /// The bundle id of the installed app named `name`, as `defaults -app`
    /// resolves it: by bundle directory (`<name>.app`) first, then by
    /// display name; case-sensitive, as on the device. `nil` when none
    /// matches or the registry cannot be read.
    public static func applicationDomain(named name: String, root: String) -> String? {
        applicationDomain(named: name, in: readOrEmpty(root: root))
    }

    /// ``applicationDomain(named:root:)`` in a registry already read.
    public static func applicationDomain(named name: String, in registry: Registry) -> String? {
        let entries = registry.sortedEntries
        if let e = entries.first(where: { $0.bundleName == name + ".app" || $0.bundleName == name }) { return e.bundleIdentifier.rawValue }
        return entries.first { $0.displayName == name }?.bundleIdentifier.rawValue
    }

    /// The app-group containers of the installed app `identifier`: group
    /// id and container, sorted by group id.
    ///
    /// - Throws: ``ContainersError/notInstalled(_:)``.
    public func groupContainers(of identifier: BundleIdentifier) throws(ContainersError) -> [(AppGroupIdentifier, GroupContainer)] {
        try groupContainers(of: identifier, in: read())
    }

    /// ``groupContainers(of:)`` in a registry already read.
    ///
    /// - Throws: ``ContainersError/notInstalled(_:)``.
    public func groupContainers(of identifier: BundleIdentifier, in registry: Registry) throws(ContainersError) -> [(AppGroupIdentifier, GroupContainer)] {
        guard let entry = registry.entries[identifier] else { throw .notInstalled(identifier.rawValue) }
        return entry.groups.compactMap { group in registry.groups[group].map { (group, layout.groupContainer(uuid: $0)) } }
    }
}

/// The name ``RegistryFile`` had before it was named for what it holds;
/// kept so that callers written against it still compile.
public typealias ContainerRegistry = RegistryFile
