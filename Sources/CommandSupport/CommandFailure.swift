/// A command that could not do what it was asked.
///
/// The one place that decides exit statuses and what goes to standard
/// error, for all four commands: a usage error exits 255 (the status macOS
/// tools give, via `exit(-1)`; `security` uses 2, as SecurityTool does) and
/// is followed by one line saying where its help is (``CommandReference/helpLine(for:)``),
/// never by the whole help, which would bury the reason; every other failure
/// exits 1 unless it carries its own status (`security`'s keychain errors
/// exit with the low byte of their `OSStatus`).
public struct CommandFailure: Error, Equatable, Sendable {
    public enum Kind: Sendable, Equatable {
        /// The command line is wrong: a line pointing at the help follows the message.
        case usage
        /// The command line was understood but the work failed.
        case failure
    }

    public var kind: Kind
    public var message: String
    /// The exit status.
    public var exitStatus: Int32
    /// Text to show after the message instead of the one-line pointer to
    /// the help: the whole help, for a command given no verb at all.
    public var usageText: String?

    public init(_ kind: Kind, _ message: String, exitStatus: Int32? = nil, usageText: String? = nil) {
        self.kind = kind
        self.message = message
        self.exitStatus = exitStatus ?? (kind == .usage ? 255 : 1)
        self.usageText = usageText
    }

    public static func usage(_ message: String) -> CommandFailure { CommandFailure(.usage, message) }
    public static func failure(_ message: String) -> CommandFailure { CommandFailure(.failure, message) }

    /// Any error as a failure: itself when it is one, else its description
    /// (every module's public error is `CustomStringConvertible`), status 1.
    public init(_ error: any Error) {
        if let failure = error as? CommandFailure { self = failure; return }
        self = .failure((error as? CustomStringConvertible)?.description ?? "\(error)")
    }

    /// Writes the failure to standard error as `<command>: <message>`,
    /// followed for a usage error by `help` (one line, such as "Run
    /// 'defaults help write' for its usage."), or by ``usageText`` after a
    /// blank line when it has one, and returns the exit status.
    public func report(command: String, help: String, to console: Console) -> Int32 {
        console.err("\(command): \(message)\n")
        if kind == .usage {
            if let usageText { console.err("\n" + usageText) } else if !help.isEmpty { console.err(help + "\n") }
        }
        return exitStatus
    }

    /// The one error → exit status mapping of the commands: reports `error`
    /// (see ``init(_:)``) and returns its status.
    public static func report(_ error: any Error, command: String, help: String, to console: Console) -> Int32 {
        CommandFailure(error).report(command: command, help: help, to: console)
    }
}
