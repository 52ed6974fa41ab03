import AppHomeSystem
import PropertyList

/// Installs, updates and uninstalls apps under one root: the front door of
/// the module, which builds the operation for each call (``Installer``,
/// ``Updater``, ``Uninstaller``, ``Doctor``, ``Cleaner``, ``AppRunner``)
/// over one ``ContainerContext``. The `Backups` target adds backup,
/// restore and prune to it (its `BackupService`, over the same context).
///
/// Every change runs in one ``RegistryTransaction`` (the registry lock
/// for its whole duration), writes a journal (``Journal``) before it
/// touches anything, and writes the registry last (install, update) or
/// first (uninstall), so the registry never points at a half-built or
/// half-removed home, and after a crash the journal says exactly what to
/// finish or undo.
public struct ContainerManager: Sendable {
    /// What every operation shares: layout, registry, clock, participants, step hook.
    public var context: ContainerContext

    /// - Parameters:
    ///   - root: the AppHome root.
    ///   - now: the clock; the system's real-time clock by default.
    ///   - makeUUID: makes home UUIDs; random (version 4, uppercase) by default.
    ///   - participants: what keeps app data outside the homes; none by default.
    public init(root: String,
                now: @escaping @Sendable () -> PlistDate = ContainerManager.systemClock,
                makeUUID: @escaping @Sendable () -> String = { Random.uuid() },
                participants: [any AppDataParticipant] = []) {
        self.context = ContainerContext(root: root, now: now, makeUUID: makeUUID, participants: participants)
    }

    /// The system's real-time clock.
    public static let systemClock: @Sendable () -> PlistDate = ContainerContext.systemClock

    /// The layout of the root.
    public var layout: ContainerLayout { context.layout }
    /// The registry file.
    public var registry: ContainerRegistry { context.registry }
    /// The clock for install times.
    public var now: @Sendable () -> PlistDate { context.now }
    /// Makes the UUID for a new home.
    public var makeUUID: @Sendable () -> String { context.makeUUID }
    /// What keeps app data outside the homes; see ``AppDataParticipant``.
    public var participants: [any AppDataParticipant] { context.participants }
    /// Called after every journaled step; see ``ContainerContext/stepHook``.
    public var stepHook: @Sendable (String) throws(ContainersError) -> Void {
        get { context.stepHook }
        set { context.stepHook = newValue }
    }

    /// The operations, each over this manager's context (``Doctor`` is
    /// `Doctor(context:)`: `doctor` names the verb).
    public var installer: Installer { Installer(context: context) }

    /// What `bundle` may claim, checked against `registry` as an install
    /// checks it (see ``Installer``).
    func checkEntitlements(_ bundle: AppBundle, in registry: Registry) throws(ContainersError) {
        try installer.checkEntitlements(bundle, in: registry)
    }
    public var updater: Updater { Updater(context: context) }
    public var uninstaller: Uninstaller { Uninstaller(context: context) }
    public var cleaner: Cleaner { Cleaner(context: context) }
    public var runner: AppRunner { AppRunner(context: context) }

    /// The registry entry of `identifier`.
    ///
    /// - Throws: ``ContainersError/notInstalled(_:)`` when there is none.
    public func entry(for identifier: BundleIdentifier) throws(ContainersError) -> RegistryEntry {
        try registry.entry(for: identifier)
    }

    /// The current home of `identifier`.
    ///
    /// - Throws: ``ContainersError/notInstalled(_:)`` when it is not installed.
    public func home(for identifier: BundleIdentifier) throws(ContainersError) -> ApplicationHome {
        let e = try entry(for: identifier)
        return layout.home(uuid: e.homeUUID, bundleName: e.bundleName)
    }

    /// The pending journal, or `nil` when no operation was interrupted.
    public func pendingJournal() throws(ContainersError) -> Journal? {
        try Journal.pending(in: layout)
    }
}

// MARK: Lifecycle

extension ContainerManager {
    public typealias InstallReport = Installer.InstallReport
    public typealias UpdateReport = Updater.UpdateReport
    public typealias UninstallReport = Uninstaller.UninstallReport

    /// ``Installer/install(_:)``.
    public func install(_ bundle: AppBundle) throws(ContainersError) -> InstallReport {
        try installer.install(bundle)
    }

    /// ``Updater/update(_:failAt:)``.
    public func update(_ bundle: AppBundle, failAt: UpdateStep? = nil, allowDowngrade: Bool = false) throws(ContainersError) -> UpdateReport {
        try updater.update(bundle, failAt: failAt, allowDowngrade: allowDowngrade)
    }

    /// ``Uninstaller/uninstall(_:environment:hookTimeout:)``.
    public func uninstall(_ identifier: BundleIdentifier, environment: [String: String] = [:],
                          hookTimeout: Double = 10) throws(ContainersError) -> UninstallReport {
        try uninstaller.uninstall(identifier, environment: environment, hookTimeout: hookTimeout)
    }

    /// ``AppRunner/runEnvironment(for:base:)``.
    public func runEnvironment(for entry: RegistryEntry, base: [String: String]) -> [String: String] {
        runner.runEnvironment(for: entry, base: base)
    }

    /// ``AppRunner/run(_:command:base:)``.
    public func run(_ identifier: BundleIdentifier, command: [String], base: [String: String], options: RunOptions = RunOptions()) throws(ContainersError) -> Termination {
        try runner.run(identifier, command: command, base: base, options: options)
    }

    /// ``AppRunner/run(_:command:)``: with the environment this process
    /// would give any child.
    public func run(_ identifier: BundleIdentifier, command: [String], options: RunOptions = RunOptions()) throws(ContainersError) -> Termination {
        try runner.run(identifier, command: command, options: options)
    }
}

// MARK: Maintenance

extension ContainerManager {
    /// ``Doctor/checkAndRepair(dryRun:environment:hookTimeout:)``.
    public func doctor(dryRun: Bool = false, environment: [String: String] = [:],
                       hookTimeout: Double = 10) throws(ContainersError) -> DoctorReport {
        try Doctor(context: context).checkAndRepair(dryRun: dryRun, environment: environment, hookTimeout: hookTimeout)
    }

    /// ``Doctor/finishInterruptedOperation(environment:hookTimeout:)``.
    public func finishInterruptedOperation(environment: [String: String] = [:],
                                           hookTimeout: Double = 10) throws(ContainersError) -> DoctorReport {
        try Doctor(context: context).finishInterruptedOperation(environment: environment, hookTimeout: hookTimeout)
    }

    /// ``Cleaner/availableBytes(_:)``.
    public static func availableBytes(_ path: String) throws(SystemError) -> UInt64 {
        try Cleaner.availableBytes(path)
    }

    /// ``Cleaner/purgeCaches(targetFree:freeBytes:)``.
    public func purgeCaches(targetFree: UInt64? = nil,
                            freeBytes: (String) throws(SystemError) -> UInt64 = ContainerManager.availableBytes) throws(ContainersError) -> PurgeReport {
        try cleaner.purgeCaches(targetFree: targetFree, freeBytes: freeBytes)
    }

    /// ``Cleaner/cleanTemporaryDirectories()``.
    public func cleanTemporaryDirectories() throws(ContainersError) -> [CleanupResult] {
        try cleaner.cleanTemporaryDirectories()
    }
}
