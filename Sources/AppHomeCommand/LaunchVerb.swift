import CommandSupport
import Containers

extension AppHomeCommand {
    /// `launch <bundle-id> [--] [ARG...]`: starts the installed bundle's
    /// `CFBundleExecutable` in its home; its exit status (128 + signal when a
    /// signal ended it) becomes apphome's.
    func launchCommand(_ args: [String]) throws -> Int32 {
        var scanner = ArgumentScanner(args)
        _ = try scanner.leadingOptions([], stopAt: ["--"], unknown: { .usage("unknown option '\($0)'") })
        var rest = scanner.rest
        guard let first = rest.popFirst() else { throw CommandFailure.usage("missing bundle identifier") }
        let id = try bundleIdentifier(first)
        var arguments = Array(rest)
        if arguments.first == "--" { arguments.removeFirst() }
        return try manager.launch(id, arguments: arguments).shellStatus
    }
}
