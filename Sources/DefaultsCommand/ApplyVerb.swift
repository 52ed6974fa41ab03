import AppHomeSystem
import CommandSupport
import Containers
import Preferences
import PropertyList
import SettingsBundle

/// A desired state for `defaults apply` (`Schemas/apply.md`): for each
/// domain, keys to set, keys to delete, and whether the domain must hold
/// exactly the keys given.
struct DesiredState: Equatable {
    struct DomainState: Equatable {
        /// The domain's name as the file gives it (how changes name it).
        var name: String
        var domain: Domain
        var set: [PlistKey: PlistValue]
        var delete: [String]
        var exact: Bool

        /// The contents `current` becomes.
        func contents(from current: [PlistKey: PlistValue]) -> [PlistKey: PlistValue] {
            var result = exact ? [:] : current
            for k in delete { result[k] = nil }
            result.merge(set) { _, new in new }
            return result
        }
    }

    /// The format version this build reads (`$version`).
    static let version = 1
    /// Domains in name order.
    var domains: [DomainState]

    /// The domain names that are options of `defaults`, never domains.
    static let optionNames: Set<PlistKey> = ["-currentHost", "-host", "-app"]

    /// Reads the desired state from a decoded plist.
    ///
    /// - Parameter canonical: the domain a path names
    ///   (``DomainResolver/canonical(_:)``): a domain and its file's path
    ///   are one domain, so giving both is an error as giving one twice is.
    /// - Throws: ``CommandFailure`` naming the file and what is wrong.
    init(_ value: PlistValue, file: String, canonical: (Domain) -> Domain = { $0 }) throws(CommandFailure) {
        func bad(_ why: String) -> CommandFailure { .failure("\(file): \(why); defaults unchanged") }
        guard case .dictionary(let top) = value else { throw bad("the top level must be a dictionary of domains") }
        if let v = top["$version"] {
            guard case .integer(let n) = v else { throw bad("$version must be an integer") }
            if n > Int64(Self.version) { throw bad("$version \(n) is newer than this defaults reads (\(Self.version))") }
            if n < 1 { throw bad("$version must be at least 1") }
        }
        var domains: [DomainState] = []
        for topKey in top.keys.sorted() where topKey != "$version" {
            let name = topKey.string
            if name.hasPrefix("$") { throw bad("unknown directive \(name)") }
            if Self.optionNames.contains(topKey) {
                throw bad("\(name) is an option of defaults, not a domain; to apply to this host's domains, run 'defaults -currentHost apply \(file)'")
            }
            let domain: Domain
            do { domain = try Domain(argument: name) } catch { throw bad(error.description) }
            guard case .dictionary(let entries) = top[topKey]! else { throw bad("domain \(name) must be a dictionary of keys") }
            var state = DomainState(name: name, domain: domain, set: [:], delete: [], exact: false)
            for (key, v) in entries {
                switch key {
                case "$delete":
                    guard case .array(let items) = v else { throw bad("$delete of \(name) must be an array of keys") }
                    for item in items {
                        guard case .string(let k) = item else { throw bad("$delete of \(name) must be an array of keys") }
                        state.delete.append(k)
                    }
                case "$exact":
                    guard case .bool(let b) = v else { throw bad("$exact of \(name) must be a boolean") }
                    state.exact = b
                default:
                    if key.string.hasPrefix("$") { throw bad("unknown directive \(key) in domain \(name)") }
                    state.set[key] = v
                }
            }
            if let both = state.delete.sorted().first(where: { state.set[$0] != nil }) {
                throw bad("key \(both) of \(name) is both set and in $delete")
            }
            if let other = domains.first(where: { canonical($0.domain) == canonical(domain) }) {
                if other.name.utf8.elementsEqual(name.utf8) { throw bad("domain \(FileNames.escaped(name)) is given twice") }
                throw bad("domains \(FileNames.escaped(other.name)) and \(FileNames.escaped(name)) are one domain (a domain and its file's path); give it once")
            }
            domains.append(state)
        }
        self.domains = domains
    }
}

/// One change `apply` makes (or, with `--dry-run`, would make).
struct AppliedChange: Equatable {
    enum Kind: String { case added, changed, removed }
    var domain: String
    var key: String
    var kind: Kind
    var old: PlistValue?
    var new: PlistValue?

