/// A command that could not do what it was asked.
///
/// The one place that decides exit statuses: a usage error exits 255 (the
/// status macOS tools give, via `exit(-1)`), every other failure exits 1.
public struct CommandFailure: Error, Equatable, Sendable {
    public enum Kind: Sendable, Equatable {
        /// The command line is wrong: the usage text follows the message.
        case usage
        /// The command line was understood but the work failed.
        case failure
    }

    public var kind: Kind
    public var message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public static func usage(_ message: String) -> CommandFailure { CommandFailure(.usage, message) }
    public static func failure(_ message: String) -> CommandFailure { CommandFailure(.failure, message) }

    /// The process exit status for this failure.
    public var exitStatus: Int32 { kind == .usage ? 255 : 1 }

    /// Writes the failure to standard error as `<command>: <message>`,
    /// followed by the usage text for a usage error, and returns the exit
    /// status.
    public func report(command: String, usage: String, to console: Console) -> Int32 {
        console.err("\(command): \(message)\n")
        if kind == .usage { console.err("\n" + usage) }
        return exitStatus
    }
}
