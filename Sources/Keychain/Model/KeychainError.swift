import AppHomeSystem

/// Why a keychain call failed. Each case has the `OSStatus` Apple's
/// `SecItem` functions return for it, and a message that never contains a
/// secret.
public enum KeychainError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Nothing matched (errSecItemNotFound).
    case itemNotFound
    /// An item with the same primary key exists (errSecDuplicateItem).
    case duplicateItem
    /// A bad or contradictory query or attribute (errSecParam).
    case invalidParameter(String)
    /// The app may not use this access group (errSecMissingEntitlement).
    case missingEntitlement(group: String)
    /// An invalid access-group name.
    case invalidAccessGroup(String, reason: String)
    /// A keychain file failed its integrity check or cannot be parsed: it
    /// was changed outside AppHome, truncated, or moved (errSecDecode).
    case corrupt(path: String, reason: String)
    /// A file written by a newer AppHome (errSecDecode).
    case versionTooNew(path: String, found: Int, supported: Int)
    /// The device root key does not open this keychain (errSecAuthFailed).
    case wrongKey(String)
    /// The password or passphrase given to unlock the keychain is wrong
    /// (errSecAuthFailed); the reason names what refused it.
    case wrongPassphrase(String)
    /// A backup password that does not open the backup it was given for.
    case wrongBackupPassword
    /// The device root key cannot be had: the recorded store is missing or
    /// unreachable (errSecNotAvailable).
    case keyStoreUnavailable(String)
    /// The Secret Service reported an error (by GError domain and code).
    case secretService(domain: String, code: Int32, message: String)
    /// The item's class is not open now: the keychain is locked, or was not
    /// unlocked since boot (errSecInteractionNotAllowed). The reason says which.
    case interactionNotAllowed(String)
    /// An operating-system failure.
    case system(SystemError)
    /// A failure prefsd reported for a keychain call it made for this
    /// process: the status and message the keychain gave there.
    case service(status: Int32, message: String)
    /// The call would have to wait (ask the Secret Service, take the
    /// writers' lock, read a large file) under a policy that may not
    /// (``DeviceKeyPolicy/mayWait``): prefsd then makes it on a worker. It
    /// never reaches an app.
    case wouldBlock

    /// The error prefsd reported with `status` and `message`: the same
    /// case when the status names one without details, else ``service(status:message:)``.
    public static func reported(status: Int32, message: String) -> KeychainError {
        switch status {
        case -25300: return .itemNotFound
        case -25299: return .duplicateItem
        default: return .service(status: status, message: message)
        }
    }

    /// The `OSStatus` Apple uses for this failure.
    public var status: Int32 {
        switch self {
        case .itemNotFound: return -25300
        case .duplicateItem: return -25299
        case .invalidParameter, .invalidAccessGroup: return -50
        case .missingEntitlement: return -34018
        case .corrupt, .versionTooNew: return -26275
        case .wrongKey, .wrongBackupPassword, .wrongPassphrase: return -25293
        case .keyStoreUnavailable, .secretService: return -25291
        case .interactionNotAllowed: return -25308
        case .system, .wouldBlock: return -2070 // errSecInternalComponent
        case .service(let status, _): return status
        }
    }

    public var description: String {
        switch self {
        case .itemNotFound: return "The specified item could not be found in the keychain."
        case .duplicateItem: return "The specified item already exists in the keychain."
        case .invalidParameter(let why): return "One or more parameters passed to a function were not valid: \(why)"
        case .missingEntitlement(let group): return "A required entitlement isn't present. (The app does not hold the keychain access group '\(group)'.)"
        case .invalidAccessGroup(let group, let reason): return "invalid keychain access group '\(group)': \(reason)"
        case .corrupt(let path, let reason): return "the keychain file \(path) is damaged or was changed outside AppHome: \(reason)"
        case .versionTooNew(let path, let found, let supported):
            return "the keychain file \(path) has format version \(found); this AppHome reads up to \(supported)"
        case .wrongKey(let why): return "the device root key does not open this keychain: \(why)"
        case .wrongBackupPassword: return "the backup password is wrong"
        case .wrongPassphrase(let why): return "The user name or passphrase you entered is not correct. (\(why))"
        case .keyStoreUnavailable(let why): return "the keychain's device root key is unavailable: \(why)"
        case .secretService(let domain, let code, let message): return "Secret Service error (\(domain) \(code)): \(message)"
        case .interactionNotAllowed(let why): return "User interaction is not allowed. (\(why))"
        case .system(let e): return e.description
        case .service(_, let message): return message
        case .wouldBlock: return "the keychain call would have to wait, where it may not"
        }
    }

    /// Apple's description of an `OSStatus`, for `security error`.
    public static func describe(status: Int32) -> String? {
        switch status {
        case 0: return "No error."
        case -50: return "One or more parameters passed to a function were not valid."
        case -25299: return "The specified item already exists in the keychain."
        case -25300: return "The specified item could not be found in the keychain."
        case -25308: return "User interaction is not allowed."
        case -25293: return "The user name or passphrase you entered is not correct."
        case -25291: return "No keychain is available. You may need to restart your computer."
        case -26275: return "Unable to decode the provided data."
        case -34018: return "A required entitlement isn't present."
        default: return nil
        }
    }
}
