import AppHomeSystem
import CommandSupport
import Containers
import Preferences
import PrefsClient
import PropertyList
import SettingsBundle
import SyncedPreferences

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
        /// `--synced`: the domain is an app's synced key-value store
        /// (`com.apple.developer.ubiquity-kvstore-identifier`), not a preference domain.
        var synced = false
        /// The options given (before the verb or right after it), for
        /// refusing one the verb would ignore.
        var given: [String] = []
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

    /// The files of domains under `root`, each installed app's in its home.
    static func resolver(root: String, registry: Registry) -> DomainResolver {
        DomainResolver(root: root, appPreferencesDirectories: ContainerRegistry.preferencesDirectories(registry, layout: ContainerLayout(root: root)))
    }

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
        var verbGiven: String?
        do {
            var rest = arguments[...]
            var options = try scanOptions(&rest)
            guard let verbArgument = rest.popFirst() else {
                // A bare `defaults` shows the whole help, as on macOS.
                throw CommandFailure(.usage, "missing verb", usageText: HelpText.full)
            }
            verbGiven = verbArgument
            let verb = verbArgument.lowercased()
            if verb == "--version" {
                guard rest.isEmpty else { throw unexpected(rest.first!) }
                console.out(AppHomeVersion.line(command: "defaults"))
                return 0
            }
            if verb == "help" || CommandReference.isHelpFlag(verb) {
                return try help(topic: rest, console: console)
            }
            guard reference.verb(verb) != nil else { throw CommandFailure.usage("unknown verb \(verbArgument)") }
            // The options may also follow the verb (`read --format json D`), before its operands.
            try scanOptions(&rest, into: &options, verbFlags: ["--effective", "--json", "--strict", "--dry-run"])
            if let first = rest.first, CommandReference.isHelpFlag(first) {
                return try help(topic: [verb], console: console)
            }
            try refuseUnhonouredOptions(options, verb: verb, Array(rest))
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
            } else if options.synced {
                // Neither prefsd's cache nor a settings schema: the stores keep their own state and limits.
                guard options.settingsBundle == nil, !options.force else {
                    throw CommandFailure.usage("--synced takes no --settings-bundle or --force")
                }
                store = SyncedPreferenceStore(root: root)
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
            return CommandFailure.report(error, command: "defaults", help: reference.helpLine(for: verbGiven), to: console)
        }
    }

    /// `help`, `help VERB`, `VERB --help`: the whole help, or one verb's lines of it.
    static func help(topic: ArraySlice<String>, console: Console) throws(CommandFailure) -> Int32 {
        guard let name = topic.first else {
            console.out(HelpText.full)
            return 0
        }
        if topic.count > 1 { throw unexpected(topic[topic.index(after: topic.startIndex)]) }
        guard let verb = reference.verb(name) else { throw .usage("unknown verb \(name)") }
        if verb.name == "help" {
            console.out(HelpText.full)
            return 0
        }
        console.out(HelpSections.section(of: HelpText.full, verb: verb.name, caseInsensitive: true)
                    ?? "  \(verb.name)\n")
        return 0
    }

    /// The store `defaults` uses: files under `root`, with each installed
    /// app's domain routed to its home's `Library/Preferences`, and the
    /// domains' settings schemas as its write policy (`settingsBundle`, when
    /// given, is the schema of every domain), after the keys `managed`
    /// forces, which no write may change.
    public static func fileStore(root: String, registry: Registry? = nil, settingsBundle: String? = nil,
                                 managed: ManagedPreferences? = nil, validators: SettingsWritePolicy.ValidatorSource? = nil) -> PreferenceStore {
        let apps = registry ?? ContainerRegistry.readOrEmpty(root: root)
        let schema = SettingsWritePolicy(root: root, registry: apps, explicitBundle: settingsBundle, validators: validators)
        let resolver = Self.resolver(root: root, registry: apps)
        // A domain given by its file's path is checked as the named domain.
        let policy = CanonicalDomainPolicy(managed.map { CombinedWritePolicy(ManagedWritePolicy($0), schema) } ?? schema,
                                           canonical: { resolver.canonical($0) })
        return FilePreferenceStore(resolver: resolver, policy: policy)
    }

    /// The options before the verb, scanned by ``ArgumentScanner``.
    static let leadingOptions: [ArgumentScanner.Option] = [
        .init("-currentHost"), .init("-host", .required("a value")),
        .init("--root", .required("a value"), empty: "a directory"), .init("--format", .required("a value")),
        .init("--key-path"), .init("--settings-bundle", .required("a value"), empty: "a directory"),
        .init("--idiom", .required("a value")), .init("--force"), .init("--synced"),
    ]

    static func scanOptions(_ rest: inout ArraySlice<String>) throws(CommandFailure) -> Options {
        var options = Options()
        var scanner = ArgumentScanner(rest)
        // `--help`, `-h` and `--version` stop the scan: they are handled as the verb.
        let matches = try scanner.leadingOptions(leadingOptions, stopAt: ["--help", "-h", "--version"],
                                                 unknown: { .usage("unknown option \($0)") })
        try apply(matches, to: &options)
        rest = scanner.rest
        return options
    }

    /// Scans the options right after the verb, passing over the verb's own
    /// flags (`read --effective --format json D K`), which stay in front.
    static func scanOptions(_ rest: inout ArraySlice<String>, into options: inout Options, verbFlags: [String]) throws(CommandFailure) {
        var own: [String] = []
        while true {
            var scanner = ArgumentScanner(rest)
            try apply(try scanner.leadingOptions(leadingOptions, unknown: { _ in nil }), to: &options)
            rest = scanner.rest
            guard let first = rest.first, verbFlags.contains(first) else { break }
            own.append(first)
            rest.removeFirst()
        }
        rest = own[...] + rest
    }

    private static func apply(_ matches: [ArgumentScanner.Match], to options: inout Options) throws(CommandFailure) {
        for match in matches {
            if !options.given.contains(match.name) { options.given.append(match.name) }
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
            case "--synced": options.synced = true
            default: options.force = true
            }
        }
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
            let names = try store.domainNames()
            if options.format == .text {
                console.out(names.joined(separator: ", ") + "\n")
            } else {
                try printValue(.array(names.map { .string($0) }), topLevel: false)
            }
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
