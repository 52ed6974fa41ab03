#if canImport(Glibc)
import Glibc
#endif
import AppHomeSystem
import Preferences

/// The steps of an uninstall, in order.
public enum UninstallStep: String, CaseIterable, Sendable, Comparable {
    /// Remove the entry (and groups left without members) from the
    /// registry: the commit point.
    case removeEntry
    /// Remove the home and its run lock file.
    case removeHome
    /// Remove the containers of groups this app was the last member of.
    case removeGroups
    /// Tell the ``AppDataParticipant``s (the keychain).
    case notifyParticipants
    /// Run the hooks in `<root>/Hooks/uninstall.d/`.
    case runHooks

    public static func < (lhs: UninstallStep, rhs: UninstallStep) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }
}

/// Removes an installed app (``uninstall(_:environment:hookTimeout:)``),
/// and finishes an uninstall a crash interrupted.
public struct Uninstaller: ContainerOperation, Sendable {
    /// The root whose apps it removes.
    public let context: ContainerContext

    /// What an uninstall did.
    public struct UninstallReport: Equatable, Sendable {
        /// The entry that was removed.
        public var entry: RegistryEntry
        /// The home that was removed.
        public var home: ApplicationHome
        /// The hooks run, in order.
        public var hooks: [HookResult]
        /// Participants that failed to clean up, one line each.
        public var participantFailures: [String] = []
        /// App groups whose container was removed because this app was
        /// their last member.
        public var removedGroups: [AppGroupIdentifier] = []
    }

    /// Removes an app: its registry entry, then its home, then runs every
    /// executable in `<root>/Hooks/uninstall.d/`.
    ///
    /// The registry entry goes first: a crash afterwards leaves an orphaned
    /// home that no entry points at, the same state an interrupted install
    /// leaves, which `doctor` can detect by listing `Applications/`. The
    /// other order would leave an entry pointing at a half-removed home.
    ///
    /// Hooks run after the home is gone (like a package's `postrm`), in
    /// byte order of their names, one at a time, each with
    /// `APPHOME_BUNDLE_ID`, `APPHOME_HOME`, `APPHOME_VERSION` and
    /// `APPHOME_ROOT` added to `environment`, and killed (with their process
    /// group) after `hookTimeout` seconds. A failing hook is reported in the
    /// result and does not stop the others. Hidden files and files without
    /// an execute bit are skipped.
    ///
    /// - Parameters:
    ///   - identifier: the app to remove.
    ///   - environment: the base environment for hooks (normally the caller's).
    ///   - hookTimeout: seconds each hook may run.
    /// - Throws: ``ContainersError/notInstalled(_:)``, ``ContainersError/system(_:)``.
    public func uninstall(_ identifier: BundleIdentifier, environment: [String: String] = [:],
                          hookTimeout: Double = 10) throws(ContainersError) -> UninstallReport {
        let transaction = try registry.beginTransaction(refusingPendingJournal: true)
        defer { transaction.end() }
        var current = transaction.registry
        guard let entry = current.entries.removeValue(forKey: identifier) else { throw .notInstalled(identifier.rawValue) }
        let release = try lockAgainstRunning(entry)
        defer { release() }
        var lastMemberOf: [AppGroupIdentifier: String] = [:]
        for group in entry.groups where current.members(of: group).isEmpty {
            if let uuid = current.groups.removeValue(forKey: group) { lastMemberOf[group] = uuid }
            current.groupTeams.removeValue(forKey: group)
        }
        var journal = Journal(operation: .uninstall, entry: entry, groups: lastMemberOf)
        try beginJournal(journal)
        try transaction.commit(current)
        try completed(UninstallStep.removeEntry.rawValue, &journal)
        return try finishUninstall(entry, groups: lastMemberOf, remaining: current, journal: &journal,
                                   environment: environment, hookTimeout: hookTimeout)
    }

    /// The steps of an uninstall after the registry entry is gone; also
    /// how `doctor` finishes an interrupted uninstall (from the step after
    /// the journal's).
    func finishUninstall(_ entry: RegistryEntry, groups: [AppGroupIdentifier: String], remaining: Registry,
                         journal: inout Journal, environment: [String: String],
                         hookTimeout: Double) throws(ContainersError) -> UninstallReport {
        let identifier = entry.bundleIdentifier
        let home = layout.home(uuid: entry.homeUUID, bundleName: entry.bundleName)
        let done = UninstallStep(rawValue: journal.step).map { step in UninstallStep.allCases.filter { $0 <= step } } ?? []
        if !done.contains(.removeHome) {
            try containersErrors {
                try TreeOperations.remove(home.path)
                try FileSystem.removeFile(layout.runLockPath(uuid: entry.homeUUID))
            }
            TreeOperations.syncDirectory(layout.applicationsDirectory)
            try completed(UninstallStep.removeHome.rawValue, &journal)
        }
        if !done.contains(.removeGroups) {
            try containersErrors {
                for uuid in groups.values.sorted() { try TreeOperations.remove(layout.groupContainer(uuid: uuid).path) }
            }
            if !groups.isEmpty { TreeOperations.syncDirectory(layout.groupsDirectory) }
            try completed(UninstallStep.removeGroups.rawValue, &journal)
        }
        var participantFailures: [String] = []
        if !done.contains(.notifyParticipants) {
            for participant in participants {
                do {
                    try participant.appUninstalled(entry, remaining: Array(remaining.entries.values))
                } catch {
                    participantFailures.append("\(participant.name) cleanup for \(identifier.rawValue) failed: \(error)")
                }
            }
            try completed(UninstallStep.notifyParticipants.rawValue, &journal)
        }
        var hooks: [HookResult] = []
        if !done.contains(.runHooks) {
            var hookEnvironment = environment
            hookEnvironment["APPHOME_BUNDLE_ID"] = identifier.rawValue
            hookEnvironment["APPHOME_HOME"] = home.path
            hookEnvironment["APPHOME_VERSION"] = entry.version
            hookEnvironment["APPHOME_ROOT"] = layout.root
            hooks = try runHooks(in: layout.uninstallHooksDirectory, environment: hookEnvironment, timeout: hookTimeout)
            try completed(UninstallStep.runHooks.rawValue, &journal)
        }
        try clearJournal()
        return UninstallReport(entry: entry, home: home, hooks: hooks, participantFailures: participantFailures,
                               removedGroups: groups.keys.sorted())
    }
}
