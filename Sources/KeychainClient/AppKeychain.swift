import Containers
import Keychain
import KeychainSecretService
import AppHomeSystem
import Preferences
import PrefsClient
import PrefsProtocol
import PropertyList

/// One app's keychain, for the app itself or for a service acting as it:
/// the client API behind `security`.
///
/// It talks to prefsd when `APPHOME_PREFSD` allows it and a prefsd
/// serving the root answers, showing the app's credential
/// (``AppCredential``), so the service answers for that app's access groups
/// only; otherwise it opens the keychain files directly. Both give the same
/// results and the same ``KeychainError``s.
///
/// ```swift
/// // Inside `apphome run com.example.ScaryBugs -- …`:
/// let configuration = Configuration(variable: { ProcessInfo.processInfo.environment[$0] })
/// let keychain = try AppKeychain(configuration: configuration)
/// let token = try keychain.genericPassword(service: "sync.example.com", account: "ray")
/// ```
public final class AppKeychain {
    /// The app whose keychain this is.
    public let bundleIdentifier: String
    /// The app's access groups, from its installed `Info.plist`.
    public let context: KeychainContext
    /// The AppHome root.
    public let root: String
    /// The keychain calls go to: prefsd, or the files.
    public let access: any KeychainAccess

    /// Whether calls go through prefsd (`false`: directly on the files).
    public var throughPrefsd: Bool { access is DaemonKeychain }

    /// The keychain of the installed app `bundleIdentifier` under `root`.
    ///
    /// - Parameters:
    ///   - configuration: how to reach prefsd, and the device-key policy
    ///     for direct access.
    ///   - now: the clock for item dates (direct access only).
    /// - Throws: ``AppKeychainError``.
    ///   - beforeOpeningFiles: called with the root when prefsd will not
    ///     answer, before the files are opened directly (the static
    ///     `security` hands the command to its sibling there, when the
    ///     direct path may need the Secret Service).
    public init(app bundleIdentifier: String, root: String, configuration: Configuration,
                now: @escaping @Sendable () -> PlistDate = ContainerManager.systemClock,
                beforeOpeningFiles: ((String) -> Void)? = nil) throws(AppKeychainError) {
        let home: ApplicationHome
        if let sandbox = configuration.sandbox {
            // Inside an app's sandbox: that app only, known from the sandbox
            // (the registry and the keychain's files are not visible; prefsd,
            // the one door, decides from the registry itself).
            guard bundleIdentifier == sandbox.bundleIdentifier else { throw .otherAppFromSandbox(bundleIdentifier, sandbox: sandbox.bundleIdentifier) }
            home = ApplicationHome(path: sandbox.home, bundleName: "")
            do throws(KeychainError) {
                context = try KeychainContext(bundleIdentifier: bundleIdentifier, leadingGroups: sandbox.keychainGroups, additionalGroups: sandbox.groups)
            } catch {
                throw .keychain(error)
            }
        } else {
            let manager = ContainerManager(root: root)
            let entry: RegistryEntry
            do throws(ContainersError) { entry = try manager.entry(for: BundleIdentifier(bundleIdentifier)) } catch {
                throw .app(error)
            }
            home = manager.layout.home(uuid: entry.homeUUID, bundleName: entry.bundleName)
            do throws(KeychainError) { context = try KeychainContext(installed: entry) } catch {
                throw .keychain(error)
            }
        }
        self.bundleIdentifier = bundleIdentifier
        self.root = root
        // Issued at install; a home from before credentials existed gets one now.
        access = try Self.access(root: root, configuration: configuration, now: now, caller: bundleIdentifier, whose: "the app's",
                                 beforeOpeningFiles: beforeOpeningFiles) {
            () throws(KeychainError) in try AppCredential.issue(home: home)
        }
    }

    /// prefsd when the configuration lets it answer for `root`, showing the
    /// credential `issue` gives for `caller`; else the files.
    private static func access(root: String, configuration: Configuration, now: @escaping @Sendable () -> PlistDate,
                               caller: String, whose: String, beforeOpeningFiles: ((String) -> Void)?,
                               issue: () throws(KeychainError) -> String) throws(AppKeychainError) -> any KeychainAccess {
        let local = Keychain(root: root, policy: DeviceKeyPolicy(configuration: configuration), now: now)
        let connection: PrefsConnection?
        do {
            connection = try PrefsdSettings(configuration: configuration).connect(root: root)
        } catch let e as PrefsdSettingsError { throw .prefsd(e.description) } catch { throw .prefsd("\(error)") }
        guard let connection else {
            if configuration.sandbox != nil {
                // The keychain's files are not visible in an app's sandbox: prefsd is the one door.
                throw .prefsd("inside an app's sandbox the keychain is reached only through prefsd, and none answers (APPHOME_PREFSD=off, or no socket)")
            }
            beforeOpeningFiles?(root)
            return local
        }
        let token: String
        do throws(KeychainError) { token = try issue() } catch {
            throw .prefsd("cannot issue \(whose) credential for prefsd: \(error.description)")
        }
        return DaemonKeychain(connection: connection, caller: KeychainCaller(bundleIdentifier: caller, credential: token), directory: local.directory)
    }

