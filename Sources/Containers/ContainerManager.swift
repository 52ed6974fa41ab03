#if canImport(Glibc)
import Glibc
#endif
import Preferences
import PropertyList

/// Installs, updates, uninstalls, backs up and restores apps under one root.
///
/// Every change takes the registry lock for its whole duration and writes
/// the registry last (install, update) or first (uninstall), so a crash
/// leaves at worst a home that no registry entry points at: an orphan that
/// a later `doctor` can find by listing `Applications/` and remove. The
/// registry never points at a half-built or half-removed home.
public struct ContainerManager: Sendable {
    /// The layout of the root.
    public let layout: ContainerLayout
    /// The registry file.
    public let registry: ContainerRegistry
    /// The clock for install times.
    public let now: @Sendable () -> PlistDate
    /// Makes the UUID for a new home.
    public let makeUUID: @Sendable () -> String
    /// What keeps app data outside the homes (the keychain), called on
    /// uninstall, backup and restore; see ``AppDataParticipant``.
    public let participants: [any AppDataParticipant]

    /// - Parameters:
    ///   - root: the AppHome root.
    ///   - now: the clock; the system's real-time clock by default.
    ///   - makeUUID: makes home UUIDs; random (version 4, uppercase) by default.
    ///   - participants: what keeps app data outside the homes; none by default.
    public init(root: String,
                now: @escaping @Sendable () -> PlistDate = ContainerManager.systemClock,
                makeUUID: @escaping @Sendable () -> String = { HostIdentifier.makeUUID() },
                participants: [any AppDataParticipant] = []) {
        self.layout = ContainerLayout(root: root)
        self.registry = ContainerRegistry(layout: layout)
        self.now = now
        self.makeUUID = makeUUID
        self.participants = participants
    }

    /// The system's real-time clock.
    public static let systemClock: @Sendable () -> PlistDate = {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return PlistDate(secondsSince1970: Double(ts.tv_sec) + Double(ts.tv_nsec / 1_000_000) / 1000)
    }

    /// The registry entry of `identifier`.
    ///
    /// - Throws: ``ContainersError/notInstalled(_:)`` when there is none.
    public func entry(for identifier: BundleIdentifier) throws(ContainersError) -> RegistryEntry {
        guard let e = try registry.read().entries[identifier] else { throw .notInstalled(identifier.rawValue) }
        return e
    }

    /// The current home of `identifier`.
    ///
    /// - Throws: ``ContainersError/notInstalled(_:)`` when it is not installed.
    public func home(for identifier: BundleIdentifier) throws(ContainersError) -> ApplicationHome {
        let e = try entry(for: identifier)
        return layout.home(uuid: e.homeUUID, bundleName: e.bundleName)
    }

    // MARK: Install

    /// What an install did.
    public struct InstallReport: Equatable, Sendable {
        /// The registry entry written.
        public var entry: RegistryEntry
        /// The new home.
        public var home: ApplicationHome
        /// Bytes copied for the bundle.
        public var bundleBytesCopied: Int
    }

    /// Installs `bundle` into a new home.
    ///
    /// Steps: create `<root>/Applications/<UUID>` (0700), copy the bundle in
    /// whole and read-only, create the standard directories, write the
    /// registry. If a step fails the new home is removed; a crash leaves at
    /// worst an orphaned home not in the registry.
    ///
    /// - Throws: ``ContainersError/alreadyInstalled(_:)`` when the bundle id
    ///   has a home; ``ContainersError/system(_:)`` for file-system failures.
    public func install(_ bundle: AppBundle) throws(ContainersError) -> InstallReport {
        let lock = try registry.lock()
        defer { lock.unlock() }
        var current = try registry.read()
        if current.entries[bundle.identifier] != nil { throw .alreadyInstalled(bundle.identifier.rawValue) }
        let uuid = makeUUID()
        let home = layout.home(uuid: uuid, bundleName: bundle.name)
        var created = false
        do {
            let bytes: Int = try containersErrors {
                try TreeOperations.makeDirectory(layout.applicationsDirectory)
                guard mkdir(home.path, 0o700) == 0 else { throw SystemError("mkdir", path: home.path, errno: errno) }
                created = true
                let bytes = try TreeOperations.copyReadOnly(bundle.path, to: home.app)
                for dir in home.standardDirectories { try TreeOperations.makeDirectory(dir) }
                TreeOperations.syncDirectory(home.path)
                TreeOperations.syncDirectory(layout.applicationsDirectory)
                return bytes
            }
            let entry = makeEntry(bundle, uuid: uuid)
            current.entries[bundle.identifier] = entry
            try registry.write(current)
            return InstallReport(entry: entry, home: home, bundleBytesCopied: bytes)
        } catch {
            if created { try? TreeOperations.remove(home.path) }
            throw error
        }
    }

    func makeEntry(_ bundle: AppBundle, uuid: String) -> RegistryEntry {
        RegistryEntry(bundleIdentifier: bundle.identifier, homeUUID: uuid, bundleName: bundle.name, version: bundle.version,
                      shortVersion: bundle.shortVersion, displayName: bundle.displayName, installTime: now())
    }
}
