import AppHomeSystem
import CommandSupport
import Containers

extension AppHomeCommand {
    /// `run <bundle-id> [--] CMD [ARG...]`: the command's exit status (128 +
    /// signal when a signal ended it) becomes apphome's.
    func runCommand(_ args: [String]) throws -> Int32 {
        guard let first = args.first else { throw CommandFailure.usage("missing bundle identifier") }
        let id = try bundleIdentifier(first)
        var command = Array(args.dropFirst())
        if command.first == "--" { command.removeFirst() }
        guard !command.isEmpty else { throw CommandFailure.usage("missing command to run") }
        return try manager.run(id, command: command).shellStatus
    }
}
