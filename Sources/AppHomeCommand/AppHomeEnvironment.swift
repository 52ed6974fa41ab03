import Keychain
import KeychainSecretService
import Preferences

/// What the `apphome` command needs from the process environment, read
/// once by `main` and passed in (libraries never call `getenv`).
public struct AppHomeEnvironment: Sendable {
    /// Every variable of the process; `run` and hooks start from these.
    public var variables: [String: String]

    public init(variables: [String: String] = [:]) {
        self.variables = variables
    }

    /// The root to use when no `--root` is given: `APPHOME_ROOT`, else
    /// `$XDG_DATA_HOME/apphome`, else `$HOME/.local/share/apphome`.
    public func defaultRoot() -> String? { DomainResolver.defaultRoot(variables: variables) }

    /// Where a new keychain device root key goes: the Secret Service when a
    /// session bus is set (`DBUS_SESSION_BUS_ADDRESS`), unless
    /// `APPHOME_KEYCHAIN_KEY_STORE=file` asks for the key file. The
    /// after-first-unlock class keys stay in the kernel's user keyring until
    /// reboot, or `APPHOME_KEYCHAIN_KEY_CACHE` seconds (0: not kept).
    public var keychainKeyPolicy: DeviceKeyPolicy {
        DeviceKeyPolicy.forEnvironment(variables)
    }
}
