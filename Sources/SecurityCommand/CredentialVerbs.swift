import Keychain

/// `add-credential`, `list-credentials`, `delete-credential`: the grants
/// prefsd's credential socket serves to systemd units (docs/credentials.md).
/// Grants are items of the user's login keychain, so these verbs act on it
/// only, never in an app's context.
extension SecurityCommand {
    static let credentialVerbs: Set<String> = ["add-credential", "list-credentials", "delete-credential"]

    func unit(_ o: VerbOptions, required: Bool = true) throws(SecurityFailure) -> SystemdUnitName? {
        guard let text = o.values["u"] else {
            if required { throw .securityUsage("missing unit (-u)") }
            return nil
        }
        do throws(KeychainError) { return try SystemdUnitName(text) } catch { throw .securityUsage(Self.reason(error)) }
    }

    func credentialID(_ o: VerbOptions) throws(SecurityFailure) -> CredentialID {
        guard let text = o.values["c"] else { throw .securityUsage("missing credential id (-c)") }
        do throws(KeychainError) { return try CredentialID(text) } catch { throw .securityUsage(Self.reason(error)) }
    }

    static func reason(_ error: KeychainError) -> String {
        if case .invalidParameter(let why) = error { return why }
        return error.description
    }

    /// `add-credential -u UNIT -c ID [-s service -a account | -w [secret]] [--accessibility CLASS] [-U]`.
    func addCredential(_ o: VerbOptions) throws {
        let unit = try unit(o)!
        let id = try credentialID(o)
        var accessibility = Accessibility.afterFirstUnlock
        if let name = o.accessibility {
            guard let c = Accessibility(name: name) else {
                throw SecurityFailure.securityUsage("unknown accessibility class '\(name)' (one of \(Accessibility.allCases.map(\.name).joined(separator: ", ")))")
            }
            accessibility = c
        }
        let service = o.values["s"], account = o.values["a"]
        let source: CredentialGrant.Source
        let data: SecureBytes
        switch (service, account) {
        case (let s?, let a?):
            if o.secretArgument != nil || o.promptForSecret {
                throw SecurityFailure.securityUsage("give either an item (-s service -a account) or a secret (-w or standard input), not both")
            }
            // The item must be there now; it is read at each load.
            var q = ItemQuery(itemClass: .genericPassword)
            q.accessGroup = KeychainContext.loginGroup
            q.service = s
            q.account = a
            q.returnAttributes = true
            do throws(KeychainError) { _ = try keychain.copyMatching(q, context: context) } catch {
                throw SecurityFailure.keychain(error, function: "SecKeychainSearchCopyNext")
            }
            source = .item(service: s, account: a)
            data = SecureBytes([])
        case (nil, nil):
            source = .secret
            if o.secretArgument == nil && !environment.standardInputIsTerminal {
                // A credential is a file's bytes: standard input exactly as it is.
                var bytes = console.readStandardInput()
                defer { SecureBytes.wipe(&bytes) }
                guard !bytes.isEmpty else {
                    throw SecurityFailure.failure("standard input is empty: no secret to grant (pipe the secret in, or pass -w '' for an empty one)")
                }
                data = SecureBytes(bytes)
            } else {
                data = try newSecret(o)
            }
            guard data.count <= CredentialGrant.maximumSize else {
                throw SecurityFailure.failure("the secret has \(data.count) bytes, over the 1 MiB limit of a systemd credential (\(CredentialGrant.maximumSize) bytes)")
            }
        default:
            throw SecurityFailure.securityUsage("an item is named by both its service (-s) and its account (-a)")
        }
        let grant = CredentialGrant(unit: unit, id: id, source: source, accessibility: accessibility)
        do throws(KeychainError) {
            try keychain.add(grant.attributes, data: data, context: context)
        } catch .duplicateItem where o.flags.contains("U") {
            let a = grant.attributes
            var changes = ItemChanges()
            changes.data = data
            changes.generic = .some(a.generic)
            changes.accessibility = accessibility
            do throws(KeychainError) { try keychain.update(CredentialGrant.query(unit: unit, id: id), with: changes, context: context) } catch {
                throw SecurityFailure.keychain(error, function: "SecItemUpdate")
            }
        } catch {
            throw SecurityFailure.keychain(error, function: "SecKeychainItemCreateFromContent (<default>)")
        }
    }

    /// `list-credentials [-u UNIT]`: one line per grant, never a secret.
    func listCredentials(_ o: VerbOptions) throws {
        var q = CredentialGrant.query(unit: try unit(o, required: false), id: nil)
        q.matchLimit = .all
        q.returnAttributes = true
        let found: [ItemResult]
        do throws(KeychainError) { found = try keychain.copyMatching(q, context: context) } catch .itemNotFound {
            return
        } catch {
            throw SecurityFailure.keychain(error, function: "SecKeychainSearchCopyNext")
        }
        let grants = found.compactMap { $0.attributes.flatMap(CredentialGrant.init(attributes:)) }
            .sorted { ($0.unit.rawValue, $0.id.rawValue) < ($1.unit.rawValue, $1.id.rawValue) }
        for g in grants {
            let from = switch g.source {
            case .secret: "secret"
            case .item(let s, let a): "item service=\(Listing.quoted(s)) account=\(Listing.quoted(a))"
            }
            console.out("\(g.unit.rawValue)\t\(g.id.rawValue)\t\(g.accessibility.name)\t\(from)\n")
        }
    }

    /// `delete-credential -u UNIT -c ID`.
    func deleteCredential(_ o: VerbOptions) throws {
        let q = CredentialGrant.query(unit: try unit(o)!, id: try credentialID(o))
        do throws(KeychainError) { try keychain.delete(q, context: context) } catch {
            throw SecurityFailure.keychain(error, function: "SecKeychainItemDelete")
        }
    }
}
