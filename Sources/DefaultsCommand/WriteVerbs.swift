import AppHomeSystem
import CommandSupport
import Preferences
import PropertyList
import SettingsBundle

extension DefaultsCommand {
    /// `write D '<dict>'` and `write D K <value…>`.
    func write(_ arguments: [String]) throws {
        var args = arguments
        var force = options.force
        if args.first == "--force" { force = true; args.removeFirst() }
        let domain = try self.domain(args, verb: "write")
        guard args.count >= 2 else { throw CommandFailure.usage("write needs a key and a value, or a dictionary") }
        if args.count == 2 {
            // The whole domain is replaced by a dictionary literal.
            let rep: PlistValue
            do throws(PlistError) { rep = try OldStyleText.parse(args[1]) } catch {
                throw ValueArguments.unparsable(args[1], error)
            }
            guard case .dictionary(let replacement) = rep else {
                throw CommandFailure.failure("Rep argument is not a dictionary\nDefaults have not been changed.")
            }
            reportWriteNotes(try store.commit(domain, scope: options.scope, options: writeOptions(force: force, keys: replacement.keys.map(\.string))) { $0 = replacement })
            return
        }
        let key = args[1]
        let path = try keyPath(key)
        let request = try ValueArguments.parse(Array(args[2...]))
        do {
            try write(request, key: key, path: path, domain: domain, force: force)
        } catch PreferencesError.policyViolation(let message) {
            // An untyped value is a string; when a typed flag would make it pass, say which.
            guard args.count == 3, case .set(.string(let text)) = request, text == args[2],
                  let typed = typedSuggestion(text, key: path.components[0], domain: domain) else {
                throw PreferencesError.policyViolation(message)
            }
            let command = "defaults write \(args[0]) \(Self.shellWord(key)) \(typed) \(Self.shellWord(text))"
            throw PreferencesError.policyViolation(message.replacing(
                "(use --force to write anyway).", with: "(to store it as that type: \(command))."))
        }
    }

    /// The typed flag (`-int`, `-float`, `-bool`) under which `text` would
    /// pass the schema of `key`, or `nil` when none would.
    func typedSuggestion(_ text: String, key: String, domain: Domain) -> String? {
        var candidates: [(String, PlistValue)] = []
        if let n = Int64(text) { candidates.append(("-int", .integer(Int128(n)))) }
        if let x = Double(text), x.isFinite { candidates.append(("-float", .real(x))) }
        switch text.lowercased() {
        case "yes", "true": candidates.append(("-bool", .bool(true)))
        case "no", "false": candidates.append(("-bool", .bool(false)))
        default: break
        }
        guard !candidates.isEmpty, let validator = try? validator(for: domain, keys: [key]) else { return nil }
        return candidates.first { _, value in
            guard let finding = validator.check(domain: domain.description, key: key, value: value) else { return true }
            return finding.severity != .error
        }?.0
    }

    /// `word` as one shell word: as it is when it is plain, else in single quotes.
    static func shellWord(_ word: String) -> String {
        let plain = !word.isEmpty && word.unicodeScalars.allSatisfy {
            ($0.isASCII && ($0.properties.isAlphabetic || $0.properties.numericType != nil)) || "-_.:/@%+=,".unicodeScalars.contains($0)
        }
        return plain ? word : "'" + word.replacing("'", with: "'\\''") + "'"
    }

    private func write(_ request: WriteRequest, key: String, path: KeyPath, domain: Domain, force: Bool) throws {
        let notes = try store.commit(domain, scope: options.scope, options: writeOptions(force: force, keys: [path.components[0]])) { contents in
            switch request {
            case .set(let value):
                try path.set(value, in: &contents)
            case .arrayAdd(let items):
                var array: [PlistValue] = []
                if let existing = path.value(in: contents) {
                    guard case .array(let a) = existing else {
                        throw CommandFailure.failure("Value for key \(key) is not an array; cannot append.  Leaving defaults unchanged.")
                    }
                    array = a
                }
                try path.set(.array(array + items), in: &contents)
            case .dictAdd(let entries):
                var dict: [PlistKey: PlistValue] = [:]
                if let existing = path.value(in: contents) {
                    guard case .dictionary(let d) = existing else {
                        throw CommandFailure.failure("Value for key \(key) is not a dictionary; cannot add.  Leaving defaults unchanged.")
                    }
                    dict = d
                }
                dict.merge(entries) { _, new in new }
                try path.set(.dictionary(dict), in: &contents)
            }
        }
        reportWriteNotes(notes)
    }

    /// What the write policy is told of a write: `--force`, and the idiom
    /// the settings schema is read for.
    func writeOptions(force: Bool, keys: [String]) -> WriteOptions {
        WriteOptions(force: force, idiom: options.idiom?.rawValue, checkedKeys: keys.sorted())
    }

