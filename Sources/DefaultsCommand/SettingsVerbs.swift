import AppHomeSystem
import CommandSupport
import Containers
import Preferences
import PropertyList
import SettingsBundle

/// Where a domain's settings schema comes from, in order: `--settings-bundle
/// PATH`; the `Settings.bundle` of the installed app whose bundle id is the
/// domain (`<home>/<Name>.app/Settings.bundle`), unless its Root names an
/// `ApplicationGroupContainerIdentifier`: then it governs that group's suite
/// instead (the domain `group.…`), as the reference's §7 says; a bundle
/// registered under the root as `Library/SettingsBundles/<domain>.bundle` (a
/// directory or a symbolic link to one).
struct SettingsSchemaLookup {
    let root: String
    let explicit: String?
    /// The app registry when it was already read (file store); `nil`: read
    /// here when the domain could be an app's or a group's.
    var registry: Registry?

    /// The directory of explicitly registered bundles.
    static func registeredDirectory(root: String) -> String { root + "/Library/SettingsBundles" }

    /// The bundle whose values live in `domain` on `idiom`. With
    /// `governing` false, an app's own bundle even when its values go to a
    /// group's suite (what `lint <domain>` checks).
    func bundle(for domain: Domain, idiom: Idiom = .phone, governing: Bool = true) throws -> SettingsBundle? {
        if let explicit {
            do { return try SettingsBundle(path: explicit) } catch {
                throw CommandFailure.failure("\(error)")
            }
        }
        guard case .named(let name) = domain else { return nil }
        let layout = ContainerLayout(root: root)
        func settingsBundle(_ e: RegistryEntry) -> SettingsBundle? {
            try? SettingsBundle(path: layout.home(uuid: e.homeUUID, bundleName: e.bundleName).app + "/Settings.bundle")
        }
        let group = try? AppGroupIdentifier(name)
        let app = try? BundleIdentifier(name)
        let registry = self.registry ?? (app != nil ? ContainerRegistry.readOrEmpty(root: root) : Registry())
        if let app, let e = registry.entries[app], let b = settingsBundle(e) {
            // A bundle whose values go to a group's suite does not govern the
            // app's domain. Only an app in a group can name one (so most apps'
            // writes do not read Root for it).
            if !governing || e.groups.isEmpty || b.groupContainerIdentifier(idiom: idiom) == nil { return b }
            return nil
        }
        if let group, registry.groups[group] != nil {
            for e in registry.sortedEntries where e.groups.contains(group) {
                if let b = settingsBundle(e), b.groupContainerIdentifier(idiom: idiom) == group.rawValue { return b }
            }
        }
        return try? SettingsBundle(path: Self.registeredDirectory(root: root) + "/" + name + ".bundle")
    }
}

extension DefaultsCommand {
    /// Finds the settings bundle of a domain.
    var schemaLookup: SettingsSchemaLookup {
        SettingsSchemaLookup(root: root, explicit: options.settingsBundle, registry: registry)
    }

    /// Where compiled settings bundles are kept (see ``CompiledSchemaCache``).
    static func compiledSchemaDirectory(root: String) -> String { root + "/Library/Caches/SettingsSchemas" }

    /// The validator of `keys` in `domain`, or `nil` when the domain has no
    /// settings bundle. It comes from the compiled form of the bundle when
    /// that is fresh (one small file read), else from walking the bundle.
    func validator(for domain: Domain, keys: [String]) throws -> WriteValidator? {
        guard let bundle = try schemaLookup.bundle(for: domain, idiom: options.idiom ?? .phone) else { return nil }
        return CompiledSchemaCache(directory: Self.compiledSchemaDirectory(root: root))
            .validator(for: bundle, idiom: options.idiom ?? .phone, keys: keys)
    }

    /// Checks the final values of `keys` in `contents`; throws when one is
    /// refused (unless `--force`), returns the findings to print after the write.
    static func checkWrite(_ validator: WriteValidator?, domain: Domain, keys: [String], contents: [String: PlistValue],
                           force: Bool) throws -> [Finding] {
        guard let validator else { return [] }
        var notes: [Finding] = []
        for key in keys {
            guard let value = contents[key], let finding = validator.check(domain: domain.description, key: key, value: value) else { continue }
            if finding.severity == .error && !force {
                throw CommandFailure.failure("\(finding.message) [\(finding.rule)]\nDefaults have not been changed (use --force to write anyway).")
            }
            if finding.severity != .info { notes.append(finding) }
        }
        return notes
    }

    func reportWriteNotes(_ notes: [Finding]) {
        for n in notes {
            let suffix = n.severity == .error ? " (written anyway: --force)" : ""
            console.err("defaults: warning: \(n.message) [\(n.rule)]\(suffix)\n")
        }
    }

    /// `validate D`: lists stored values that break the domain's schema.
    func validate(_ args: [String]) throws {
        guard !args.isEmpty else { throw CommandFailure.usage("validate needs a domain") }
        if args.count > 1 { throw Self.unexpected(args[1]) }
        let domain = try self.domain(args, verb: "validate")
        let contents = try store.read(domain, scope: options.scope) ?? [:]
        guard let validator = try validator(for: domain, keys: Array(contents.keys)) else {
            throw CommandFailure.failure("no settings bundle for domain \(domain) (install the app, register one under \(SettingsSchemaLookup.registeredDirectory(root: root)), or pass --settings-bundle)")
        }
        let found = validator.violations(domain: domain.description, contents: contents)
        for f in found { console.out("\(f.severity.rawValue): \(f.message) [\(f.rule)]\n") }
        let errors = found.filter { $0.severity == .error }.count
        if errors > 0 {
            throw CommandFailure.failure("\(errors) stored value(s) of \(domain) break its settings schema")
        }
    }