    /// The user's login keychain under `root` (the `login` group, which
    /// belongs to no app): what `security` uses with no app context.
    /// Through prefsd it shows the user's ``LoginCredential``.
    ///
    /// The login keychain is the user's, never an app's: in an app's
    /// context (``Configuration/inAppContext``, inside `apphome run` or
    /// `launch`) it is refused, with or without prefsd.
    ///
    /// - Throws: ``AppKeychainError/loginFromApp(_:)`` in an app's context;
    ///   ``AppKeychainError/prefsd(_:)``.
    public init(loginAt root: String, configuration: Configuration,
                now: @escaping @Sendable () -> PlistDate = ContainerManager.systemClock,
                beforeOpeningFiles: ((String) -> Void)? = nil) throws(AppKeychainError) {
        if configuration.inAppContext {
            throw .loginFromApp(configuration.bundleIdentifier ?? configuration.appHome ?? "")
        }
        bundleIdentifier = KeychainContext.loginGroupName
        context = .login
        self.root = root
        access = try Self.access(root: root, configuration: configuration, now: now, caller: KeychainContext.loginGroupName,
                                 whose: "the user's", beforeOpeningFiles: beforeOpeningFiles) { () throws(KeychainError) in try LoginCredential.issue(root: root) }
    }

    /// The keychain of the app `apphome run` runs in (the configuration's
    /// bundle identifier and root), or of `app` under `root` or the
    /// configuration's root.
    ///
    /// - Throws: ``AppKeychainError``: ``AppKeychainError/noRoot`` when no
    ///   root is given or set, ``AppKeychainError/noAppContext`` when no app
    ///   is named and none is set.
    public convenience init(app: String? = nil, root: String? = nil, configuration: Configuration,
                            now: @escaping @Sendable () -> PlistDate = ContainerManager.systemClock,
                            beforeOpeningFiles: ((String) -> Void)? = nil) throws(AppKeychainError) {
        guard let root = root ?? configuration.root else { throw .noRoot }
        guard let bundleIdentifier = app ?? configuration.bundleIdentifier else { throw .noAppContext }
        try self.init(app: bundleIdentifier, root: root, configuration: configuration, now: now, beforeOpeningFiles: beforeOpeningFiles)
    }

    /// `SecItemAdd`: a duplicate is ``KeychainError/duplicateItem``.
    public func add(_ attributes: ItemAttributes, data: SecureBytes) throws(KeychainError) {
        try access.add(attributes, data: data, context: context)
    }

    /// `SecItemCopyMatching`: nothing found is ``KeychainError/itemNotFound``.
    public func copyMatching(_ query: ItemQuery) throws(KeychainError) -> [ItemResult] {
        try access.copyMatching(query, context: context)
    }

    /// `SecItemUpdate`.
    public func update(_ query: ItemQuery, with changes: ItemChanges) throws(KeychainError) {
        try access.update(query, with: changes, context: context)
    }

    /// `SecItemDelete`: every match.
    public func delete(_ query: ItemQuery) throws(KeychainError) {
        try access.delete(query, context: context)
    }

    /// The secret of the generic password for `service` (and `account`,
    /// when given) in the app's groups: what `security
    /// find-generic-password -s … -a … -w` prints.
    public func genericPassword(service: String, account: String? = nil) throws(KeychainError) -> SecureBytes {
        var query = ItemQuery(itemClass: .genericPassword)
        query.service = service
        query.account = account
        query.returnData = true
        guard let data = try copyMatching(query).first?.data else { throw .itemNotFound }
        return data
    }
}

/// Why an ``AppKeychain`` could not be opened.
public enum AppKeychainError: Error, CustomStringConvertible {
    /// No app named, and no `APPHOME_BUNDLE_ID` (not inside `apphome run`).
    case noAppContext
    /// No `APPHOME_ROOT`, `XDG_DATA_HOME` or `HOME` to find the root by.
    case noRoot
    /// The app is not installed, or the bundle id is not valid.
    case app(ContainersError)
    /// The app's installed `Info.plist` gives no valid access groups.
    case keychain(KeychainError)
    /// prefsd was required but does not answer, `APPHOME_PREFSD` is not
    /// valid, or the app's credential could not be issued.
    case prefsd(String)
    /// The login keychain was asked for in an app's context (the app, or its home).
    case loginFromApp(String)
    /// Inside the sandbox of the second app, the keychain of the first was asked for.
    case otherAppFromSandbox(String, sandbox: String)

    public var description: String {
        switch self {
        case .noAppContext: return "no app context: name the app, or run inside `apphome run`"
        case .noRoot: return "cannot find the AppHome root: set APPHOME_ROOT or HOME"
        case .app(let e): return e.description
        case .keychain(let e): return e.description
        case .prefsd(let message): return message
        case .otherAppFromSandbox(let app, let sandbox):
            return "this runs in the sandbox of \(sandbox) and may use no other app's keychain (\(app))"
        case .loginFromApp(let app):
            return "the login keychain is the user's and no app may use it: this runs in the context of \(app) (in its sandbox, or APPHOME_BUNDLE_ID or APPHOME_HOME is set, as inside 'apphome run')"
        }
    }
}

/// Whether opening a keychain's files directly may ask the Secret Service
/// (and so load libsecret and GLib): what the statically linked `security`,
/// which cannot load them, asks before it opens the files itself.
public enum SecretServiceUse {
    /// `true` when the keychain under `root` keeps its device root key in
    /// the Secret Service, or has no device record yet (or one that cannot
    /// be read) and `configuration` would put a new key there; `false` for a
    /// key file or a passphrase key file (the kernel's keyring is no
    /// Secret Service).
    public static func mayBeNeeded(root: String, configuration: Configuration) -> Bool {
        let reader = Keychain(root: root, policy: DeviceKeyPolicy(), now: { PlistDate(secondsSinceReferenceDate: 0) })
        let store: DeviceKeyStoreKind?
        do throws(KeychainError) { store = try reader.deviceKeyStore() } catch { return true }
        switch store {
        case .secretService?: return true
        case .file?, .passphraseFile?: return false
        case nil: return configuration.keyStore != .file && configuration.sessionBusAvailable
        }
    }
}
