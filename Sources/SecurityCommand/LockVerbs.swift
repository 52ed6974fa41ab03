import CommandSupport
import Keychain
import KeychainClient
import KeychainSecretService
import Preferences
import PropertyList

/// `create-keychain`, `lock-keychain`, `unlock-keychain`,
/// `show-keychain-info`: the keychain as a whole, no app context needed.
/// They act on the store holding the device root key directly (the Secret
/// Service, or the passphrase key file), never through prefsd; a lock then
/// tells a running prefsd, whose keybag drops every key it keeps.
enum LockVerb: String {
    case create = "create-keychain"
    case lock = "lock-keychain"
    case unlock = "unlock-keychain"
    case info = "show-keychain-info"

    func run(_ args: [String], root: String?, environment: SecurityEnvironment, console: Console,
             prompter: SecretPrompter) throws(SecurityFailure) -> Int32 {
        // One keychain may be named (`unlock-keychain login.keychain`): they all share the one device key.
        if let extra = args.first(where: { $0.hasPrefix("-") }) ?? (args.count > 1 ? args[1] : nil) {
            throw .securityUsage(extra.hasPrefix("-") ? "unknown option '\(extra)'" : "unexpected argument '\(extra)'")
        }
        guard let root = root ?? environment.configuration.root else {
            throw .failure("cannot find the AppHome root: set APPHOME_ROOT or HOME, or pass --root")
        }
        if let named = args.first { _ = try KeychainName(named, root: root) }
        let keychain = Keychain(root: root, policy: DeviceKeyPolicy(configuration: environment.configuration), now: { PlistDate(secondsSinceReferenceDate: 0) })
        do throws(KeychainError) {
            switch self {
            case .lock:
                try keychain.lock()
                // prefsd's keybag keeps the after-first-unlock keys too: it drops them now.
                if let why = LockNotice.keychainLocked(root: root, configuration: environment.configuration) {
                    console.err("security: the keychain is locked, but prefsd could not be told to drop the keys it keeps: \(why)\n")
                    return 1
                }
            case .create:
                guard let passphrase = try readPassphrase(environment, console, prompter, confirm: true) else {
                    throw KeychainError.invalidParameter("cannot prompt for the passphrase: no terminal (pipe it on standard input)")
                }
                try keychain.createProtected(passphrase: passphrase)
            case .unlock:
                // Standard input or, for a passphrase keychain, a prompt; a
                // Secret Service keychain on a terminal asks the service.
                let password = try readPassphrase(environment, console, prompter, confirm: false, promptIf: { () throws(KeychainError) in
                    try keychain.lockInfo().store == .passphraseFile
                })
                try keychain.unlock(password: password)
            case .info:
                let info = try keychain.lockInfo()
                console.out("Keychain \"\(keychain.directory)\" \(info.state.rawValue)\n")
                let store = switch info.store {
                case .file: "plain key file (nothing to lock)"
                case .passphraseFile: "passphrase-protected key file"
                case .secretService: "Secret Service"
                }
                console.out("    device key: \(store)\n")
                console.out("    afterFirstUnlock items: \(info.afterFirstUnlockOpen ? "open" : "closed (not unlocked since boot)")\n")
            }
        } catch .itemNotFound {
            throw .failure("there is no keychain under \(root) yet (it is made by the first add)")
        } catch .duplicateItem where self == .create {
            throw .failure("there is a keychain under \(root) already; create-keychain makes a new one only")
        } catch {
            let function = switch self {
            case .create: "SecKeychainCreate"
            case .lock: "SecKeychainLock"
            case .unlock: "SecKeychainUnlock"
            case .info: "SecKeychainGetStatus"
            }
            throw .keychain(error, function: function)
        }
        return 0
    }

    /// One line of standard input when it is not a terminal; else, when
    /// `promptIf` says so, a prompt (twice with `confirm`); else `nil`.
    func readPassphrase(_ environment: SecurityEnvironment, _ console: Console, _ prompter: SecretPrompter, confirm: Bool,
                        promptIf: () throws(KeychainError) -> Bool = { true }) throws(KeychainError) -> SecureBytes? {
        if !environment.standardInputIsTerminal { return console.readSecretLine() }
        guard try promptIf() else { return nil }
        guard let first = prompter.readSecret(prompt: confirm ? "new passphrase for the keychain: " : "passphrase to unlock the keychain: ") else { return nil }
        if confirm {
            guard let second = prompter.readSecret(prompt: "retype passphrase: "), first.constantTimeEquals(second) else {
                throw .invalidParameter("the passphrases do not match")
            }
        }
        return first
    }
}
