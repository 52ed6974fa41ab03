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

    public init(configuration: Configuration, standardInputIsTerminal: Bool) {
        self.configuration = configuration
        self.standardInputIsTerminal = standardInputIsTerminal
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
    /// The verb's usage, shown after a usage error.
    let usage: String

    /// The options whose value is a secret (`-w SECRET`): `main` never shows
    /// such a value when it is not valid UTF-8
    /// (``CommandLineArguments/run(_:command:console:secretAfter:_:)``).
    public static let secretOptions: Set<String> = ["-w"]

    /// Runs `security` with `arguments` (without the program name) and
    /// returns the exit status.
    public static func run(_ arguments: [String], environment: SecurityEnvironment, console: Console,
                           prompter: SecretPrompter, now: @escaping @Sendable () -> PlistDate = ContainerManager.systemClock) -> Int32 {
        var usage = HelpText.full
        do {
            var scanner = ArgumentScanner(arguments)
            var root: String?
            var app: String?
            var groupName: String?
            let leading: [ArgumentScanner.Option] = [.init("--help"), .init("--root", .required("a value"), empty: "a value"),
                                                     .init("--app", .required("a value"), empty: "a value"),
                                                     .init("--access-group", .required("a value"), empty: "a value")]
            do {
                for match in try scanner.leadingOptions(leading, unknown: { $0.hasPrefix("--") ? .usage("unknown option '\($0)'") : nil }) {
                    switch match.name {
                    case "--help": console.out(HelpText.full); return 0
                    case "--root": root = match.value
                    case "--app": app = match.value
                    default: groupName = match.value
                    }
                }
            } catch {
                throw SecurityFailure.usage(error.message, usage)
            }
            var rest = scanner.rest
            guard let verb = rest.popFirst() else { throw SecurityFailure.usage("missing verb", usage) }
            if verb == "help" || verb == "-h" {
                console.out(HelpText.full)
                return 0
            }
            guard let spec = Self.verbs[verb] else { throw SecurityFailure.usage("unknown verb '\(verb)'", usage) }
            usage = spec.usage
            if rest.contains("--help") || rest.contains("-h") { console.out(spec.usage); return 0 }
            if verb == "error" { return try describeError(Array(rest), console: console) }
            if let locking = LockVerb(rawValue: verb) {
                return try locking.run(Array(rest), root: root, environment: environment, console: console, prompter: prompter, usage: spec.usage)
            }
            let accessGroup: AccessGroup?
            do throws(KeychainError) { accessGroup = try groupName.map { (g) throws(KeychainError) in try AccessGroup(g) } } catch {
                throw SecurityFailure.usage(error.description, HelpText.full)
            }
            let options = try VerbOptions.scan(Array(rest), valueOptions: spec.values, flagOptions: spec.flags,
                                               addSecret: spec.addsSecret, usage: spec.usage)
            let client: AppKeychain
            if Self.credentialVerbs.contains(verb) {
                // Grants live in the user's login keychain, which no app context reaches.
                if let named = options.app ?? app ?? environment.configuration.bundleIdentifier {
                    throw SecurityFailure.failure("\(verb) manages the user's login keychain; it does not run in an app's context (\(named))")
                }
                guard let root = root ?? environment.configuration.root else {
                    throw SecurityFailure.failure("cannot find the AppHome root: set APPHOME_ROOT or HOME, or pass --root")
                }
                do throws(AppKeychainError) { client = try AppKeychain(loginAt: root, configuration: environment.configuration, now: now) } catch {
                    throw SecurityFailure.failure(error.description)
                }
            } else {
            do throws(AppKeychainError) {
                client = try AppKeychain(app: options.app ?? app, root: root, configuration: environment.configuration, now: now)
            } catch .noRoot {
                throw SecurityFailure.failure("cannot find the AppHome root: set APPHOME_ROOT or HOME, or pass --root")
            } catch .noAppContext {
                // No app named and none running: the user's login keychain, as on macOS.
                do throws(AppKeychainError) {
                    guard let root = root ?? environment.configuration.root else { throw .noRoot }
                    client = try AppKeychain(loginAt: root, configuration: environment.configuration, now: now)
                } catch {
                    throw SecurityFailure.failure(error.description)
                }
            } catch {
                throw SecurityFailure.failure(error.description)
            }
            }
            let command = SecurityCommand(keychain: client.access, context: client.context, accessGroup: accessGroup, console: console, prompter: prompter,
                                          environment: environment, usage: spec.usage)
            try spec.perform(command)(options)
            return 0
        } catch {
            return CommandFailure.report(error, command: "security", usage: usage, to: console, blankLineBeforeUsage: false)
        }
    }

    static func describeError(_ args: [String], console: Console) throws(SecurityFailure) -> Int32 {
        guard args.count == 1, let code = Int32(args[0]) else { throw .usage(args.isEmpty ? "missing status code" : "not a status code: '\(args[0])'", HelpText.error) }
        guard let text = KeychainError.describe(status: code) else { throw .failure("Error: \(code): unknown status") }
        console.out("Error: \(code) \(text)\n")
        return 0
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
    ]
}
