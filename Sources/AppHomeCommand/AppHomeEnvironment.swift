import AppHomeSystem
import Containers
import Keychain
import KeychainSecretService

/// What the `apphome` command takes from outside, decided by `main`
/// (libraries never read the environment).
public struct AppHomeEnvironment: Sendable {
    /// The root, prefsd, the key store, the variables hooks are given.
    public var configuration: Configuration
    /// Called after each journaled step of install, update and uninstall;
    /// crash tests inject one that kills the process there. Nothing by default.
    public var stepHook: (@Sendable (String) throws(ContainersError) -> Void)?
    /// Set in the static `apphome` (``AppHomeMain``): replaces the process
    /// with `apphome-secret-service` for every verb but
    /// ``AppHomeCommand/staticVerbs``, before the verb reads or writes
    /// anything. `nil`: every verb runs here.
    public var secretServiceHandOff: (@Sendable () -> Void)?

    public init(configuration: Configuration = Configuration(), stepHook: (@Sendable (String) throws(ContainersError) -> Void)? = nil,
                secretServiceHandOff: (@Sendable () -> Void)? = nil) {
        self.configuration = configuration
        self.stepHook = stepHook
        self.secretServiceHandOff = secretServiceHandOff
    }

    /// The root to use when no `--root` is given.
    public func defaultRoot() -> String? { configuration.root }

    /// Where a new keychain device root key goes, and how long the
    /// after-first-unlock class keys stay in the kernel's user keyring.
    public var keychainKeyPolicy: DeviceKeyPolicy { DeviceKeyPolicy(configuration: configuration) }
}
