#if canImport(Glibc)
import Glibc
#endif
import AppHomeSystem
import CommandSupport
import Backups
import Containers
import Keychain
import Preferences
import PrefsClient

/// The `apphome` command: install, update and uninstall apps, show their
/// paths, and run programs inside an app's home.
///
/// `main` reads the environment once and calls ``run(_:environment:console:hookTimeout:)``.
public struct AppHomeCommand {
    let manager: ContainerManager
    let environment: AppHomeEnvironment
    let console: Console
    let hookTimeout: Double
    /// Asks for a backup password on the terminal (`--password`).
    let prompter: (any SecretPrompter)?
    /// Measures free space for `purge-caches`; tests pass their own.
    let freeBytes: (String) throws(SystemError) -> UInt64

    /// Runs `apphome` with `arguments` (without the program name) and
    /// returns the exit status: 0 on success, 1 on failure, 255 for a usage
    /// error, or the status of the command `run` started.
    ///
    /// - Parameters:
    ///   - arguments: the command line after the program name.
    ///   - environment: the variables `main` read.
    ///   - console: where output goes.
    ///   - hookTimeout: seconds each uninstall hook may run.
    ///   - freeBytes: measures the free space `purge-caches` aims for;
    ///     `statvfs` by default.
    ///   - prompter: asks for a backup password (`--password`); `nil`: no terminal.
    public static func run(_ arguments: [String], environment: AppHomeEnvironment, console: Console,
                           prompter: (any SecretPrompter)? = nil, hookTimeout: Double = 10,
                           freeBytes: @escaping (String) throws(SystemError) -> UInt64 = ContainerManager.availableBytes) -> Int32 {
        var verbGiven: String?
        do {
            var scanner = ArgumentScanner(arguments)
            var rootOption = try scanner.leadingOptions([.init("--root", .required("a directory"), empty: "a directory")],
                                                        stopAt: ["--help", "-h", "--version"],
                                                        unknown: { $0.hasPrefix("--root") ? .usage("unknown option '\($0)'") : nil }).last?.value
            var rest = scanner.rest
            guard let verb = rest.popFirst() else {
                // A bare `apphome` shows the whole help.
                throw CommandFailure(.usage, "missing verb", usageText: HelpText.full)
            }
            verbGiven = verb
            if verb == "--version" {
                guard rest.isEmpty else { throw CommandFailure.usage("unexpected argument '\(rest.first!)'") }
                console.out(AppHomeVersion.line(command: "apphome"))
                return 0
            }
            if verb == "help" || CommandReference.isHelpFlag(verb) {
                if rest.count == 1 {
                    guard let known = reference.verb(rest.first!), let section = HelpText.section(for: known.name) else {
                        throw CommandFailure.usage("unknown verb '\(rest.first!)'")
                    }
                    console.out(section)
                    return 0
                }
                guard rest.isEmpty else { throw CommandFailure.usage("unexpected argument '\(rest.first!)'") }
                console.out(HelpText.full)
                return 0
            }
            guard let known = reference.verb(verb) else { throw CommandFailure.usage("unknown verb '\(verb)'") }
            // `apphome <verb> --help`; after run's and launch's bundle id, the words are the program's.
            let own = verb == "run" || verb == "launch" ? rest.prefix(1) : rest.prefix { $0 != "--" }
            if own.contains(where: CommandReference.isHelpFlag), let section = HelpText.section(for: known.name) {
                console.out(section)
                return 0
            }
            if let handOff = environment.secretServiceHandOff, !staticVerbs.contains(known.name) { handOff() }
            // `--root DIR` may also follow the verb (before run's and launch's bundle id, before a `--`).
            var arguments = Array(rest)
            var index = 0
            while index < arguments.count, arguments[index] != "--" {
                let arg = arguments[index]
                if (verb == "run" || verb == "launch") && !arg.hasPrefix("-") { break }
                if arg == "--root" || arg.hasPrefix("--root=") {
                    let value = arg == "--root" ? (index + 1 < arguments.count ? arguments[index + 1] : nil) : String(arg.dropFirst(7))
                    guard let value, !value.isEmpty else { throw CommandFailure.usage("option --root needs a directory") }
                    rootOption = value
                    arguments.removeSubrange(index..<(index + (arg == "--root" ? 2 : 1)))
                    continue
                }
                index += 1
            }
            if signingVerbs.contains(verb) { return try performSigning(verb, arguments, console: console) }
            guard let root = rootOption ?? environment.defaultRoot() else {
                throw CommandFailure.failure("cannot find the AppHome root: set APPHOME_ROOT or HOME, or pass --root")
            }
            let keychain = KeychainParticipant(root: root, policy: environment.keychainKeyPolicy)
            var manager = ContainerManager(root: root, participants: [keychain])
            if let hook = environment.stepHook { manager.stepHook = hook }
            let command = AppHomeCommand(manager: manager, environment: environment,
                                         console: console, hookTimeout: hookTimeout, prompter: prompter, freeBytes: freeBytes)
            return try command.perform(verb, arguments)
        } catch let error as ContainersError {
            var message = error.description
            if case .registryCorrupt = error, verbGiven != "doctor" {
                message += "; run 'apphome doctor' to rebuild it from the homes"
            }
            return CommandFailure.report(CommandFailure.failure(message), command: "apphome", help: "", to: console)
        } catch {
            return CommandFailure.report(error, command: "apphome", help: reference.helpLine(for: verbGiven), to: console)
        }
    }

    func perform(_ verb: String, _ args: [String]) throws -> Int32 {
        switch verb {
        case "install": try install(args)
        case "update": try update(args)
        case "uninstall": try uninstall(args)
        case "doctor": return try doctor(args)
        case "purge-caches": return try purgeCaches(args)
        case "clean-tmp": try cleanTemporaryDirectories(args)
        case "list": try list(args)
        case "info": try info(args)
        case "container", "get_app_container": try container(args)
        case "run": return try runCommand(args)
        case "launch": return try launchCommand(args)
        case "backup": return try backup(args)
        case "restore": return try restore(args)
        case "backups": return try listBackups(args)
        case "prune-backups": return try pruneBackups(args)
        case "sync": return try sync(args)
        case "settings": return try settings(args)
        default: throw CommandFailure.usage("unknown verb '\(verb)'")
        }
        return 0
    }

    /// Checks the number of operands and that none looks like an option.
    func operands(_ args: [String], _ names: [String], optional: Int = 0) throws(CommandFailure) -> [String] {
        if let option = args.first(where: { $0.hasPrefix("-") && $0 != "-" }) {
            throw .usage("unknown option '\(option)'")
        }
        if args.count < names.count - optional { throw .usage("missing \(names[args.count])") }
        if args.count > names.count { throw .usage("unexpected argument '\(args[names.count])'") }
        return args
    }

    /// A bundle identifier given on the command line: a malformed one is a
    /// usage error (with the pointer to the verb's help), as every other
    /// malformed operand is.
    func bundleIdentifier(_ operand: String) throws(CommandFailure) -> BundleIdentifier {
        do { return try BundleIdentifier(operand) } catch { throw .usage(error.description) }
    }
}
