#if canImport(Glibc)
import Glibc
#endif
import AppHomeSystem
import Preferences

/// The steps of an install, in order.
public enum InstallStep: String, CaseIterable, Sendable {
    /// Create the new home directory (0700).
    case createHome
    /// Copy the bundle in whole, read-only.
    case copyBundle
    /// Create the standard directories.
    case createDirectories
    /// Create the containers of app groups that do not exist yet.
    case createGroups
    /// Add the entry to the registry: the commit point.
    case writeRegistry
}

/// The steps of an update, in order. A test can make any of them fail
/// (see ``Updater/update(_:failAt:)``).
public enum UpdateStep: String, CaseIterable, Sendable {
    /// Create the new home directory (0700).
    case createHome
    /// Copy the new bundle in whole, read-only.
    case copyBundle
    /// Create `Library/`, `Library/Caches/` and `tmp/` in the new home.
    case createDirectories
    /// Rename `Documents/` into the new home.
    case moveDocuments
    /// Rename every `Library/` entry except `Caches` into the new home.
    case moveLibrary
    /// Create any standard directory the old home lacked.
    case completeDirectories
    /// Create the containers of app groups the new version adds.
    case createGroups
    /// Replace the registry, pointing at the new home.
    case switchRegistry
    /// Remove the old home (its bundle, `Caches` and `tmp`).
    case removeOldHome
}

/// Installs a new version of an installed app (``update(_:failAt:)``).
public struct Updater: ContainerOperation, Sendable {
    /// The root whose apps it updates.
    public let context: ContainerContext

    /// What an update did.
    public struct UpdateReport: Equatable, Sendable {
        /// The entry before the update.
        public var previous: RegistryEntry
        /// The entry after the update.
        public var entry: RegistryEntry
        /// The new home.
        public var home: ApplicationHome
        /// The top-level items renamed from the old home, relative to it
        /// (`Documents`, `Library/Preferences`, …).
        public var movedItems: [String]
        /// Bytes copied for user data: always 0, data is renamed.
        public var userDataBytesCopied: Int
        /// Bytes copied for the new bundle.
        public var bundleBytesCopied: Int
        /// The old home, when it could not be removed after the switch (the
        /// update stands; the old home is an orphan).
        public var leftoverHome: String?
        /// Why the old home could not be removed.
        public var leftoverReason: String?
        /// Participants that failed to set up the new home (the update stands).
        public var participantFailures: [String] = []
    }

