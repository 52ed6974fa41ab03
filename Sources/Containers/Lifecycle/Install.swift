#if canImport(Glibc)
import Glibc
#endif
import AppHomeSystem
import Preferences

/// Installs a bundle into a new home (``install(_:)``).
public struct Installer: ContainerOperation, Sendable {
    /// The root it installs into.
    public let context: ContainerContext

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
    /// ``Doctor/checkAndRepair(dryRun:environment:hookTimeout:)`` finishes or undoes it.
    ///
    /// - Throws: ``ContainersError/alreadyInstalled(_:)`` when the bundle id
    ///   has a home; ``ContainersError/interruptedOperation(_:)`` while a
    ///   journal is pending; ``ContainersError/system(_:)`` for file-system
    ///   failures.
    public func install(_ bundle: AppBundle) throws(ContainersError) -> InstallReport {
        let transaction = try registry.beginTransaction(refusingPendingJournal: true)
        defer { transaction.end() }
        var current = transaction.registry
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
                try TreeOperations.makeNewDirectory(home.path)
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
            try transaction.commit(current)
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
}