    /// The changes from `old` to `new`, in key order.
    static func between(_ old: [PlistKey: PlistValue], _ new: [PlistKey: PlistValue], domain: String) -> [AppliedChange] {
        Set(old.keys).union(new.keys).sorted().compactMap { k in
            switch (old[k], new[k]) {
            case (nil, let n?): return AppliedChange(domain: domain, key: k.string, kind: .added, old: nil, new: n)
            case (let o?, nil): return AppliedChange(domain: domain, key: k.string, kind: .removed, old: o, new: nil)
            case (let o?, let n?) where o != n: return AppliedChange(domain: domain, key: k.string, kind: .changed, old: o, new: n)
            default: return nil
            }
        }
    }

    /// The line `apply` prints: values in the old-style notation, on one line.
    /// The domain and the key are escaped (``FileNames/escaped(_:)-(String)``):
    /// a line end in a key cannot fake a line of output.
    var text: String {
        let o = old.map(Self.oneLine) ?? "", n = new.map(Self.oneLine) ?? ""
        let domain = FileNames.escaped(self.domain), key = FileNames.escaped(self.key)
        switch kind {
        case .added: return "\(domain): added \(key) = \(n)"
        case .changed: return "\(domain): changed \(key) = \(n) (was \(o))"
        case .removed: return "\(domain): removed \(key) (was \(o))"
        }
    }

    /// The JSON object of the change (values in AppHome's typed JSON).
    func json() throws -> String {
        let q = PlistCodec.jsonStringLiteral
        var fields = ["\"domain\": \(q(domain))", "\"key\": \(q(key))", "\"action\": \(q(kind.rawValue))"]
        if let old { fields.append("\"old\": \(try Self.jsonValue(old))"); fields.append("\"old_text\": \(q(Self.oneLine(old)))") }
        if let new { fields.append("\"new\": \(try Self.jsonValue(new))"); fields.append("\"new_text\": \(q(Self.oneLine(new)))") }
        return "{" + fields.joined(separator: ", ") + "}"
    }

    static func jsonValue(_ value: PlistValue) throws -> String {
        var text = String(decoding: try PlistCodec.encode(value, format: .json), as: UTF8.self)
        while text.hasSuffix("\n") { text.removeLast() }
        return text
    }

    /// ``OldStylePrinter/describe(_:)`` with its lines joined.
    static func oneLine(_ value: PlistValue) -> String {
        OldStylePrinter.describe(value).split(separator: "\n").map { $0.drop { $0 == " " } }.joined(separator: " ")
    }
}

extension DefaultsCommand {
    /// `apply FILE [--dry-run] [--json]`: brings every domain of FILE to its
    /// desired state. Every domain is checked (its settings schema, the
    /// managed keys) before any is written; each domain then commits
    /// atomically through the store. Applying the same file again changes
    /// nothing.
    func apply(_ args: [String]) throws {
        var scanner = ArgumentScanner(args)
        let flags: [ArgumentScanner.Option] = [.init("--dry-run"), .init("--json")]
        let unknown = { (arg: String) -> CommandFailure? in arg == "-" ? nil : .usage("unknown option \(arg) for apply") }
        var matches = try scanner.leadingOptions(flags, unknown: unknown)
        guard let file = scanner.next() else { throw CommandFailure.usage("apply needs a file") }
        matches += try scanner.leadingOptions(flags, unknown: unknown)
        if let extra = scanner.rest.first { throw Self.unexpected(extra) }
        let dryRun = matches.contains { $0.name == "--dry-run" }, json = matches.contains { $0.name == "--json" }

        let apps = installedApps()
        let resolver = Self.resolver(root: root, registry: apps)
        let desired = try DesiredState(try readDesiredFile(file), file: file, canonical: { resolver.canonical($0) })
        // Validate everything first: a refusal in any domain writes nothing at all.
        let policy = validationPolicy()
        var planned: [AppliedChange] = []
        for d in desired.domains {
            let current = try store.read(d.domain, scope: options.scope) ?? [:]
            let new = d.contents(from: current)
            if new == current { continue }
            _ = try policy.check(d.domain, old: current, new: new, options: writeOptions(force: options.force, keys: d.set.keys.map(\.string)))
            try ChangeSet(from: current, to: new).checkDepth(of: d.domain)
            planned += AppliedChange.between(current, new, domain: d.name)
        }
        var changes = planned
        var failure: (any Error)? = nil
        if !dryRun {
            (changes, failure) = try commitAllOrNothing(desired, planned: planned, resolver: resolver, policy: policy)
        }
        if json {
            let items = try changes.map { try $0.json() }
            console.out("{\"changed\": \(!changes.isEmpty), \"dry_run\": \(dryRun), \"changes\": [" + items.joined(separator: ", ") + "]}\n")
        } else {
            for c in changes { console.out(c.text + "\n") }
        }
        if let failure {
            throw CommandFailure.failure("\(failure); the domains of the changes listed were committed, the others will be by the next 'defaults apply' or 'apphome doctor'")
        }
    }

