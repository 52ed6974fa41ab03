import AppHomeSystem
import Keychain
import PrefsClient
import PrefsProtocol

/// What `security lock-keychain` tells a running prefsd: the user locked
/// the keychain, so its keybag drops every class key it keeps (the
/// after-first-unlock ones too, as a reboot would) and every cached
/// credential. The lock itself is the store's (the Secret Service
/// collection, or the passphrase session in the kernel); prefsd's watcher
/// would drop the whenUnlocked keys anyway, this drops the rest.
public enum LockNotice {
    /// Tells the prefsd that answers for `root` under `configuration`.
    ///
    /// - Returns: `nil` when it was told, or when no prefsd is used or
    ///   running (`APPHOME_PREFSD=auto` and no answer); else why it could
    ///   not be told (it refused, broke off, or `require` and none answers).
    public static func keychainLocked(root: String, configuration: Configuration) -> String? {
        let connection: PrefsConnection?
        do {
            connection = try PrefsdSettings(configuration: configuration).connect(root: root)
        } catch let e as PrefsdSettingsError { return e.description } catch { return "\(error)" }
        guard let connection else { return nil }
        let token: String
        do throws(KeychainError) { token = try LoginCredential.issue(root: root) } catch {
            return "cannot issue the user's credential for prefsd: \(error.description)"
        }
        do throws(PrefsClientError) {
            _ = try connection.call(.keychainLocked(KeychainCaller(bundleIdentifier: KeychainContext.loginGroupName, credential: token)))
        } catch {
            return error.description
        }
        return nil
    }
}
