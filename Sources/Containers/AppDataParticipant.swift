/// Something outside an app's home that keeps data on the app's behalf and
/// takes part in its lifecycle: the keychain is the first.
///
/// `ContainerManager` calls a participant at fixed points, always while it
/// holds the registry lock:
///
/// - once an install, update or restore has committed a home
///   (``appHomeReady(_:home:)``); a throw is reported and does not undo it;
/// - after an uninstall has removed the registry entry and the home
///   (``appUninstalled(_:remaining:)``); a throw is reported and does not
///   undo the uninstall;
/// - while a backup is taken (``backupPayload(for:)``): the bytes returned
///   are stored in the backup under the participant's ``name`` and covered
///   by the backup's checksums;
/// - when a backup is restored (``restore(_:for:)``), after the home's files
///   are in place, with the bytes stored earlier.
///
/// Apart from ``appHomeReady(_:home:)``, an update never calls a
/// participant: what lives outside the home is untouched by it.
public protocol AppDataParticipant: Sendable {
    /// A stable name, used as the payload's key in backups (`keychain`).
    var name: String { get }

    /// The app `entry` has a new home, `home`, committed to the registry
    /// (after an install, an update or a restore). For what the
    /// participant keeps inside the home, such as a credential.
    func appHomeReady(_ entry: RegistryEntry, home: ApplicationHome) throws

    /// The app `entry` was uninstalled; `remaining` are the apps still
    /// installed (for data shared by several apps, such as a group).
    func appUninstalled(_ entry: RegistryEntry, remaining: [RegistryEntry]) throws

    /// The bytes to keep in a backup of `entry`, or `nil` for none.
    func backupPayload(for entry: RegistryEntry, secrets: BackupSecrets) throws -> [UInt8]?

    /// Checks, before a restore changes anything, that `payload` can be
    /// restored with `secrets` (a wrong backup password is refused here).
    func checkRestore(_ payload: [UInt8], secrets: BackupSecrets) throws

    /// Restores `payload`, taken from a backup of the same app, for the
    /// installed app `entry`. Returns notes for the user (such as items
    /// skipped because the backup came from another device).
    func restore(_ payload: [UInt8], for entry: RegistryEntry, secrets: BackupSecrets) throws -> [String]
}

extension AppDataParticipant {
    public func appHomeReady(_ entry: RegistryEntry, home: ApplicationHome) throws {}

    public func checkRestore(_ payload: [UInt8], secrets: BackupSecrets) throws {}
}

/// A secret kept in secure memory by its owner (the keychain's
/// `SecureBytes`); `Containers` only passes it along.
public protocol BackupPassword: AnyObject, Sendable {}

/// What the user gave a backup or restore besides its files: an optional
/// backup password (never from argv or the environment).
public struct BackupSecrets: Sendable {
    public var password: (any BackupPassword)?

    public init(password: (any BackupPassword)? = nil) { self.password = password }

    /// No password.
    public static let none = BackupSecrets()
}
