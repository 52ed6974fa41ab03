#if canImport(Glibc)
import Glibc
#endif
import AppHomeSystem
import Preferences
import PropertyList

/// Installs, updates, uninstalls, backs up and restores apps under one root.
///
/// Every change takes the registry lock for its whole duration, writes a
/// journal (``Journal``) before it touches anything, and writes the
/// registry last (install, update) or first (uninstall), so the registry
/// never points at a half-built or half-removed home, and after a crash the
/// journal says exactly what to finish or undo.
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
    /// Called after every journaled step of an install, update or
    /// uninstall with `<operation>.<step>` (`update.moveLibrary`). Tests
    /// throw ``ContainersError/simulatedCrash(step:)`` from it to stop an
    /// operation dead, as a crash would; the binary can `SIGKILL` itself
    /// here. Does nothing by default.
    public var stepHook: @Sendable (String) throws(ContainersError) -> Void = { _ throws(ContainersError) in }

    /// - Parameters:
    ///   - root: the AppHome root.
    ///   - now: the clock; the system's real-time clock by default.
    ///   - makeUUID: makes home UUIDs; random (version 4, uppercase) by default.
    ///   - participants: what keeps app data outside the homes; none by default.
    public init(root: String,
                now: @escaping @Sendable () -> PlistDate = ContainerManager.systemClock,
                makeUUID: @escaping @Sendable () -> String = { Random.uuid() },
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
        /// Participants that failed to set up the new home (the install stands).
        public var participantFailures: [String] = []
    }

    /// Installs `bundle` into a new home.
    ///
    /// Steps (``InstallStep``): create `<root>/Applications/<UUID>` (0700),
    /// copy the bundle in whole and read-only, create the standard
    /// directories, create the containers of app groups that do not exist
    /// yet, write the registry. A journal is written first and removed
    /// last; if a step fails the new home is removed. After a crash,
    /// ``doctor(dryRun:environment:hookTimeout:)`` finishes or undoes it.
    ///
    /// - Throws: ``ContainersError/alreadyInstalled(_:)`` when the bundle id
    ///   has a home; ``ContainersError/interruptedOperation(_:)`` while a
    ///   journal is pending; ``ContainersError/system(_:)`` for file-system
    ///   failures.
    public func install(_ bundle: AppBundle) throws(ContainersError) -> InstallReport {
        let lock = try registry.lock()
        defer { lock.unlock() }
        try requireNoPendingJournal()
        var current = try registry.read()
        if current.entries[bundle.identifier] != nil { throw .alreadyInstalled(bundle.identifier.rawValue) }
        try checkEntitlements(bundle, in: current)
        let uuid = makeUUID()
        let home = layout.home(uuid: uuid, bundleName: bundle.name)
        let entry = makeEntry(bundle, uuid: uuid)
        var newGroups: [AppGroupIdentifier: String] = [:]
        for group in entry.groups where current.groups[group] == nil { newGroups[group] = makeUUID() }
        var journal = Journal(operation: .install, entry: entry, groups: newGroups)
        try beginJournal(journal)
        var created = false
        var bytes = 0
        do throws(ContainersError) {
            try containersErrors {
                guard mkdir(home.path, 0o700) == 0 else { throw SystemError("mkdir", path: home.path, errno: errno) }
                created = true
            }
            try completed(InstallStep.createHome.rawValue, &journal)
            bytes = try containersErrors { try TreeOperations.copyReadOnly(bundle.path, to: home.app) }
            try checkCopy(of: bundle, at: home.app)
            try completed(InstallStep.copyBundle.rawValue, &journal)
            try containersErrors {
                for dir in home.standardDirectories { try TreeOperations.makeDirectory(dir) }
                TreeOperations.syncDirectory(home.path)
                TreeOperations.syncDirectory(layout.applicationsDirectory)
            }
            try completed(InstallStep.createDirectories.rawValue, &journal)
            try createGroupContainers(newGroups)
            try completed(InstallStep.createGroups.rawValue, &journal)
            current.entries[bundle.identifier] = entry
            current.groups.merge(newGroups) { old, _ in old }
            current.recordTeam(entry.team, of: newGroups.keys)
            try registry.write(current)
        } catch .simulatedCrash(let step) {
            throw .simulatedCrash(step: step)
        } catch {
            if created { try? TreeOperations.remove(home.path) }
            removeGroupContainers(newGroups)
            try? clearJournal()
            throw error
        }
        // The install is committed: from here on nothing is undone.
        try completed(InstallStep.writeRegistry.rawValue, &journal)
        try clearJournal()
        return InstallReport(entry: entry, home: home, bundleBytesCopied: bytes,
                             participantFailures: announceHome(entry, home: home))
    }

    /// Tells every participant that `entry`'s home `home` is committed;
    /// returns what failed, for the report (nothing is undone).
    func announceHome(_ entry: RegistryEntry, home: ApplicationHome) -> [String] {
        var failures: [String] = []
        for participant in participants {
            do { try participant.appHomeReady(entry, home: home) } catch {
                failures.append("\(participant.name) could not set up the home of \(entry.bundleIdentifier.rawValue): \(error)")
            }
        }
        return failures
    }

    /// Creates the containers of `groups` (group id → UUID), each with its
    /// standard directories.
    func createGroupContainers(_ groups: [AppGroupIdentifier: String]) throws(ContainersError) {
        guard !groups.isEmpty else { return }
        try containersErrors {
            try FileSystem.makeDirectories(layout.groupsDirectory)
            for (group, uuid) in groups.sorted(by: { $0.value < $1.value }) {
                let container = layout.groupContainer(uuid: uuid)
                try TreeOperations.makeDirectory(container.path)
                for dir in container.standardDirectories { try TreeOperations.makeDirectory(dir) }
                try container.writeIdentity(group)
                TreeOperations.syncDirectory(container.path)
            }
            TreeOperations.syncDirectory(layout.groupsDirectory)
        }
    }

    /// Removes the containers of `groups`, ignoring failures (cleanup).
    func removeGroupContainers(_ groups: [AppGroupIdentifier: String]) {
        for uuid in groups.values { try? TreeOperations.remove(layout.groupContainer(uuid: uuid).path) }
        if !groups.isEmpty { TreeOperations.syncDirectory(layout.groupsDirectory) }
    }

    /// The entry for `bundle`: what its signature grants (nothing but its
    /// own group when it is unsigned), never what `Info.plist` says later.
    func makeEntry(_ bundle: AppBundle, uuid: String) -> RegistryEntry {
        RegistryEntry(bundleIdentifier: bundle.identifier, homeUUID: uuid, bundleName: bundle.name, version: bundle.version,
                      shortVersion: bundle.shortVersion, displayName: bundle.displayName, installTime: now(),
                      groups: bundle.signature?.entitlements.applicationGroups ?? [], team: bundle.signature?.team,
                      keychainGroups: bundle.signature?.entitlements.keychainAccessGroups ?? [])
    }
}

extension GroupContainer {
    /// Writes the identity file naming `group`.
    func writeIdentity(_ group: AppGroupIdentifier) throws {
        let plist = PlistValue.dictionary(["Identifier": .string(group.rawValue)])
        try FileSystem.writeAtomically(try PlistCodec.encode(plist, format: .binary), to: identityFile)
    }

    /// The group the identity file names, or `nil` when it is missing or unreadable.
    func readIdentity() -> AppGroupIdentifier? {
        guard let bytes = try? FileSystem.readFileIfPresent(identityFile),
              case .string(let raw)? = (try? PlistCodec.decode(bytes))?.dictionaryValue?["Identifier"] else { return nil }
        return try? AppGroupIdentifier(raw)
    }
}