    /// `rename D OLD NEW`: the value moves to the new key (overwriting it).
    func rename(_ args: [String]) throws {
        guard args.count >= 3 else { throw CommandFailure.usage("rename needs a domain, an old key and a new key") }
        if args.count > 3 { throw Self.unexpected(args[3]) }
        let domain = try self.domain(args, verb: "rename")
        let old = try keyPath(args[1]), new = try keyPath(args[2])
        try store.update(domain, scope: options.scope) { contents in
            guard let value = old.value(in: contents) else {
                throw CommandFailure.failure("Key \(args[1]) does not exist in domain \(domain); leaving defaults unchanged")
            }
            _ = try old.remove(from: &contents)
            try new.set(value, in: &contents)
        }
    }

    /// `delete D` and `delete D K`.
    func delete(_ args: [String]) throws {
        if args.count > 2 { throw Self.unexpected(args[2]) }
        let domain = try self.domain(args, verb: "delete")
        let notFound = CommandFailure.failure("Domain (\(domain)) not found.\nDefaults have not been changed.")
        let path = args.count == 2 ? try keyPath(args[1]) : nil
        try store.update(domain, scope: options.scope) { contents in
            // The store removes empty domains, so empty means "does not exist".
            guard !contents.isEmpty else { throw notFound }
            guard let path else { contents = [:]; return }
            guard try path.remove(from: &contents) else { throw notFound }
        }
    }

    /// `import D <path|->`: merges a property list file into the domain.
    func importDomain(_ arguments: [String]) throws {
        var args = arguments
        var force = options.force
        if args.first == "--force" { force = true; args.removeFirst() }
        let domain = try self.domain(args, verb: "import")
        guard args.count >= 2 else { throw CommandFailure.failure("Need a path to read from") }
        if args.count > 2 { throw Self.unexpected(args[2]) }
        let source = args[1]
        let bytes: [UInt8]
        if source == "-" {
            bytes = console.readStandardInput()
        } else {
            do {
                guard let b = try FileSystem.readFileIfPresent(source) else {
                    throw CommandFailure.failure("Could not read data from \(source)")
                }
                bytes = b
            } catch let error as SystemError {
                throw CommandFailure.failure("Could not read data from \(source): \(error.reason)")
            }
        }
        let value: PlistValue
        do {
            value = try Self.importedValue(bytes, named: source, format: options.format)
        } catch {
            throw CommandFailure.failure("Could not parse property list from \(source) due to \(error)")
        }
        guard case .dictionary(let entries) = value else {
            throw CommandFailure.failure("Property list \(source) was not a dictionary\nDefaults have not been changed.")
        }
        // The store's write policy checks imported keys as it checks `write`.
        reportWriteNotes(try store.commit(domain, scope: options.scope, options: writeOptions(force: force, keys: entries.keys.map(\.string))) {
            $0.merge(entries) { _, new in new }
        })
    }

    /// The value of an imported file: typed JSON with `--format json` or a
    /// `.json` name; otherwise the format the bytes show. Text that opens
    /// like an old-style plist but is not one is tried as JSON, so JSON on
    /// standard input needs no flag; the old-style error is the one
    /// reported when neither reads.
    static func importedValue(_ bytes: [UInt8], named source: String, format: OutputFormat,
                              refusingDuplicateKeys: Bool = false) throws(PlistError) -> PlistValue {
        if format == .json || source.hasSuffix(".json") { return try PlistCodec.decode(bytes, format: .json) }
        let detected = PlistCodec.detectFormat(bytes)
        do {
            return try PlistCodec.decode(bytes, format: detected, refusingDuplicateKeys: refusingDuplicateKeys)
        } catch {
            guard detected == .openStep, let json = try? PlistCodec.decode(bytes, format: .json) else { throw error }
            return json
        }
    }

    /// `export D <path|->`: binary plist to a path, XML to stdout; `--format
    /// xml|json` chooses the format of either.
    func exportDomain(_ args: [String]) throws {
        let domain = try self.domain(args, verb: "export")
        guard args.count >= 2 else { throw CommandFailure.failure("Need a path to write to") }
        if args.count > 2 { throw Self.unexpected(args[2]) }
        guard let contents = try store.read(domain, scope: options.scope) else {
            throw CommandFailure.failure("The domain \(domain) does not exist")
        }
        if args[1] == "-" {
            let format: PlistFormat = options.format == .json ? .json : .xml
            console.out(String(decoding: try PlistCodec.encode(.dictionary(contents), format: format), as: UTF8.self))
            return
        }
        do {
            // Binary, as on macOS, unless --format asks for xml or json.
            let format: PlistFormat = !options.given.contains("--format") ? .binary : options.format == .json ? .json : .xml
            let bytes = try PlistCodec.encode(.dictionary(contents), format: format)
            try FileSystem.writeAtomically(bytes, to: args[1])
        } catch let error as SystemError {
            throw CommandFailure.failure("Could not export domain \(domain) to \(args[1]) due to \(error.reason)")
        }
    }
}
