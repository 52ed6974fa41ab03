import CommandSupport
import Containers
import Keychain
import KeychainClient
import PropertyList

/// What `security` needs from the process, read once by `main`.
public struct SecurityEnvironment: Sendable {
    /// Every variable of the process (root, app context, key-store policy).
    public var variables: [String: String]
    /// Whether standard input is a terminal (then secrets are prompted for).
    public var standardInputIsTerminal: Bool

    public init(variables: [String: String], standardInputIsTerminal: Bool) {
        self.variables = variables
        self.standardInputIsTerminal = standardInputIsTerminal
    }
}

/// The `security` command: the AppHome keychain with macOS `security(1)`
/// syntax.
public struct SecurityCommand {
    let keychain: KeychainAccess
    let context: KeychainContext
    let console: Console
    let prompter: SecretPrompter
    let environment: SecurityEnvironment
    /// The verb's usage, shown after a usage error.
    let usage: String

    /// Runs `security` with `arguments` (without the program name) and
    /// returns the exit status.
    public static func run(_ arguments: [String], environment: SecurityEnvironment, console: Console,
                           prompter: SecretPrompter, now: @escaping @Sendable () -> PlistDate = ContainerManager.systemClock) -> Int32 {
        var usage = HelpText.full
        do {
            var rest = arguments[...]
            var root: String?
            var app: String?
            while let arg = rest.first, arg.hasPrefix("--") {
                rest.removeFirst()
                let (name, inline) = arg.firstIndex(of: "=").map { (String(arg[..<$0]), Optional(String(arg[arg.index(after: $0)...]))) } ?? (arg, nil)
                if name == "--help" && inline == nil { console.out(HelpText.full); return 0 }
                guard name == "--root" || name == "--app" else { throw SecurityFailure.usage("unknown option '\(arg)'", usage) }
                guard let value = inline ?? rest.popFirst(), !value.isEmpty else {
                    throw SecurityFailure.usage("option \(name) needs a value", usage)
                }
                if name == "--root" { root = value } else { app = value }
            }
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
            let options = try VerbOptions.scan(Array(rest), valueOptions: spec.values, flagOptions: spec.flags,
                                               addSecret: spec.addsSecret, usage: spec.usage)
            let client: AppKeychain
            do throws(AppKeychainError) {
                client = try AppKeychain(app: options.app ?? app, root: root, environment: environment.variables, now: now)
            } catch .noRoot {
                throw SecurityFailure.failure("cannot find the AppHome root: set APPHOME_ROOT or HOME, or pass --root")
            } catch .noAppContext {
                throw SecurityFailure.failure("no app context: pass --app <bundle-id>, or run inside `apphome run`")
            } catch {
                throw SecurityFailure.failure(error.description)
            }
            let command = SecurityCommand(keychain: client.access, context: client.context, console: console, prompter: prompter,
                                          environment: environment, usage: spec.usage)
            try spec.perform(command)(options)
            return 0
        } catch let failure as SecurityFailure {
            console.err("security: \(failure.message)\n")
            if let u = failure.usage { console.err(u) }
            return failure.status
        } catch {
            console.err("security: \(error)\n")
            return 1
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
        "error": Verb(usage: HelpText.error, values: [], flags: [], addsSecret: false, perform: { _ in { _ in } }),
    ]
}
