import AppHomeSystem
import CommandSupport
import Containers
import Keychain
import KeychainClient
import PropertyList

/// What `security` needs from the process, read once by `main`.
public struct SecurityEnvironment: Sendable {
    /// The root, the app context, prefsd and the key-store policy.
    public var configuration: Configuration
    /// Whether standard input is a terminal (then secrets are prompted for).
    public var standardInputIsTerminal: Bool
    /// Set by a `security` that cannot load libsecret (the statically linked
    /// one): called, before anything is read or written, when the command
    /// is to open the keychain's files directly and that may ask the Secret
    /// Service; it runs the command again in `security-secret-service` (it
    /// does not return). `nil`: this process asks the Secret Service itself.
    public var secretServiceHandOff: (@Sendable () -> Void)?

    public init(configuration: Configuration, standardInputIsTerminal: Bool, secretServiceHandOff: (@Sendable () -> Void)? = nil) {
        self.configuration = configuration
        self.standardInputIsTerminal = standardInputIsTerminal
        self.secretServiceHandOff = secretServiceHandOff
    }

    /// Hands the command off (``secretServiceHandOff``) when the keychain
    /// under `root` may need the Secret Service.
    func handOffIfNeeded(root: String) {
        guard let handOff = secretServiceHandOff, SecretServiceUse.mayBeNeeded(root: root, configuration: configuration) else { return }
        handOff()
    }
}

/// The `security` command: the AppHome keychain with macOS `security(1)`
/// syntax.
public struct SecurityCommand {
    let keychain: KeychainAccess
    let context: KeychainContext
    /// `--access-group`: the one group the verb adds to or searches; `nil`
    /// means the app's first group for an add, all its groups for a search.
    let accessGroup: AccessGroup?
    let console: Console
    let prompter: SecretPrompter
    let environment: SecurityEnvironment

    /// The options whose value is a secret (`-w SECRET`): `main` never shows
    /// such a value when it is not valid UTF-8
    /// (``CommandLineArguments/run(_:command:console:secretAfter:_:)``).
    public static let secretOptions: Set<String> = ["-w"]

