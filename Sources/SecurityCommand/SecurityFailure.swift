import Keychain

/// A failure of the `security` command, with the exit status macOS gives.
///
/// The one place that maps failures to statuses: a usage error exits 2
/// (SecurityTool's `SHOW_USAGE_MESSAGE`) and is followed by the verb's
/// usage; a keychain error exits with the low byte of its `OSStatus`, as
/// macOS's `security` does (so "not found", -25300, exits 44 and a
/// duplicate, -25299, exits 45); anything else exits 1.
struct SecurityFailure: Error, Equatable {
    var message: String
    var status: Int32
    var usage: String?

    static func usage(_ message: String, _ usage: String) -> SecurityFailure {
        SecurityFailure(message: message, status: 2, usage: usage)
    }

    static func failure(_ message: String) -> SecurityFailure {
        SecurityFailure(message: message, status: 1, usage: nil)
    }

    /// A keychain error from the call macOS names `function`.
    static func keychain(_ error: KeychainError, function: String) -> SecurityFailure {
        SecurityFailure(message: "\(function): \(error.description)", status: exitStatus(for: error.status), usage: nil)
    }

    /// The low byte of an `OSStatus`, as `exit()` truncates it on macOS.
    static func exitStatus(for status: Int32) -> Int32 {
        Int32(UInt8(truncatingIfNeeded: status))
    }
}
