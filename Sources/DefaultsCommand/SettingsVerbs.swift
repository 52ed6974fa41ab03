import AppHomeSystem
import CommandSupport
import Containers
import Preferences
import PropertyList
import SettingsBundle

extension DefaultsCommand {
    /// Finds the settings bundle of a domain.
    var schemaLookup: SettingsSchemaLookup {
        SettingsSchemaLookup(root: root, explicit: options.settingsBundle, registry: registry)
    }


    /// The validator of `keys` in `domain`, or `nil` when the domain has no
    /// settings bundle. It comes from the compiled form of the bundle when
    /// that is fresh (one small file read), else from walking the bundle.
    func validator(for domain: Domain, keys: [String]) throws -> WriteValidator? {
        guard let bundle = try schemaLookup.bundle(for: domain, idiom: options.idiom ?? .phone) else { return nil }
        return CompiledSchemaCache(directory: SettingsSchemaLookup.compiledSchemaDirectory(root: root))
            .validator(for: bundle, idiom: options.idiom ?? .phone, keys: keys)
    }

    /// Prints what the write policy noted about a write that was stored.
    func reportWriteNotes(_ notes: [WriteNote]) {
        for n in notes {
            let suffix = n.forced ? " (written anyway: --force)" : ""
            console.err("defaults: warning: \(n.message) [\(n.rule)]\(suffix)\n")
        }
    }

    /// `validate D`: lists stored values that break the domain's schema.
    func validate(_ args: [String]) throws {
        guard !args.isEmpty else { throw CommandFailure.usage("validate needs a domain") }
        if args.count > 1 { throw Self.unexpected(args[1]) }
        let domain = try self.domain(args, verb: "validate")
        let contents = try store.read(domain, scope: options.scope) ?? [:]
        guard let validator = try validator(for: domain, keys: contents.keys.map(\.string)) else {
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
    /// list (managed → argument → application → global → registration) and its layer.
    func readEffective(_ args: [String]) throws {
        guard args.count >= 2 else { throw CommandFailure.usage("read --effective needs a domain and a key") }
        let domain = try self.domain(args, verb: "read")
        let key = args[1]
        let extra = Array(args.dropFirst(2))
        if extra.count % 2 != 0 || stride(from: 0, to: extra.count, by: 2).contains(where: { !extra[$0].hasPrefix("-") }) {
            throw Self.unexpected(extra.first { !$0.hasPrefix("-") } ?? extra.last!)
        }
        var defaults = UserDefaults(store: store, domain: domain, arguments: UserDefaults.argumentDomain(from: extra),
                                    managed: managed?.forcedValues(in: domain) ?? [:])
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
