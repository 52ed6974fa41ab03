import CommandSupport
import Keychain

/// `security`'s failures are ``CommandFailure``s with the statuses macOS
/// gives: a usage error exits 2 (SecurityTool's `SHOW_USAGE_MESSAGE`) and is
/// followed by one line naming `security help VERB`; a keychain error exits with the low byte of
/// its `OSStatus`, as macOS's `security` does (so "not found", -25300, exits
/// 44 and a duplicate, -25299, exits 45); anything else exits 1.
typealias SecurityFailure = CommandFailure

extension CommandFailure {
    /// A usage error of `security` (status 2), followed by the line
    /// pointing at the verb's help.
    static func securityUsage(_ message: String) -> CommandFailure {
        CommandFailure(.usage, message, exitStatus: 2)
    }

    /// A keychain error from the call macOS names `function`.
    static func keychain(_ error: KeychainError, function: String) -> CommandFailure {
        CommandFailure(.failure, "\(function): \(error.description)", exitStatus: exitStatus(for: error.status))
    }

    /// The low byte of an `OSStatus`, as `exit()` truncates it on macOS.
    static func exitStatus(for status: Int32) -> Int32 {
        Int32(UInt8(truncatingIfNeeded: status))
    }
}
