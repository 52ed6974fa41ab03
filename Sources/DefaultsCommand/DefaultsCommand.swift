import AppHomeSystem
import CommandSupport
import Containers
import Preferences
import PrefsClient
import PropertyList
import SettingsBundle

/// The `defaults` command: macOS syntax, output and messages, over an
/// AppHome preference store.
///
/// `main` reads the ``Configuration`` once and calls ``run(_:configuration:console:makeStore:)``.
public struct DefaultsCommand {
    /// How `read` and `export -` print values.
    public enum OutputFormat: String, Sendable {
        case text, xml, json
    }

    /// Options that come before the verb.
    struct Options {
        var root: String?
        var scope: HostScope = .anyHost
        var format: OutputFormat = .text
        var keyPaths = false
        /// `--settings-bundle PATH`: the schema for every domain this run touches.
        var settingsBundle: String?
        /// `--idiom phone|pad`: the device the settings bundle is read for
        /// (phone when not given; `lint` then checks both).
        var idiom: Idiom?
        /// `--force`: write values the settings schema refuses.
        var force = false
    }

    let store: PreferenceStore
    let options: Options
    /// The AppHome root (settings bundles of installed and registered apps).
    let root: String
    let console: Console
    /// The administrator's forced values (``Configuration/managedDirectory``),
    /// for `read --effective`.
    var managed: ManagedPreferences?
    /// The app registry when the file store already read it; `nil` (prefsd,
    /// or a store a test passed): read when a verb needs it.
    var registry: Registry?

    /// The registry, read at most once per command.
    func installedApps() -> Registry { registry ?? ContainerRegistry.readOrEmpty(root: root) }

    /// Runs `defaults` with `arguments` (without the program name) and
    /// returns the exit status.
    ///
    /// - Parameters:
    ///   - arguments: the command line after the program name.
    ///   - configuration: what `main` read from the environment.
    ///   - console: where output goes and input comes from.
    ///   - makeStore: builds the store for a root; tests pass another one.
    ///     By default prefsd's when `APPHOME_PREFSD` allows it and a prefsd
    ///     serving this root answers, else the files (``fileStore(root:registry:)``).
    public static func run(
        _ arguments: [String],
        configuration: Configuration,
        console: Console,
        makeStore: ((String) throws -> PreferenceStore)? = nil
    ) -> Int32 {
        do {
            var rest = arguments[...]
            let options = try scanOptions(&rest)
            guard let verbArgument = rest.popFirst() else {
                throw CommandFailure.usage("missing verb")
            }
            let verb = verbArgument.lowercased()
            if verb == "help" || verb == "--help" || verb == "-h" {
                guard rest.isEmpty else { throw unexpected(rest.first!) }
                console.out(HelpText.full)
                return 0
            }
            guard let root = options.root ?? configuration.root else {
                throw CommandFailure.failure("cannot find the AppHome root: set APPHOME_ROOT or HOME, or pass --root")
            }
            if verb == "watch" {
                return try watch(Array(rest), root: root, options: options, configuration: configuration, console: console)
            }
            let managed = ManagedPreferences(directory: configuration.managedDirectory, warn: WarningsOnce(console).warn)
            let store: PreferenceStore
            var registry: Registry?
            if let makeStore {
                store = try makeStore(root)
            } else if let connection = try PrefsdSettings(configuration: configuration).connect(root: root) {
                // prefsd applies the domains' own schemas; an explicit
                // `--settings-bundle` (which only this run knows) is checked here too.
                store = DaemonPreferenceStore(connection: connection,
                                              policy: options.settingsBundle.map { SettingsWritePolicy(root: root, explicitBundle: $0) })
            } else {
                // Read once: it routes app domains and finds their settings bundles.
                registry = ContainerRegistry.readOrEmpty(root: root)
                store = fileStore(root: root, registry: registry!, settingsBundle: options.settingsBundle, managed: managed)
            }
            var command = DefaultsCommand(store: store, options: options, root: root, console: console)
            command.registry = registry
            command.managed = managed
            try command.perform(verb: verb, verbArgument: verbArgument, Array(rest))
            return 0
        } catch {
            return CommandFailure.report(error, command: "defaults", usage: HelpText.full, to: console)
        }
    }

    /// The store `defaults` uses: files under `root`, with each installed
    /// app's domain routed to its home's `Library/Preferences`, and the
    /// domains' settings schemas as its write policy (`settingsBundle`, when
    /// given, is the schema of every domain), after the keys `managed`
    /// forces, which no write may change.
    public static func fileStore(root: String, registry: Registry? = nil, settingsBundle: String? = nil,
                                 managed: ManagedPreferences? = nil) -> PreferenceStore {
        let apps = registry ?? ContainerRegistry.readOrEmpty(root: root)
        let schema = SettingsWritePolicy(root: root, registry: apps, explicitBundle: settingsBundle)
        return FilePreferenceStore(resolver: DomainResolver(
            root: root, appPreferencesDirectories: ContainerRegistry.preferencesDirectories(apps, layout: ContainerLayout(root: root))),
            policy: managed.map { CombinedWritePolicy(ManagedWritePolicy($0), schema) } ?? schema)
    }