    /// Commits every planned domain of `desired` all or nothing
    /// (``DomainTransaction``), on the files under each domain's lock
    /// (which prefsd takes too), after finishing any apply a crash left.
    ///
    /// - Returns: the changes committed, and the failure after the first
    ///   domain was replaced, if one happened.
    func commitAllOrNothing(_ desired: DesiredState, planned: [AppliedChange], resolver: DomainResolver,
                            policy: any WritePolicy) throws -> ([AppliedChange], (any Error)?) {
        for line in DomainTransaction.recover(journalDirectory: resolver.preferencesDirectory) {
            console.err("defaults: \(line)\n")
        }
        let files = FilePreferenceStore(resolver: resolver, policy: policy)
        var items: [DomainTransaction.Item] = []
        for d in desired.domains where planned.contains(where: { $0.domain == d.name }) {
            let options = writeOptions(force: self.options.force, keys: d.set.keys.map(\.string))
            let path: String
            do { path = try files.location(of: d.domain, scope: self.options.scope) } catch { throw error }
            items.append(DomainTransaction.Item(domain: d.domain, path: path) { contents in
                let old = contents
                contents = d.contents(from: contents)
                return try policy.check(d.domain, old: old, new: contents, options: options)
            })
        }
        func changes(_ committed: [DomainTransaction.Committed]) -> [AppliedChange] {
            committed.flatMap { c in
                reportWriteNotes(c.notes)
                let name = desired.domains.first { $0.domain == c.domain }?.name ?? c.domain.description
                return AppliedChange.between(c.old, c.new, domain: name)
            }
        }
        do {
            return (changes(try DomainTransaction.run(items, journalDirectory: resolver.preferencesDirectory)), nil)
        } catch let partial as DomainTransaction.PartialFailure {
            return (changes(partial.committed), partial.error)
        }
    }

    /// The rules `apply` checks every domain against before writing any:
    /// the managed keys, then the settings schemas (the store applies its
    /// own policy again when it commits).
    func validationPolicy() -> any WritePolicy {
        let apps = installedApps()
        let schema = SettingsWritePolicy(root: root, registry: apps, explicitBundle: options.settingsBundle)
        let resolver = Self.resolver(root: root, registry: apps)
        return CanonicalDomainPolicy(managed.map { CombinedWritePolicy(ManagedWritePolicy($0), schema) } ?? schema,
                                     canonical: { resolver.canonical($0) })
    }

    /// The decoded desired-state file (`-`: standard input), in any plist
    /// format or JSON.
    func readDesiredFile(_ file: String) throws -> PlistValue {
        let bytes: [UInt8]
        if file == "-" { bytes = console.readStandardInput() } else {
            do {
                guard let b = try FileSystem.readFileIfPresent(file) else { throw CommandFailure.failure("Could not read data from \(file); defaults unchanged") }
                bytes = b
            } catch let error as SystemError {
                throw CommandFailure.failure("Could not read data from \(file): \(error.reason); defaults unchanged")
            }
        }
        // A domain (or a key) given twice is an error, never the last one silently winning.
        do { return try Self.importedValue(bytes, named: file, format: options.format, refusingDuplicateKeys: true) } catch {
            throw CommandFailure.failure("Could not parse property list from \(file) due to \(error); defaults unchanged")
        }
    }
}