    /// Runs `security` with `arguments` (without the program name) and
    /// returns the exit status.
    public static func run(_ arguments: [String], environment: SecurityEnvironment, console: Console,
                           prompter: SecretPrompter, now: @escaping @Sendable () -> PlistDate = ContainerManager.systemClock) -> Int32 {
        var verbGiven: String?
        do {
            var scanner = ArgumentScanner(arguments)
            var root: String?
            var app: String?
            var groupName: String?
            let leading: [ArgumentScanner.Option] = [.init("--root", .required("a value"), empty: "a value"),
                                                     .init("--app", .required("a value"), empty: "a value"),
                                                     .init("--access-group", .required("a value"), empty: "a value")]
            do {
                for match in try scanner.leadingOptions(leading, stopAt: ["--help", "-h", "--version"],
                                                        unknown: { $0.hasPrefix("--") ? .usage("unknown option '\($0)'") : nil }) {
                    switch match.name {
                    case "--root": root = match.value
                    case "--app": app = match.value
                    default: groupName = match.value
                    }
                }
            } catch {
                throw SecurityFailure.securityUsage(error.message)
            }
            var rest = scanner.rest
            guard let verb = rest.popFirst() else {
                throw CommandFailure(.usage, "missing verb", exitStatus: 2, usageText: HelpText.full)
            }
            verbGiven = verb
            if verb == "--version" {
                if let extra = rest.first { throw SecurityFailure.securityUsage("unexpected argument '\(extra)'") }
                console.out(AppHomeVersion.line(command: "security"))
                return 0
            }
            if verb == "help" || CommandReference.isHelpFlag(verb) {
                guard let topic = rest.popFirst() else { console.out(HelpText.full); return 0 }
                if let extra = rest.first { throw SecurityFailure.securityUsage("unexpected argument '\(extra)'") }
                guard let spec = Self.verbs[topic] else { throw SecurityFailure.securityUsage("unknown verb '\(topic)'") }
                console.out(spec.usage)
                return 0
            }
            guard reference.verb(verb) != nil, let spec = Self.verbs[verb] else { throw SecurityFailure.securityUsage("unknown verb '\(verb)'") }
            if rest.contains(where: CommandReference.isHelpFlag) { console.out(spec.usage); return 0 }
            if verb == "error" { return try describeError(Array(rest), console: console) }
            if let locking = LockVerb(rawValue: verb) {
                // They act on the store itself, never through prefsd.
                if let lockRoot = root ?? environment.configuration.root { environment.handOffIfNeeded(root: lockRoot) }
                return try locking.run(Array(rest), root: root, environment: environment, console: console, prompter: prompter)
            }
            var options = try VerbOptions.scan(Array(rest), valueOptions: spec.values, flagOptions: spec.flags, addSecret: spec.addsSecret)
            if let given = options.accessGroup { groupName = given }
            guard let rootPath = options.root ?? root ?? environment.configuration.root else {
                throw SecurityFailure.failure("cannot find the AppHome root: set APPHOME_ROOT or HOME, or pass --root")
            }
            var login = false
            if let named = options.keychain {
                switch try KeychainName(named, root: rootPath) {
                case .login:
                    if let given = options.app ?? app {
                        throw SecurityFailure.securityUsage("the login keychain belongs to no app: leave out --app \(given), or name the app's keychain")
                    }
                    login = true
                case .group(let group):
                    if let groupName, groupName != group { throw SecurityFailure.securityUsage("--access-group \(groupName) and the keychain \(named) differ") }
                    groupName = group
                }
            }
            let accessGroup: AccessGroup?
            do throws(KeychainError) { accessGroup = try groupName.map { (g) throws(KeychainError) in try AccessGroup(g) } } catch {
                throw SecurityFailure.securityUsage(error.description)
            }
            let client: AppKeychain
            if Self.credentialVerbs.contains(verb) {
                // Grants live in the user's login keychain, which no app context reaches.
                if let named = options.app ?? app ?? environment.configuration.bundleIdentifier {
                    throw SecurityFailure.failure("\(verb) manages the user's login keychain; it does not run in an app's context (\(named))")
                }
                guard let root = root ?? environment.configuration.root else {
                    throw SecurityFailure.failure("cannot find the AppHome root: set APPHOME_ROOT or HOME, or pass --root")
                }
                do throws(AppKeychainError) { client = try AppKeychain(loginAt: root, configuration: environment.configuration, now: now, beforeOpeningFiles: environment.handOffIfNeeded) } catch {
                    throw SecurityFailure.failure(error.description)
                }
            } else {
            do throws(AppKeychainError) {
                if login { throw .noAppContext }
                client = try AppKeychain(app: options.app ?? app, root: rootPath, configuration: environment.configuration, now: now,
                                         beforeOpeningFiles: environment.handOffIfNeeded)
            } catch .noAppContext {
                // No app named and none running: the user's login keychain, as on macOS.
                do throws(AppKeychainError) {
                    client = try AppKeychain(loginAt: rootPath, configuration: environment.configuration, now: now,
                                             beforeOpeningFiles: environment.handOffIfNeeded)
                } catch {
                    throw SecurityFailure.failure(error.description)
                }
            } catch {
                throw SecurityFailure.failure(error.description)
            }
            }
            // After the keychain is chosen: a hand-off to the sibling prints it there.
            if !options.trustedApplications.isEmpty {
                console.err(accessListNote)
                options.trustedApplications = []
            }
            let command = SecurityCommand(keychain: client.access, context: client.context, accessGroup: accessGroup, console: console, prompter: prompter,
                                          environment: environment)
            try spec.perform(command)(options)
            return 0
        } catch {
            return CommandFailure.report(error, command: "security", help: reference.helpLine(for: verbGiven), to: console)
        }
    }

    /// What `-T` and `-A` print on standard error: the flags are accepted,
    /// and say nothing here.
    static let accessListNote = "security: note: -T and -A are accepted and ignored: which programs read an item is decided "
        + "by the app's keychain access groups, not by per-application access lists\n"

