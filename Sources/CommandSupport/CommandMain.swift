#if canImport(Glibc)
import Glibc
#endif
import AppHomeSystem

/// The `main` of a command or service: the one place a program of ours reads
/// its environment and its arguments and exits.
///
/// Each executable's `main.swift` names its command and calls its library
/// from the body (house style: executables only assemble); the parts every
/// one of them needs are here, in the order they must happen.
public enum CommandMain {
    /// Runs a program and exits with the body's status.
    ///
    /// Builds the process's ``ProcessConsole`` and its `Configuration` (from
    /// `getenv`, read once here), decodes the arguments as strict UTF-8
    /// (``CommandLineArguments/run(_:command:console:secretAfter:_:)``, which
    /// reports an argument that is no text without calling `body`), calls
    /// `body`, flushes the console and exits.
    ///
    /// - Parameters:
    ///   - command: the name failures are prefixed with (`apphome settings`).
    ///   - secretAfter: options whose next argument is a secret, never shown.
    ///   - body: the command, given the decoded arguments, the configuration
    ///     and the console; returns the exit status.
    public static func run(command: String, secretAfter: Set<String> = [],
                           _ body: (_ arguments: [String], _ configuration: Configuration, _ console: ProcessConsole) -> Int32) -> Never {
        let console = ProcessConsole()
        let configuration = Configuration(variable: { getenv($0).map { String(cString: $0) } })
        let status = CommandLineArguments.run(CommandLineArguments.processBytes(), command: command, console: console,
                                              secretAfter: secretAfter) { arguments in
            body(arguments, configuration, console)
        }
        console.flush()
        exit(status)
    }
}
