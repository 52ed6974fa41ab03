import AppHomeSystem
import CommandSupport
import Keychain

/// A keychain named as on macOS, after a verb's options
/// (`security find-generic-password -s api -w login.keychain`).
///
/// AppHome's keychains are files of one directory, `<root>/Keychains`, one
/// per access group: `login.keychain` is the user's login keychain and
/// `<group>.keychain` an app's access group. The names macOS uses for the
/// login keychain (`login.keychain-db`, `~/Library/Keychains/login.keychain-db`)
/// name it too, so that scripts written for macOS run unchanged.
enum KeychainName: Equatable {
    case login
    case group(String)

    /// Resolves `name`: `login`, `login.keychain`, `login.keychain-db` (in
    /// any directory), `<group>.keychain[-db]`, or the path of a group's file
    /// in `<root>/Keychains`.
    ///
    /// - Throws: errSecNoSuchKeychain (-25294, exit 50) for anything else.
    init(_ name: String, root: String) throws(SecurityFailure) {
        let file = name.split(separator: "/", omittingEmptySubsequences: false).last.map(String.init) ?? name
        let directory = name.contains("/") ? String(name.dropLast(file.count + 1)) : nil
        var base = Substring(file)
        if base.hasSuffix(".keychain-db") { base = base.dropLast(12) } else if base.hasSuffix(".keychain") { base = base.dropLast(9) }
        if base == KeychainContext.loginGroupName && (base.count < file.count || directory == nil) {
            self = .login
            return
        }
        let keychains = FileSystem.trimmingTrailingSlashes(root) + "/Keychains"
        guard base.count < file.count, directory == nil || directory == keychains, (try? AccessGroup(String(base))) != nil else {
            throw CommandFailure(.failure, "SecKeychainOpen \(name): The specified keychain could not be found. "
                                 + "(AppHome's keychains: login.keychain, or <access group>.keychain in \(keychains); see security list-keychains)",
                                 exitStatus: SecurityFailure.exitStatus(for: KeychainStatus.noSuchKeychain))
        }
        self = .group(String(base))
    }
}

/// Statuses `security` names that no ``KeychainError`` carries.
enum KeychainStatus {
    /// errSecNoSuchKeychain.
    static let noSuchKeychain: Int32 = -25294
}

/// `security`'s own exit statuses, for `security error N`: the low byte of
/// each `OSStatus` it exits with (as macOS truncates them), and its usage
/// and general failure statuses.
enum ExitStatus {
    /// The statuses `security` exits with, by name.
    static let statuses: [(name: String, status: Int32)] = [
        ("errSecParam", -50), ("errSecDuplicateItem", -25299), ("errSecItemNotFound", -25300),
        ("errSecInteractionNotAllowed", -25308), ("errSecAuthFailed", -25293), ("errSecNotAvailable", -25291),
        ("errSecNoSuchKeychain", KeychainStatus.noSuchKeychain), ("errSecDecode", -26275),
        ("errSecMissingEntitlement", -34018), ("errSecInternalComponent", -2070),
    ]

    /// What exit status `code` means, or `nil` when `security` never exits with it.
    static func named(_ code: Int32) -> String? {
        switch code {
        case 1: return "a failure that is no keychain error (a file, the command line's text)"
        case 2: return "a usage error"
        default:
            guard (3...255).contains(code), let match = statuses.first(where: { SecurityFailure.exitStatus(for: $0.status) == code }) else { return nil }
            let text = KeychainError.describe(status: match.status).map { ": " + $0 } ?? ""
            return "\(match.name) (\(match.status))\(text)"
        }
    }
}

extension SecurityCommand {
    /// The path `list-keychains` and friends print for a group's keychain.
    func keychainPath(_ group: AccessGroup) -> String { "\(keychain.directory)/\(group.rawValue).keychain" }

    /// Refuses `-d` other than `user`, and a keychain argument.
    func searchListDomain(_ o: VerbOptions) throws(SecurityFailure) -> Bool {
        if let keychain = o.keychain { throw .securityUsage("unexpected argument '\(keychain)'") }
        switch o.values["d"] ?? "user" {
        case "user", "dynamic": return true
        case "system", "common": return false
        case let other: throw .securityUsage("unknown preference domain '\(other)' (user, dynamic, common or system)")
        }
    }

    /// `list-keychains [-d user|system]`: the keychains searched, one quoted
    /// path a line, as macOS prints them: the login keychain, or with an app
    /// context the files of the app's access groups. The list is fixed (no `-s`).
    func listKeychains(_ o: VerbOptions) throws {
        guard try searchListDomain(o) else { return }
        for group in context.accessGroups { console.out("    \"\(keychainPath(group))\"\n") }
    }

    /// `default-keychain`: the keychain an add goes to (the login keychain,
    /// or the app's first access group, or `--access-group`'s).
    func defaultKeychain(_ o: VerbOptions) throws {
        guard try searchListDomain(o) else { return }
        console.out("    \"\(keychainPath(accessGroup ?? context.accessGroups[0]))\"\n")
    }

    /// `login-keychain`: the user's login keychain, whatever the app context.
    func loginKeychain(_ o: VerbOptions) throws {
        guard try searchListDomain(o) else { return }
        console.out("    \"\(keychainPath(KeychainContext.loginGroup))\"\n")
    }
}
