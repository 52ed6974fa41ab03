import AppHomeSystem
import Containers
import PropertyList

/// A backup password reaches the keychain through ``BackupSecrets`` in
/// secure memory.
extension SecureBytes: BackupPassword {}

/// The keychain's part in app lifecycles (see ``AppDataParticipant``).
///
/// - Uninstall: every access group no remaining installed app lists is
///   crypto-shredded (its file and the wrapped group key in it removed).
///   A group shared with another installed app stays until its last member
///   goes. Shipping iOS keeps keychain items after uninstall; AppHome follows
///   the privacy intent of the iOS 10.3 beta, which deleted them.
/// - Backup: the app's groups' files, still sealed under this device's key;
///   with a backup password, the migratable items also sealed under a key
///   derived from it with Argon2id.
/// - Restore: on the same device, items come back; on another device only
///   the migratable items come back, and only with the backup password;
///   the rest is skipped with a note. A wrong password refuses the restore.
public struct KeychainParticipant: AppDataParticipant {
    public let root: String
    public let policy: DeviceKeyPolicy
    public let now: @Sendable () -> PlistDate

    /// Backups use libsodium's minimum Argon2id costs and restores accept
    /// them: for tests only.
    let weakKDFForTesting: Bool
    /// The backup key a restore's check derived, reused by the restore.
    let derivedKeys = DerivedKeyCache()

    public init(root: String, policy: DeviceKeyPolicy, now: @escaping @Sendable () -> PlistDate = ContainerManager.systemClock) {
        self.init(root: root, policy: policy, now: now, weakKDFForTesting: false)
    }

    init(root: String, policy: DeviceKeyPolicy, now: @escaping @Sendable () -> PlistDate, weakKDFForTesting: Bool) {
        self.root = root
        self.policy = policy
        self.now = now
        self.weakKDFForTesting = weakKDFForTesting
    }

    public var name: String { "keychain" }

    func keychain() -> Keychain { Keychain(root: root, policy: policy, now: now) }

    /// Issues the app's prefsd credential (``AppCredential``) in its new
    /// home, or keeps the one an update moved across.
    public func appHomeReady(_ entry: RegistryEntry, home: ApplicationHome) throws {
        _ = try AppCredential.issue(home: home)
    }

    /// The groups in use are those the remaining apps' installs recorded in
    /// the registry: an app's own group goes with it, a team's group with
    /// the last installed app that holds it.
    ///
    /// - Throws: when a remaining app's recorded group is not a valid name
    ///   (then nothing is removed, so no group still in use is lost).
    public func appUninstalled(_ entry: RegistryEntry, remaining: [RegistryEntry]) throws {
        // The login keychain belongs to no app: never removed here.
        let k = keychain()
        let doomed = try doomedGroups(remaining: remaining, in: k)
        if !doomed.isEmpty { try k.shred(doomed) }
    }

    /// The password in `secrets`, which only a ``SecureBytes`` can be.
    func password(_ secrets: BackupSecrets) throws(KeychainError) -> SecureBytes? {
        guard let given = secrets.password else { return nil }
        guard let bytes = given as? SecureBytes else { throw .invalidParameter("the backup password is not in secure memory") }
        return bytes
    }

    public func backupPayload(for entry: RegistryEntry, secrets: BackupSecrets) throws -> [UInt8]? {
        let context = try KeychainContext(installed: entry)
        let kdf = weakKDFForTesting ? PassphraseParameters(salt: Sodium.randomBytes(16), opsLimit: 1, memLimit: 8192) : nil
        return try keychain().backupPayload(groups: context.accessGroups, password: try password(secrets), kdf: kdf)
    }

    public func checkRestore(_ payload: [UInt8], secrets: BackupSecrets) throws {
        try keychain().checkRestore(payload: payload, password: try password(secrets), keys: derivedKeys, weakKDFForTesting: weakKDFForTesting)
    }

    public func restore(_ payload: [UInt8], for entry: RegistryEntry, secrets: BackupSecrets) throws -> [String] {
        let context = try KeychainContext(installed: entry)
        return try keychain().restore(payload: payload, context: context, password: try password(secrets), keys: derivedKeys,
                                      weakKDFForTesting: weakKDFForTesting)
    }
}
