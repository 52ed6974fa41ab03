import CommandSupport
import Keychain
import KeychainSecretService
import Preferences
import PropertyList

/// `lock-keychain`, `unlock-keychain`, `show-keychain-info`: the keychain as
/// a whole, no app context needed. They act on the store holding the device
/// root key directly (the Secret Service), never through prefsd.
enum LockVerb: String {
    case lock = "lock-keychain"
    case unlock = "unlock-keychain"
    case info = "show-keychain-info"

    func run(_ args: [String], root: String?, environment: SecurityEnvironment, console: Console, usage: String) throws(SecurityFailure) -> Int32 {
        if let extra = args.first { throw .usage(extra.hasPrefix("-") ? "unknown option '\(extra)'" : "unexpected argument '\(extra)'", usage) }
        guard let root = root ?? DomainResolver.defaultRoot(variables: environment.variables) else {
            throw .failure("cannot find the AppHome root: set APPHOME_ROOT or HOME, or pass --root")
        }
        let keychain = Keychain(root: root, policy: .forEnvironment(environment.variables), now: { PlistDate(secondsSinceReferenceDate: 0) })
        do throws(KeychainError) {
            switch self {
            case .lock:
                try keychain.lock()
            case .unlock:
                var password: SecureBytes?
                if !environment.standardInputIsTerminal {
                    var bytes = console.readStandardInput()
                    defer { SecureBytes.wipe(&bytes) }
                    var n = bytes.count
                    if n > 0 && bytes[n - 1] == 0x0A { n -= 1; if n > 0 && bytes[n - 1] == 0x0D { n -= 1 } }
                    password = bytes.withUnsafeBytes { SecureBytes(copying: UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
                }
                try keychain.unlock(password: password)
            case .info:
                let info = try keychain.lockInfo()
                console.out("Keychain \"\(keychain.directory)\" \(info.state.rawValue)\n")
                console.out("    device key: \(info.store == .file ? "plain key file (nothing to lock)" : "Secret Service")\n")
                console.out("    afterFirstUnlock items: \(info.afterFirstUnlockOpen ? "open" : "closed (not unlocked since boot)")\n")
            }
        } catch .itemNotFound {
            throw .failure("there is no keychain under \(root) yet (it is made by the first add)")
        } catch {
            throw .keychain(error, function: self == .info ? "SecKeychainGetStatus" : (self == .lock ? "SecKeychainLock" : "SecKeychainUnlock"))
        }
        return 0
    }
}
