import CommandSupport
import Containers

extension AppHomeCommand {
    /// `launch <bundle-id> [--no-sandbox] [--no-network] [--talk-name NAME]…
    /// [--] [ARG...]`: starts the installed bundle's `CFBundleExecutable` in
    /// its home (in its sandbox); its exit status (128 + signal when a signal
    /// ended it) becomes apphome's.
    func launchCommand(_ args: [String]) throws -> Int32 {
        let (id, options, arguments) = try appAndRunOptions(args)
        return try manager.launch(id, arguments: arguments, options: options).shellStatus
    }
}
