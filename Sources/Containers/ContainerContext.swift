#if canImport(Glibc)
import Glibc
#endif
import AppHomeSystem
import PropertyList

/// What every operation on one root shares: the layout, the registry file,
/// the clock, the maker of home UUIDs, the participants and the step hook.
///
/// ``ContainerManager`` builds one and hands it to each operation
/// (``Installer``, ``Updater``, ``Uninstaller``, ``BackupService``,
/// ``Doctor``, ``Cleaner``, ``AppRunner``).
public struct ContainerContext: Sendable {
    /// The layout of the root.
    public let layout: ContainerLayout
    /// The registry file.
    public let registry: RegistryFile
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
                now: @escaping @Sendable () -> PlistDate = ContainerContext.systemClock,
                makeUUID: @escaping @Sendable () -> String = { Random.uuid() },
                participants: [any AppDataParticipant] = []) {
        self.layout = ContainerLayout(root: root)
        self.registry = RegistryFile(layout: layout)
        self.now = now
        self.makeUUID = makeUUID
        self.participants = participants
    }

    /// The system's real-time clock, to the millisecond.
    public static let systemClock: @Sendable () -> PlistDate = {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return PlistDate(secondsSince1970: Double(ts.tv_sec) + Double(ts.tv_nsec / 1_000_000) / 1000)
    }
}

/// An operation on a root (install, update, backup, …), built by
/// ``ContainerManager`` over its context: it reaches the parts of its
/// ``ContainerContext`` by their own names, and shares the steps defined
/// on this protocol (the journal, the group containers, the run lock)
/// with the other operations. Public: the `Backups` target's
/// `BackupService` is one of them.
public protocol ContainerOperation {
    var context: ContainerContext { get }
}

extension ContainerOperation {
    public var layout: ContainerLayout { context.layout }
    public var registry: RegistryFile { context.registry }
    public var now: @Sendable () -> PlistDate { context.now }
    public var makeUUID: @Sendable () -> String { context.makeUUID }
    public var participants: [any AppDataParticipant] { context.participants }
    public var stepHook: @Sendable (String) throws(ContainersError) -> Void { context.stepHook }
}

extension ContainerOperation {
    /// The registry entry of `identifier`, read now.
    ///
    /// - Throws: ``ContainersError/notInstalled(_:)`` when there is none.
    public func entry(for identifier: BundleIdentifier) throws(ContainersError) -> RegistryEntry {
        try registry.entry(for: identifier)
    }
}
