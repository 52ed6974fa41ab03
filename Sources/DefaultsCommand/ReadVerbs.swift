import AppHomeSystem
import CommandSupport
import KeyedArchive
import Preferences
import PropertyList

extension DefaultsCommand {
    /// `read`, `read D`, `read D K`.
    func read(_ args: [String]) throws {
        if args.first == "--effective" { return try readEffective(Array(args.dropFirst())) }
        if args.first == "--unarchive" { return try read(Array(args.dropFirst()), unarchive: true) }
        try read(args, unarchive: false)
    }

    /// `read`; with `unarchive`, a value that is a keyed archive (data holding one,
    /// as `UserDefaults.set(_:URL)` and archived colours store it) is shown as its
    /// object graph (`Schemas/keyed-archive.md`) instead of as data.
    private func read(_ args: [String], unarchive: Bool) throws {
        if args.count > 2 { throw Self.unexpected(args[2]) }
        func printValue(_ value: PlistValue, topLevel: Bool) throws {
            try self.printValue(unarchive ? KeyedArchiveGraphForm.unarchivingValues(in: value) : value, topLevel: topLevel)
        }
        if args.isEmpty {
            var all: [PlistKey: PlistValue] = [:]
            for name in try store.domainNames() {
                if let contents = try store.read(.named(name), scope: options.scope) { all[name] = .dictionary(contents) }
            }
            if let global = try store.read(.global, scope: options.scope) { all[Domain.globalDisplayName] = .dictionary(global) }
            try printValue(.dictionary(all), topLevel: false)
            return
        }
        let domain = try self.domain(args, verb: "read")
        guard let contents = try store.read(domain, scope: options.scope), !contents.isEmpty else {
            throw CommandFailure.failure("Domain \(domain) does not exist")
        }
        guard args.count == 2 else {
            try printValue(.dictionary(contents), topLevel: false)
            return
        }
        guard let value = try keyPath(args[1]).value(in: contents) else {
            throw CommandFailure.failure("The domain/default pair of (\(pairName(domain)), \(args[1])) does not exist")
        }
        try printValue(value, topLevel: true)
    }

    /// `read-type D K`.
    func readType(_ args: [String]) throws {
        guard args.count >= 2 else { throw CommandFailure.usage("read-type needs a domain and a key") }
        if args.count > 2 { throw Self.unexpected(args[2]) }
        let domain = try self.domain(args, verb: "read-type")
        guard let contents = try store.read(domain, scope: options.scope),
              let value = try keyPath(args[1]).value(in: contents) else {
            throw CommandFailure.failure("The domain/default pair of (\(pairName(domain)), \(args[1])) does not exist")
        }
        if options.format == .text {
            console.out("Type is \(value.typeName)\n")
        } else {
            // xml and json: the type's name as a string value of that format.
            try printValue(.string(value.typeName), topLevel: true)
        }
    }

    /// `find WORD`: domains whose name, keys or string values contain the
    /// word, case-insensitively.
    func find(_ args: [String]) throws {
        guard let word = args.first else { throw CommandFailure.usage("find needs a word") }
        if args.count > 1 { throw Self.unexpected(args[1]) }
        let needle = word.lowercased()
        var domains: [(String, Domain)] = try store.domainNames().map { ($0, .named($0)) }
        domains.append((Domain.globalDisplayName, .global))
        var found = false
        // --format xml|json: one dictionary, each matching domain's matching entries.
        var structured: [PlistKey: PlistValue] = [:]
        for (name, domain) in domains {
            guard let contents = try store.read(domain, scope: options.scope) else { continue }
            let matches: [PlistKey: PlistValue]
            if name.lowercased().contains(needle) {
                matches = contents
            } else {
                matches = contents.filter { key, value in key.string.lowercased().contains(needle) || Self.contains(value, needle) }
            }
            guard !matches.isEmpty else { continue }
            found = true
            if options.format == .text {
                console.out("Found \(matches.count) keys in domain '\(name)': \(OldStylePrinter.describe(.dictionary(matches)))\n")
            } else {
                structured[PlistKey(name)] = .dictionary(matches)
            }
        }
        if options.format != .text { try printValue(.dictionary(structured), topLevel: false) }
        if !found { console.err("defaults: No domain, key, nor value containing '\(word)'\n") }
    }

    static func contains(_ value: PlistValue, _ needle: String) -> Bool {
        switch value {
        case .string(let s): return s.lowercased().contains(needle)
        case .array(let items): return items.contains { contains($0, needle) }
        case .dictionary(let d): return d.contains { $0.key.string.lowercased().contains(needle) || contains($0.value, needle) }
        default: return false
        }
    }
}
