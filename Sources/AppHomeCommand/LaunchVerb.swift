import CommandSupport
import Containers

extension AppHomeCommand {
    /// `launch <bundle-id> [--no-sandbox] [--no-network] [--talk-name NAME]…
    /// [--] [ARG...]`: starts the installed bundle's `CFBundleExecutable` in
    /// its home (in its sandbox); its exit status (128 + signal when a signal
    /// ended it) becomes apphome's.
    func launchCommand(_ args: [String]) throws -> Int32 {
        var (options, rest) = try runOptions(args)
        guard let first = rest.first else { throw CommandFailure.usage("missing bundle identifier") }
        let id = try bundleIdentifier(first)
        rest.removeFirst()
        let more = try runOptions(rest, into: options)
        options = more.0
        var arguments = more.1
        if arguments.first == "--" { arguments.removeFirst() }
        announceUnsandboxed(id, options)
        return try manager.launch(id, arguments: arguments, options: options).shellStatus
    }
}
