import Keychain

extension SecurityCommand {
    /// A query from the match options of `o`.
    func query(_ cls: ItemClass, _ o: VerbOptions) throws(SecurityFailure) -> ItemQuery {
        var q = ItemQuery(itemClass: cls)
        q.accessGroup = accessGroup
        q.account = o.values["a"]
        q.label = o.values["l"]
        q.comment = o.values["j"]
        q.description = o.values["D"]
        switch cls {
        case .genericPassword:
            q.service = o.values["s"]
            q.generic = o.values["G"].map { Array($0.utf8) }
        case .internetPassword:
            q.server = o.values["s"]
            q.protocol = try o.values["r"].map { (c) throws(SecurityFailure) in try fourCharCode(c, "protocol") }
            q.authenticationType = try o.values["t"].map { (c) throws(SecurityFailure) in try fourCharCode(c, "authentication type") }
            q.port = try o.values["P"].map { (p) throws(SecurityFailure) in try port(p) }
            q.path = o.values["p"]
            q.securityDomain = o.values["d"]
        }
        return q
    }

    func fourCharCode(_ text: String, _ what: String) throws(SecurityFailure) -> String {
        guard text.utf8.count == 4, text.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else {
            throw .securityUsage("the \(what) must be a four-character code, such as \(what == "protocol" ? "htps" : "dflt"), not '\(text)'")
        }
        return text
    }

    func port(_ text: String) throws(SecurityFailure) -> Int {
        guard let n = Int(text), n >= 0, n <= 65535 else { throw .securityUsage("the port must be a number from 0 to 65535, not '\(text)'") }
        return n
    }

    /// The new secret: `-w <secret>` (with a warning unless it is empty);
    /// else, when standard input is not a terminal, all of it less one final
    /// line end, with or without a trailing `-w` (macOS's "prompt me": a
    /// pipe answers it); else a prompt typed twice.
    ///
    /// - Throws: a failure for an empty standard input (nothing, or only a
    ///   line end): an empty secret is stored only when asked for with `-w ''`.
    func newSecret(_ o: VerbOptions) throws(SecurityFailure) -> SecureBytes {
        if let s = o.secretArgument {
            if !s.isEmpty {
                console.err("security: warning: a secret given with -w is visible to other processes; pipe it on standard input or end the line with -w to be prompted\n")
            }
            return SecureBytes(utf8: s)
        }
        if !environment.standardInputIsTerminal {
            let secret = console.readSecretLine()
            guard secret.count > 0 else {
                throw .failure("standard input is empty: no secret to store (pipe the secret in, or pass -w '' to store an empty one)")
            }
            return secret
        }
        guard let first = prompter.readSecret(prompt: "password data for new item: ") else {
            throw .failure("cannot prompt for the secret: no terminal (pipe it on standard input)")
        }
        guard let second = prompter.readSecret(prompt: "retype password for new item: ") else {
            throw .failure("cannot prompt for the secret: no terminal (pipe it on standard input)")
        }
        guard first.constantTimeEquals(second) else { throw .failure("the passwords do not match") }
        return first
    }

