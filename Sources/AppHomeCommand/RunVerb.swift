#if canImport(Glibc)
import Glibc
#endif
import AppHomeSystem
import CommandSupport
import Containers

extension AppHomeCommand {
    /// `run <bundle-id> [--no-sandbox] [--no-network] [--talk-name NAME]… [--]
    /// CMD [ARG...]`: the command's exit status (128 + signal when a signal
    /// ended it) becomes apphome's.
    func runCommand(_ args: [String]) throws -> Int32 {
        let (id, options, command) = try appAndRunOptions(args, operandNeeded: "missing command to run")
        return try manager.run(id, command: command, options: options).shellStatus
    }

    /// What `run` and `launch` share: the app, the options given before and
    /// after it, and the operands after them (less a leading `--`); an
    /// unsandboxed run is announced once the operands are known to be there.
    func appAndRunOptions(_ args: [String], operandNeeded: String? = nil) throws -> (BundleIdentifier, RunOptions, [String]) {
        let (given, rest) = try runOptions(args)
        guard let first = rest.first else { throw CommandFailure.usage("missing bundle identifier") }
        let id = try bundleIdentifier(first)
        let (options, found) = try runOptions(Array(rest.dropFirst()), into: given)
        var operands = found
        if operands.first == "--" { operands.removeFirst() }
        if let operandNeeded, operands.isEmpty { throw CommandFailure.usage(operandNeeded) }
        announceUnsandboxed(id, options)
        return (id, options, operands)
    }

    /// The options of `run` and `launch` at the head of `args` (up to the
    /// first operand or `--`), and what follows them.
    func runOptions(_ args: [String], into start: RunOptions? = nil) throws -> (RunOptions, [String]) {
        var options = start ?? defaultRunOptions()
        var i = 0
        while i < args.count {
            let arg = args[i]
            switch arg {
            case "--no-sandbox": options.sandbox = false
            case "--no-network": options.network = false
            case "--talk-name":
                guard i + 1 < args.count else { throw CommandFailure.usage("--talk-name needs a bus name") }
                try RunOptions.checkTalkName(args[i + 1])
                options.talkNames.append(args[i + 1])
                i += 1
            default:
                if arg.hasPrefix("--talk-name=") {
                    let name = String(arg.dropFirst("--talk-name=".count))
                    try RunOptions.checkTalkName(name)
                    options.talkNames.append(name)
                } else if arg != "--" && arg.hasPrefix("-") && start == nil {
                    throw CommandFailure.usage("unknown option '\(arg)'")
                } else {
                    try check(options)
                    return (options, Array(args[i...]))
                }
            }
            i += 1
        }
        try check(options)
        return (options, [])
    }

    private func check(_ options: RunOptions) throws {
        if !options.sandbox && (!options.network || !options.talkNames.isEmpty) {
            throw CommandFailure.usage("--no-network and --talk-name need the sandbox; they cannot go with --no-sandbox")
        }
    }

    /// The options before any is given: a sandbox with the network, prefsd's
    /// socket bound in (prefsd started when none answers, unless
    /// `APPHOME_PREFSD=off`), the `prefsd` installed beside `apphome`.
    func defaultRunOptions() -> RunOptions {
        let configuration = environment.configuration
        var options = RunOptions(prefsdSocket: configuration.socketPath)
        if case .success(let mode) = configuration.serviceMode { options.startPrefsd = mode != .off } else { options.prefsdSocket = nil }
        if case .success(.off) = configuration.serviceMode { options.prefsdSocket = nil }
        if let me = SiblingProgram.executablePath() {
            let sibling = FileSystem.parentDirectory(me) + "/prefsd"
            if access(sibling, X_OK) == 0 { options.prefsdProgram = sibling }
        }
        return options
    }

    /// `--no-sandbox` is said out loud, every time.
    func announceUnsandboxed(_ id: BundleIdentifier, _ options: RunOptions) {
        guard !options.sandbox else { return }
        console.err("apphome: warning: \(id.rawValue) runs WITHOUT a sandbox (--no-sandbox): it can read and change every file of the user\n")
        // And in the journal (syslog, which journald collects), for whoever looks later.
        let line = "\(id.rawValue) started WITHOUT a sandbox (apphome run --no-sandbox, pid \(getpid()))"
        line.withCString { text in
            withVaList([text]) { vsyslog(LOG_USER | LOG_WARNING, "apphome: %s", $0) }
        }
    }
}
