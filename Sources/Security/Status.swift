import Foundation

// Security's result codes (SecBase.h), with Apple's values.

public let errSecSuccess: OSStatus = 0
public let errSecUnimplemented: OSStatus = -4
public let errSecDiskFull: OSStatus = -34
public let errSecIO: OSStatus = -36
public let errSecParam: OSStatus = -50
public let errSecWrPerm: OSStatus = -61
public let errSecAllocate: OSStatus = -108
public let errSecUserCanceled: OSStatus = -128
public let errSecBadReq: OSStatus = -909
public let errSecInternalComponent: OSStatus = -2070
public let errSecNotAvailable: OSStatus = -25291
public let errSecReadOnly: OSStatus = -25292
public let errSecAuthFailed: OSStatus = -25293
public let errSecNoSuchKeychain: OSStatus = -25294
public let errSecDuplicateItem: OSStatus = -25299
public let errSecItemNotFound: OSStatus = -25300
public let errSecNoSuchAttr: OSStatus = -25303
public let errSecNoSuchClass: OSStatus = -25306
public let errSecInteractionNotAllowed: OSStatus = -25308
public let errSecReadOnlyAttr: OSStatus = -25309
public let errSecInteractionRequired: OSStatus = -25315
public let errSecDataNotAvailable: OSStatus = -25316
public let errSecNoAccessForItem: OSStatus = -25243
public let errSecDecode: OSStatus = -26275
public let errSecMissingEntitlement: OSStatus = -34018
public let errSecInvalidValue: OSStatus = -67694

/// Apple's message for each result code this module returns.
let statusMessages: [OSStatus: String] = [
    errSecSuccess: "No error.",
    errSecUnimplemented: "Function or operation not implemented.",
    errSecDiskFull: "The disk is full.",
    errSecIO: "I/O error.",
    errSecParam: "One or more parameters passed to a function were not valid.",
    errSecWrPerm: "Write permissions error.",
    errSecAllocate: "Failed to allocate memory.",
    errSecUserCanceled: "User canceled the operation.",
    errSecBadReq: "Bad parameter or invalid state for operation.",
    errSecInternalComponent: "An internal component failed.",
    errSecNotAvailable: "No keychain is available. You may need to restart your computer.",
    errSecReadOnly: "This keychain cannot be modified.",
    errSecAuthFailed: "The user name or passphrase you entered is not correct.",
    errSecNoSuchKeychain: "The specified keychain could not be found.",
    errSecDuplicateItem: "The specified item already exists in the keychain.",
    errSecItemNotFound: "The specified item could not be found in the keychain.",
    errSecNoSuchAttr: "The specified attribute does not exist.",
    errSecNoSuchClass: "The specified item does not appear to be a valid keychain item.",
    errSecInteractionNotAllowed: "User interaction is not allowed.",
    errSecReadOnlyAttr: "The specified attribute could not be modified.",
    errSecInteractionRequired: "User interaction is required, but is currently not allowed.",
    errSecDataNotAvailable: "The contents of this item cannot be retrieved.",
    errSecNoAccessForItem: "The specified item has no access control.",
    errSecDecode: "Unable to decode the provided data.",
    errSecMissingEntitlement: "A required entitlement isn't present.",
    errSecInvalidValue: "An invalid value was detected.",
]

/// The message for `status`: Apple's text, followed by why the last call of
/// this process that failed with `status` failed, in parentheses, when AppHome
/// knows more (the missing app context, the access group, the access-control
/// flag it does not offer). `nil` for a code it does not know.
public func SecCopyErrorMessageString(_ status: OSStatus, _ reserved: UnsafeMutableRawPointer?) -> CFString? {
    guard let message = statusMessages[status] else {
        return status == 0 ? nil : "OSStatus \(status)" as NSString
    }
    if let reason = LastFailure.reason(for: status) { return "\(message) (\(reason))" as NSString }
    return message as NSString
}

/// Why the last failing call failed, per status.
enum LastFailure {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var last: (status: OSStatus, reason: String)?

    static func record(_ status: OSStatus, _ reason: String?) {
        lock.lock(); defer { lock.unlock() }
        last = reason.map { (status, $0) }
    }

    static func reason(for status: OSStatus) -> String? {
        lock.lock(); defer { lock.unlock() }
        guard let last, last.status == status else { return nil }
        return last.reason
    }
}
