import Containers
import Keychain
import PrefsProtocol
import PropertyList

/// An uninstall as prefsd makes it for `apphome uninstall`, so that its
/// cache and subscribers learn of the app's domain going away.
enum UninstallJob {
    /// Uninstalls `bundle` (its keychain items with it); the reply carries
    /// what `apphome uninstall` prints.
    static func perform(_ bundle: String, root: String, policy: DeviceKeyPolicy,
                        hookEnvironment: HookEnvironment) -> Result<[PlistKey: PlistValue], RemoteError> {
        do {
            let identifier = try BundleIdentifier(bundle)
            let keychain = KeychainParticipant(root: root, policy: policy)
            let report = try ContainerManager(root: root, participants: [keychain]).uninstall(identifier, environment: hookEnvironment.variables)
            return .success([
                "version": .string(report.entry.displayVersion),
                "home": .string(report.home.path),
                "removedGroups": .array(report.removedGroups.map { .string($0.rawValue) }),
                "warnings": .array((report.participantFailures + report.hooks.compactMap(\.failureDescription)).map { .string($0) }),
            ])
        } catch {
            return .failure(RemoteError(.containers, "\(error)"))
        }
    }
}