    /// `range D K`: what the schema lets `write` store under the key.
    func range(_ args: [String]) throws {
        guard args.count >= 2 else { throw CommandFailure.usage("range needs a domain and a key") }
        if args.count > 2 { throw Self.unexpected(args[2]) }
        let domain = try self.domain(args, verb: "range")
        guard let validator = try validator(for: domain, keys: [args[1]]) else {
            throw CommandFailure.failure("no settings bundle for domain \(domain)")
        }
        guard let lines = validator.range(of: args[1]) else {
            throw CommandFailure.failure("key \(args[1]) is not declared in the settings schema of \(domain); any value is stored")
        }
        console.out(lines.joined(separator: "\n") + "\n")
    }

    /// `read --effective D K [-Arg value…]`: the value through the search
    /// list (argument → application → global → registration) and its layer.
    func readEffective(_ args: [String]) throws {
        guard args.count >= 2 else { throw CommandFailure.usage("read --effective needs a domain and a key") }
        let domain = try self.domain(args, verb: "read")
        let key = args[1]
        let extra = Array(args.dropFirst(2))
        if extra.count % 2 != 0 || stride(from: 0, to: extra.count, by: 2).contains(where: { !extra[$0].hasPrefix("-") }) {
            throw Self.unexpected(extra.first { !$0.hasPrefix("-") } ?? extra.last!)
        }
        var defaults = UserDefaults(store: store, domain: domain, arguments: UserDefaults.argumentDomain(from: extra))
        if let bundle = try schemaLookup.bundle(for: domain, idiom: options.idiom ?? .phone) {
            defaults.register(settingsBundle: bundle, idiom: options.idiom ?? .phone)
        }
        guard let resolved = try defaults.resolve(key) else {
            throw CommandFailure.failure("The domain/default pair of (\(pairName(domain)), \(key)) does not exist in any layer")
        }
        if options.format == .json {
            // One JSON object, so scripts get the value and its layer together.
            var value = String(decoding: try PlistCodec.encode(resolved.value, format: .json), as: UTF8.self)
            while value.hasSuffix("\n") { value.removeLast() }
            console.out("{\"layer\": \(PlistCodec.jsonStringLiteral(resolved.layer.rawValue)), \"value\": \(value)}\n")
        } else {
            try printValue(resolved.value, topLevel: true)
            console.out("(layer: \(resolved.layer.rawValue))\n")
        }
    }

    /// `lint [--json] [--strict] [--profile apple|iask] [--idiom phone|pad] [--schema FILE] <bundle|domain>`.
    func lint(_ args: [String]) throws {
        var json = false, strict = false
        var profile = Profile.apple
        var idioms = options.idiom.map { [$0] } ?? Idiom.allCases
        var schema = Schema.builtIn
        var target: String?
        var rest = args[...]
        while let arg = rest.popFirst() {
            switch arg {
            case "--json": json = true
            case "--strict": strict = true
            case "--profile":
                guard let v = rest.popFirst(), let p = Profile(rawValue: v) else {
                    throw CommandFailure.usage("option --profile needs apple or iask")
                }
                profile = p
            case "--idiom":
                guard let v = rest.popFirst(), let i = Idiom(rawValue: v) else { throw CommandFailure.usage("option --idiom needs phone or pad") }
                idioms = [i]
            case "--schema":
                guard let v = rest.popFirst() else { throw CommandFailure.usage("option --schema needs a file") }
                let bytes: [UInt8]?
                do { bytes = try FileSystem.readFileIfPresent(v) } catch { throw CommandFailure.failure("cannot read schema \(v): \(error.reason)") }
                guard let bytes else { throw CommandFailure.failure("cannot read schema \(v): no such file") }
                schema = try Schema.load(bytes)
            default:
                if arg.hasPrefix("-") && arg != "-globalDomain" { throw CommandFailure.usage("unknown option \(arg) for lint") }
                if target != nil { throw Self.unexpected(arg) }
                target = arg
            }
        }
        guard let target else { throw CommandFailure.usage("lint needs a Settings.bundle path or a domain") }
        let bundle: SettingsBundle
        if FileSystem.isDirectory(target) {
            bundle = try SettingsBundle(path: target)
        } else {
            let domain = try Domain(argument: target)
            guard let b = try schemaLookup.bundle(for: domain, governing: false) else {
                throw CommandFailure.failure("\(target) is neither a settings bundle directory nor a domain with one")
            }
            bundle = b
        }
        var report = Linter(schema: schema, profile: profile).lint(bundle, idioms: idioms)
        if strict { report = report.strict() }
        let (e, w, i) = (report.count(.error), report.count(.warning), report.count(.info))
        if json {
            let q = PlistCodec.jsonStringLiteral
            var out = "{\n  \"version\": 1,\n  \"bundle\": \(q(bundle.path)),\n  \"profile\": \(q(profile.rawValue)),\n"
            out += "  \"strict\": \(strict),\n  \"errors\": \(e),\n  \"warnings\": \(w),\n  \"infos\": \(i),\n  \"findings\": ["
            out += report.findings.isEmpty ? "]\n}\n" : "\n" + report.findings.map { "    " + $0.json }.joined(separator: ",\n") + "\n  ]\n}\n"
            console.out(out)
        } else {
            for f in report.findings { console.out(f.text + "\n") }
            console.out("\(e) error(s), \(w) warning(s), \(i) info(s)" + (strict ? " (--strict: warnings count as errors)" : "") + "\n")
        }
        if e > 0 { throw CommandFailure.failure("\(bundle.path) has \(e) error(s)") }
    }
}