    /// Installs a new version of an installed app into a new home and moves
    /// the user's data across by `rename(2)`.
    ///
    /// `Documents/` and every `Library/` entry except `Caches` move; `Caches`
    /// and `tmp` start empty; the bundle is replaced whole. If any step
    /// before ``UpdateStep/switchRegistry`` fails, the moved items are
    /// renamed back and the new home is removed, so the old version stays
    /// installed with its data. (If moving an item back fails, the new home
    /// is kept so no data is lost, and the error says so.) A failure to
    /// remove the old home after the switch does not undo the update; it is
    /// reported in ``UpdateReport/leftoverHome``.
    ///
    /// - Parameters:
    ///   - bundle: the new version; its bundle id must be installed.
    ///   - failAt: for tests: fail at the end of this step (after its work),
    ///     or, for ``UpdateStep/switchRegistry``, instead of writing.
    /// A lower `CFBundleVersion` than the installed one (``BundleVersion``)
    /// is refused unless `allowDowngrade`: a downgrade is how a fixed bug
    /// comes back.
    /// A signed app is updated only by a bundle signed by the same team;
    /// what the new bundle claims is checked as for an install.
    ///
    /// - Throws: ``ContainersError/notInstalled(_:)``, ``ContainersError/system(_:)``,
    ///   ``ContainersError/injectedFailure(step:)``,
    ///   ``ContainersError/differentPublisher(identifier:installed:offered:)``,
    ///   ``ContainersError/entitlementRefused(identifier:claim:reason:)``.
    public func update(_ bundle: AppBundle, failAt: UpdateStep? = nil, allowDowngrade: Bool = false) throws(ContainersError) -> UpdateReport {
        let transaction = try registry.beginTransaction(refusingPendingJournal: true)
        defer { transaction.end() }
        var current = transaction.registry
        guard let previous = current.entries[bundle.identifier] else {
            throw .notInstalled(bundle.identifier.rawValue)
        }
        try checkSamePublisher(bundle.signature?.team, replacing: previous)
        try checkNotDowngrade(bundle.identifier, installed: previous.version, installedDisplay: previous.displayVersion,
                              offered: bundle.version, offeredDisplay: bundle.displayVersion, what: "the bundle", allowDowngrade: allowDowngrade)
        try checkEntitlements(bundle, in: current)
        let release = try lockAgainstRunning(previous)
        defer { release() }
        let old = layout.home(uuid: previous.homeUUID, bundleName: previous.bundleName)
        let uuid = makeUUID()
        let new = layout.home(uuid: uuid, bundleName: bundle.name)
        let entry = makeEntry(bundle, uuid: uuid)
        var newGroups: [AppGroupIdentifier: String] = [:]
        for group in entry.groups where current.groups[group] == nil { newGroups[group] = makeUUID() }
        var journal = Journal(operation: .update, entry: entry, previous: previous, groups: newGroups)
        func checkpoint(_ step: UpdateStep) throws(ContainersError) {
            if failAt == step { throw .injectedFailure(step: step.rawValue) }
            try completed(step.rawValue, &journal)
        }
        try beginJournal(journal)

        var created = false
        var moved: [String] = []   // relative paths, in the order moved
        var bundleBytes = 0
        do throws(ContainersError) {
            try containersErrors {
                try TreeOperations.makeNewDirectory(new.path)
                created = true
            }
            try checkpoint(.createHome)
            bundleBytes = try containersErrors { try TreeOperations.copyReadOnly(bundle.path, to: new.app) }
            try checkCopy(of: bundle, at: new.app)
            try checkpoint(.copyBundle)
            try containersErrors {
                for dir in [new.library, new.caches, new.tmp] { try TreeOperations.makeDirectory(dir) }
            }
            try checkpoint(.createDirectories)
            try containersErrors {
                if FileSystem.exists(old.documents) {
                    try TreeOperations.rename(old.documents, to: new.documents)
                    moved.append("Documents")
                }
            }
            try checkpoint(.moveDocuments)
            try containersErrors {
                for name in try FileSystem.directoryEntries(old.library).sorted() where name != "Caches" {
                    try TreeOperations.rename(old.library + "/" + name, to: new.library + "/" + name)
                    moved.append("Library/" + name)
                }
            }
            try checkpoint(.moveLibrary)
            try containersErrors {
                for dir in new.standardDirectories { try TreeOperations.makeDirectory(dir) }
                TreeOperations.syncDirectory(new.library)
                TreeOperations.syncDirectory(new.path)
                TreeOperations.syncDirectory(old.library)
                TreeOperations.syncDirectory(old.path)
                TreeOperations.syncDirectory(layout.applicationsDirectory)
            }
            try checkpoint(.completeDirectories)
            try createGroupContainers(newGroups)
            try checkpoint(.createGroups)
            if failAt == .switchRegistry { throw ContainersError.injectedFailure(step: UpdateStep.switchRegistry.rawValue) }
            current.entries[bundle.identifier] = entry
            current.groups.merge(newGroups) { old, _ in old }
            current.recordTeam(entry.team, of: newGroups.keys)
            try transaction.commit(current)
        } catch .simulatedCrash(let step) {
            throw .simulatedCrash(step: step)
        } catch {
            try rollBack(moved: moved, from: new, to: old, removeNew: created, cause: error)
            removeGroupContainers(newGroups)
            try? clearJournal()
            throw error
        }
        // The update is committed: from here on nothing is rolled back.
        try completed(UpdateStep.switchRegistry.rawValue, &journal)

        var report = UpdateReport(previous: previous, entry: entry, home: new,
                                  movedItems: moved, userDataBytesCopied: 0, bundleBytesCopied: bundleBytes)
        do throws(ContainersError) {
            if failAt == .removeOldHome { throw ContainersError.injectedFailure(step: UpdateStep.removeOldHome.rawValue) }
            try containersErrors {
                try TreeOperations.remove(old.path)
                try FileSystem.removeFile(layout.runLockPath(uuid: previous.homeUUID))
            }
            TreeOperations.syncDirectory(layout.applicationsDirectory)
        } catch {
            report.leftoverHome = old.path
            report.leftoverReason = error.description
        }
        try completed(UpdateStep.removeOldHome.rawValue, &journal)
        try clearJournal()
        report.participantFailures = announceHome(entry, home: new)
        return report
    }

    /// Renames the moved items back into the old home, newest first, then
    /// removes the new home, unless an item could not be moved back.
    private func rollBack(moved: [String], from new: ApplicationHome, to old: ApplicationHome,
                          removeNew: Bool, cause: ContainersError) throws(ContainersError) {
        var stranded: [String] = []
        for item in moved.reversed() {
            do { try TreeOperations.rename(new.path + "/" + item, to: old.path + "/" + item) } catch { stranded.append(item) }
        }
        TreeOperations.syncDirectory(old.library)
        TreeOperations.syncDirectory(old.path)
        if !stranded.isEmpty {
            throw .system(SystemError("\(cause); rolling back, could not move \(stranded.joined(separator: ", ")) back; they are in",
                                      path: new.path, errno: EIO))
        }
        if removeNew { try? TreeOperations.remove(new.path) }
    }
}
