#if canImport(Glibc)
import Glibc
#endif
import AppHomeSystem
import Keychain
import PrefsClient
import PrefsProtocol

/// The keychain of the app this process is: what an app's own code
/// (the `Security` module's `SecItem…` functions) uses.
///
/// - Inside the app's sandbox (`/.apphome-info` present, the AppHome
///   root not visible), prefsd is the only door: it knows the app by its
///   sandbox (`/proc/<pid>/root/.apphome-info` of the peer), so the call
///   shows no credential file, only ``KeychainCaller/sandboxCredential``.
/// - Outside one (`apphome run --no-sandbox`, `launch`), the app's
///   credential is taken from the home AppHome named in the environment
///   (`APPHOME_BUNDLE_ID`, `APPHOME_ROOT`), through prefsd when one
///   answers, else on the files, as ``AppKeychain`` does.
/// - Outside any app: ``CurrentAppError/notAnApp``.
public enum CurrentApp {
    /// The file a sandbox holds at its root, naming the app it runs.
    public static let sandboxInfoPath = "/.apphome-info"

    /// The keychain of the app this process runs as.
    public static func keychain(configuration: Configuration, sandboxInfoPath: String = sandboxInfoPath) throws(CurrentAppError) -> AppKeychain {
        guard let bundleIdentifier = configuration.bundleIdentifier else { throw .notAnApp }
        let root = configuration.root
        let rootVisible = root.map { FileSystem.exists($0) } ?? false
        if access(sandboxInfoPath, F_OK) == 0 && !rootVisible {
            do { return try AppKeychain(sandboxedApp: bundleIdentifier, configuration: configuration) } catch {
                throw .keychain(error)
            }
        }
        do { return try AppKeychain(app: bundleIdentifier, root: root, configuration: configuration) } catch {
            throw .keychain(error)
        }
    }
}

/// Why the process's own app keychain could not be opened.
public enum CurrentAppError: Error, CustomStringConvertible {
    /// Not started as an app: no `APPHOME_BUNDLE_ID` in the environment.
    case notAnApp
    /// The app's keychain could not be opened (not installed, no root, prefsd…).
    case keychain(AppKeychainError)

    public var description: String {
        switch self {
        case .notAnApp:
            return "this process is not an app: the keychain holds apps' own items; install the program as an app and run it with 'apphome run <bundle-id> -- <program>' (or 'apphome launch <bundle-id>')"
        case .keychain(let e): return e.description
        }
    }
}