    func add(_ cls: ItemClass, _ o: VerbOptions) throws {
        var a = ItemAttributes(itemClass: cls, accessGroup: accessGroup)
        if let name = o.accessibility {
            guard let c = Accessibility(name: name) else {
                throw SecurityFailure.securityUsage("unknown accessibility class '\(name)' (one of \(Accessibility.allCases.map(\.name).joined(separator: ", ")))")
            }
            a.accessibility = c
        }
        a.account = o.values["a"] ?? ""
        a.comment = o.values["j"]
        a.description = o.values["D"]
        switch cls {
        case .genericPassword:
            guard let s = o.values["s"] else { throw SecurityFailure.securityUsage("missing service (-s)") }
            guard o.values["a"] != nil else { throw SecurityFailure.securityUsage("missing account (-a)") }
            a.service = s
            a.generic = o.values["G"].map { Array($0.utf8) }
            a.label = o.values["l"] ?? s
        case .internetPassword:
            guard let s = o.values["s"] else { throw SecurityFailure.securityUsage("missing server (-s)") }
            let q = try query(cls, o)
            a.server = s
            a.protocol = q.protocol ?? ""
            a.port = q.port ?? 0
            a.path = q.path ?? ""
            a.securityDomain = q.securityDomain ?? ""
            a.authenticationType = q.authenticationType ?? "dflt"
            a.label = o.values["l"] ?? s
        }
        let secret = try newSecret(o)
        do throws(KeychainError) {
            try keychain.add(a, data: secret, context: context)
        } catch .duplicateItem where o.flags.contains("U") {
            var q = ItemQuery(itemClass: cls)
            q.accessGroup = accessGroup ?? context.accessGroups[0]
            q.account = a.account; q.service = cls == .genericPassword ? a.service : nil
            if cls == .internetPassword {
                q.server = a.server; q.protocol = a.protocol; q.port = a.port; q.path = a.path
                q.authenticationType = a.authenticationType; q.securityDomain = a.securityDomain
            }
            var changes = ItemChanges()
            changes.data = secret
            changes.label = .some(a.label)
            if o.values["j"] != nil { changes.comment = .some(a.comment) }
            if o.values["D"] != nil { changes.description = .some(a.description) }
            if o.values["G"] != nil { changes.generic = .some(a.generic) }
            if o.accessibility != nil { changes.accessibility = a.accessibility }
            do throws(KeychainError) { try keychain.update(q, with: changes, context: context) } catch {
                throw SecurityFailure.keychain(error, function: "SecItemUpdate")
            }
        } catch {
            throw SecurityFailure.keychain(error, function: "SecKeychainItemCreateFromContent (<default>)")
        }
    }

    func find(_ cls: ItemClass, _ o: VerbOptions) throws {
        var q = try query(cls, o)
        let wantSecret = o.flags.contains("w") || o.flags.contains("g")
        q.returnAttributes = !o.flags.contains("w")
        q.returnData = wantSecret
        let found: ItemResult
        do throws(KeychainError) { found = try keychain.copyMatching(q, context: context)[0] } catch {
            throw SecurityFailure.keychain(error, function: "SecKeychainSearchCopyNext")
        }
        if o.flags.contains("w"), let data = found.data {
            console.out(SecretText.plain(data))
            return
        }
        if let a = found.attributes { console.out(Listing.item(a, directory: keychain.directory)) }
        if o.flags.contains("g"), let data = found.data {
            console.err("password: " + Listing.quoted(data) + "\n")
        }
    }

    func delete(_ cls: ItemClass, _ o: VerbOptions) throws {
        var q = try query(cls, o)
        q.returnAttributes = true
        let first: ItemAttributes
        do throws(KeychainError) { first = try keychain.copyMatching(q, context: context)[0].attributes! } catch {
            throw SecurityFailure.keychain(error, function: "SecKeychainSearchCopyNext")
        }
        // macOS deletes the first match only: pin it by its primary key.
        var exact = ItemQuery(itemClass: cls)
        exact.accessGroup = first.accessGroup
        exact.account = first.account
        exact.synchronizable = first.synchronizable ? .yes : .no
        switch cls {
        case .genericPassword: exact.service = first.service
        case .internetPassword:
            exact.server = first.server; exact.protocol = first.protocol; exact.port = first.port; exact.path = first.path
            exact.authenticationType = first.authenticationType; exact.securityDomain = first.securityDomain
        }
        do throws(KeychainError) { try keychain.delete(exact, context: context) } catch {
            throw SecurityFailure.keychain(error, function: "SecKeychainItemDelete")
        }
        console.out(Listing.item(first, directory: keychain.directory) + "password has been deleted.\n")
    }

    func dump(_ o: VerbOptions) throws {
        for cls in ItemClass.allCases {
            var q = ItemQuery(itemClass: cls)
            q.accessGroup = accessGroup
            q.matchLimit = .all
            q.synchronizable = .any
            q.returnAttributes = true
            q.returnData = o.flags.contains("d")
            let found: [ItemResult]
            do throws(KeychainError) { found = try keychain.copyMatching(q, context: context) } catch .itemNotFound { continue } catch {
                throw SecurityFailure.keychain(error, function: "SecKeychainSearchCopyNext")
            }
            for r in found {
                var text = Listing.item(r.attributes!, directory: keychain.directory, accessible: true)
                if let d = r.data { text += "data:\n" + Listing.quoted(d) + "\n" }
                console.out(text)
            }
        }
    }
}