    /// The options before the verb, scanned by ``ArgumentScanner``.
    static let leadingOptions: [ArgumentScanner.Option] = [
        .init("-currentHost"), .init("-host", .required("a value")),
        .init("--root", .required("a value"), empty: "a directory"), .init("--format", .required("a value")),
        .init("--key-path"), .init("--settings-bundle", .required("a value"), empty: "a directory"),
        .init("--idiom", .required("a value")), .init("--force"),
    ]

    static func scanOptions(_ rest: inout ArraySlice<String>) throws(CommandFailure) -> Options {
        var options = Options()
        var scanner = ArgumentScanner(rest)
        // `--help` and `-h` stop the scan: they are handled as the verb.
        for match in try scanner.leadingOptions(leadingOptions, stopAt: ["--help", "-h"], unknown: { .usage("unknown option \($0)") }) {
            let value = match.value ?? ""
            switch match.name {
            case "-currentHost": options.scope = .currentHost
            case "-host": options.scope = .named(value)
            case "--root": options.root = value
            case "--format":
                guard let format = OutputFormat(rawValue: value.lowercased()) else {
                    throw .usage("unknown format \"\(value)\" for --format (use text, xml or json)")
                }
                options.format = format
            case "--key-path": options.keyPaths = true
            case "--settings-bundle": options.settingsBundle = value
            case "--idiom":
                guard let idiom = Idiom(rawValue: value) else { throw .usage("unknown idiom \"\(value)\" for --idiom (use phone or pad)") }
                options.idiom = idiom
            default: options.force = true
            }
        }
        rest = scanner.rest
        return options
    }

    /// An argument beyond what a verb takes: a usage error (status 255).
    static func unexpected(_ arg: String) -> CommandFailure {
        .usage("Unexpected argument \(arg); leaving defaults unchanged.")
    }

    func perform(verb: String, verbArgument: String, _ arguments: [String]) throws {
        var args = arguments
        // `-app <Name>` names an installed app by bundle or display name; it
        // stands where the domain does, after a verb's own flag.
        let at = args.prefix { $0 == "--force" || $0 == "--effective" || $0 == "--json" || $0 == "--strict" || $0 == "--unarchive" }.count
        if args.count >= at + 2 && args[at] == "-app" {
            guard let id = ContainerRegistry.applicationDomain(named: args[at + 1], in: installedApps()) else {
                throw CommandFailure.failure("Couldn't find an application named \"\(args[at + 1])\"; defaults unchanged")
            }
            args.replaceSubrange(at..<(at + 2), with: [id])
        }
        switch verb {
        case "read": try read(args)
        case "read-type": try readType(args)
        case "write": try write(args)
        case "rename": try rename(args)
        case "delete", "remove", "delete-all": try delete(args)
        case "import": try importDomain(args)
        case "apply": try apply(args)
        case "export": try exportDomain(args)
        case "domains":
            guard args.isEmpty else { throw Self.unexpected(args[0]) }
            console.out(try store.domainNames().joined(separator: ", ") + "\n")
        case "find": try find(args)
        case "lint": try lint(args)
        case "validate": try validate(args)
        case "range": try range(args)
        case "printhostidentifier":
            guard args.isEmpty else { throw Self.unexpected(args[0]) }
            console.out(try store.hostIdentifier() + "\n")
        default:
            throw CommandFailure.usage("unknown verb \(verbArgument)")
        }
    }

    // MARK: - Shared helpers

    /// Parses the domain argument at `index`, or throws a usage error naming what is missing.
    func domain(_ args: [String], _ index: Int = 0, verb: String) throws -> Domain {
        guard index < args.count else { throw CommandFailure.usage("\(verb) needs a domain") }
        if args[index] == "-app" {
            // Only reached with no name after -app (macOS wording).
            let name = index + 1 < args.count ? args[index + 1] : ""
            throw CommandFailure.failure("Couldn't find an application named \"\(name)\"; defaults unchanged")
        }
        return try Domain(argument: args[index])
    }

    func keyPath(_ key: String) throws(PreferencesError) -> KeyPath {
        options.keyPaths ? try KeyPath(parsing: key) : KeyPath(key: key)
    }

    /// The name macOS shows for a domain in "domain/default pair" messages.
    func pairName(_ domain: Domain) -> String {
        domain == .global ? "kCFPreferencesAnyApplication" : domain.description
    }

    /// Prints `value` in the chosen format; `topLevel` is true for a value read by key.
    func printValue(_ value: PlistValue, topLevel: Bool) throws {
        switch options.format {
        case .text:
            console.out((topLevel ? OldStylePrinter.describeTopLevel(value) : OldStylePrinter.describe(value)) + "\n")
        case .xml:
            console.out(String(decoding: try PlistCodec.encode(value, format: .xml), as: UTF8.self))
        case .json:
            console.out(String(decoding: try PlistCodec.encode(value, format: .json), as: UTF8.self))
        }
    }
}