    /// `security error N`: an `OSStatus` (`-25300`), or one of `security`'s
    /// own exit statuses (`44`, the low byte of errSecItemNotFound).
    static func describeError(_ args: [String], console: Console) throws(SecurityFailure) -> Int32 {
        guard args.count == 1, let code = Int32(args[0]) else {
            throw .securityUsage(args.isEmpty ? "missing status code" : args.count > 1 ? "unexpected argument '\(args[1])'" : "not a status code: '\(args[0])'")
        }
        if let text = KeychainError.describe(status: code) {
            console.out("Error: \(code) \(text)\n")
            return 0
        }
        if let own = ExitStatus.named(code) {
            console.out("Error: \(code) is security's exit status for \(own)\n")
            return 0
        }
        throw .failure("Error: \(code): unknown status")
    }

    struct Verb: Sendable {
        var usage: String
        var values: Set<Character>
        var flags: Set<Character>
        var addsSecret: Bool
        var perform: @Sendable (SecurityCommand) -> (VerbOptions) throws -> Void
    }

    static let genericMatch: Set<Character> = ["a", "s", "l", "j", "D", "G"]
    static let internetMatch: Set<Character> = ["a", "s", "r", "P", "p", "d", "t", "l", "j", "D"]

    static let verbs: [String: Verb] = [
        "add-generic-password": Verb(usage: HelpText.addGeneric, values: genericMatch, flags: ["U"], addsSecret: true, perform: { c in { try c.add(.genericPassword, $0) } }),
        "find-generic-password": Verb(usage: HelpText.findGeneric, values: genericMatch, flags: ["g", "w"], addsSecret: false, perform: { c in { try c.find(.genericPassword, $0) } }),
        "delete-generic-password": Verb(usage: HelpText.deleteGeneric, values: genericMatch, flags: [], addsSecret: false, perform: { c in { try c.delete(.genericPassword, $0) } }),
        "add-internet-password": Verb(usage: HelpText.addInternet, values: internetMatch, flags: ["U"], addsSecret: true, perform: { c in { try c.add(.internetPassword, $0) } }),
        "find-internet-password": Verb(usage: HelpText.findInternet, values: internetMatch, flags: ["g", "w"], addsSecret: false, perform: { c in { try c.find(.internetPassword, $0) } }),
        "delete-internet-password": Verb(usage: HelpText.deleteInternet, values: internetMatch, flags: [], addsSecret: false, perform: { c in { try c.delete(.internetPassword, $0) } }),
        "dump-keychain": Verb(usage: HelpText.dump, values: [], flags: ["d"], addsSecret: false, perform: { c in { try c.dump($0) } }),
        "lock-keychain": Verb(usage: HelpText.lock, values: [], flags: [], addsSecret: false, perform: { _ in { _ in } }),
        "unlock-keychain": Verb(usage: HelpText.unlock, values: [], flags: [], addsSecret: false, perform: { _ in { _ in } }),
        "create-keychain": Verb(usage: HelpText.create, values: [], flags: [], addsSecret: false, perform: { _ in { _ in } }),
        "show-keychain-info": Verb(usage: HelpText.info, values: [], flags: [], addsSecret: false, perform: { _ in { _ in } }),
        "add-credential": Verb(usage: HelpText.addCredential, values: ["u", "c", "s", "a"], flags: ["U"], addsSecret: true, perform: { c in { try c.addCredential($0) } }),
        "list-credentials": Verb(usage: HelpText.listCredentials, values: ["u"], flags: [], addsSecret: false, perform: { c in { try c.listCredentials($0) } }),
        "delete-credential": Verb(usage: HelpText.deleteCredential, values: ["u", "c"], flags: [], addsSecret: false, perform: { c in { try c.deleteCredential($0) } }),
        "error": Verb(usage: HelpText.error, values: [], flags: [], addsSecret: false, perform: { _ in { _ in } }),
        "list-keychains": Verb(usage: HelpText.listKeychains, values: ["d"], flags: [], addsSecret: false, perform: { c in { try c.listKeychains($0) } }),
        "default-keychain": Verb(usage: HelpText.defaultKeychain, values: ["d"], flags: [], addsSecret: false, perform: { c in { try c.defaultKeychain($0) } }),
        "login-keychain": Verb(usage: HelpText.loginKeychain, values: ["d"], flags: [], addsSecret: false, perform: { c in { try c.loginKeychain($0) } }),
    ]
}
