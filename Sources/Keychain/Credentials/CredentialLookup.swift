/// Why a credential is not served. The description names the reason,
/// never the secret; the server logs it with the unit and the id.
public enum CredentialRefusal: Error, Equatable, Sendable, CustomStringConvertible {
    /// No grant for this unit and id.
    case notGranted
    /// The grant, or the item it names, is of a class that is closed now.
    case locked(String)
    /// The grant names an item of the login keychain that is gone.
    case itemGone(service: String, account: String)
    /// The secret is over systemd's 1 MiB limit.
    case tooLarge(Int)
    /// The keychain could not be read.
    case failed(String)

    public var description: String {
        switch self {
        case .notGranted: return "not granted"
        case .locked(let why): return "locked (\(why))"
        case .itemGone(let s, let a): return "the granted item (service '\(s)', account '\(a)') is not in the login keychain"
        case .tooLarge(let n): return "the secret has \(n) bytes, over the 1 MiB limit of a credential (\(CredentialGrant.maximumSize) bytes)"
        case .failed(let why): return "the keychain cannot be read: \(why)"
        }
    }
}

extension Keychain {
    /// The bytes of credential `id` granted to `unit`, from the login
    /// keychain, or why not.
    public func credential(unit: SystemdUnitName, id: CredentialID) -> Result<SecureBytes, CredentialRefusal> {
        var q = CredentialGrant.query(unit: unit, id: id)
        q.returnAttributes = true
        q.returnData = true
        let found: ItemResult
        do throws(KeychainError) { found = try copyMatching(q, context: .login)[0] } catch {
            return .failure(Self.refusal(error))
        }
        guard let attributes = found.attributes, let grant = CredentialGrant(attributes: attributes) else {
            return .failure(.failed("the grant item is not readable as a grant"))
        }
        let secret: SecureBytes
        switch grant.source {
        case .secret:
            guard let data = found.data else { return .failure(.failed("the grant item has no data")) }
            secret = data
        case .item(let service, let account):
            var item = ItemQuery(itemClass: .genericPassword)
            item.accessGroup = KeychainContext.loginGroup
            item.service = service
            item.account = account
            item.returnData = true
            do throws(KeychainError) {
                guard let data = try copyMatching(item, context: .login)[0].data else { return .failure(.failed("the item has no data")) }
                secret = data
            } catch .itemNotFound {
                return .failure(.itemGone(service: service, account: account))
            } catch {
                return .failure(Self.refusal(error))
            }
        }
        guard secret.count <= CredentialGrant.maximumSize else { return .failure(.tooLarge(secret.count)) }
        return .success(secret)
    }

    private static func refusal(_ error: KeychainError) -> CredentialRefusal {
        switch error {
        case .itemNotFound: return .notGranted
        case .interactionNotAllowed(let why): return .locked(why)
        default: return .failed(error.description)
        }
    }
}
