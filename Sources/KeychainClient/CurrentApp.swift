import AppHomeSystem
import Keychain

/// The keychain of the app this process is: what an app's own code (the
/// `Security` module's `SecItem…` functions) uses.
///
/// The app is the one the configuration names: `APPHOME_BUNDLE_ID` and
/// `APPHOME_ROOT`, set by `apphome run` and `launch`. Its items are reached
/// as ``AppKeychain`` reaches them: with the app's credential from its home,
/// through prefsd when one answers, else on the files (and inside the app's
/// sandbox, where prefsd knows the app by its sandbox and the files are out
/// of sight, through prefsd only: ``AppKeychain`` decides that from the
/// configuration). A process outside any app gets ``CurrentAppError/notAnApp``.
public enum CurrentApp {
    /// The keychain of the app this process runs as.
    public static func keychain(configuration: Configuration) throws(CurrentAppError) -> AppKeychain {
        guard let bundleIdentifier = configuration.bundleIdentifier else { throw .notAnApp }
        do { return try AppKeychain(app: bundleIdentifier, configuration: configuration) } catch {
            throw .keychain(error)
        }
    }
}

/// Why the process's own app keychain could not be opened.
public enum CurrentAppError: Error, CustomStringConvertible {
    /// Not started as an app: no `APPHOME_BUNDLE_ID` (and no sandbox).
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
