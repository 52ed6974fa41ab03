import AppHomeSystem
import Synchronization

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

/// Credentials prefsd served, kept while nothing they came from has
/// changed, so a unit that starts again (or ten at once) costs three `stat`s
/// instead of reading, verifying and decrypting the login keychain again.
///
/// An entry holds while the keybag's ``Keybag/epoch`` is the same (no lock,
/// no `lock-keychain`, no change that may be one since it was read) and the
/// device record, the key table and the login keychain's file are the same
/// files (device, inode, size, times: every write replaces them). Only a
/// keychain whose keybag is watched is cached: without a watcher a lock could
/// go unseen. Secrets stay in ``SecureBytes``; at most ``capacity`` entries.
public final class CredentialCache: Sendable {
    private struct Entry {
        var secret: SecureBytes
        var epoch: Int
        var files: [FileStatus?]
    }
    private let entries = Mutex<[[UInt8]: Entry]>([:])
    /// Entries kept at most; past it the cache starts again empty.
    public let capacity: Int

    public init(capacity: Int = 1024) { self.capacity = capacity }

    /// By the unit's and the id's bytes (names are bytes).
    static func key(_ unit: SystemdUnitName, _ id: CredentialID) -> [UInt8] {
        Array(unit.rawValue.utf8) + [0] + Array(id.rawValue.utf8)
    }

    fileprivate func entry(_ key: [UInt8], epoch: Int, files: [FileStatus?]) -> SecureBytes? {
        entries.withLock { e in
            guard let hit = e[key], hit.epoch == epoch, hit.files == files else { return nil }
            return hit.secret
        }
    }

    fileprivate func store(_ key: [UInt8], _ secret: SecureBytes, epoch: Int, files: [FileStatus?]) {
        entries.withLock { e in
            if e.count >= capacity && e[key] == nil { e.removeAll() }
            e[key] = Entry(secret: secret, epoch: epoch, files: files)
        }
    }

    /// Entries held (for tests).
    public var count: Int { entries.withLock { $0.count } }
}

extension Keychain {
    /// The files a credential is read from, as they are now.
    private func credentialFiles() -> [FileStatus?] {
        [FileStatus.of(recordPath), FileStatus.of(keysPath), FileStatus.of(groupPath(KeychainContext.loginGroup))]
    }

    /// The credential from `cache` when it still holds (no lock since, the
    /// same files), else `nil`.
    public func cachedCredential(unit: SystemdUnitName, id: CredentialID, cache: CredentialCache) -> SecureBytes? {
        guard let epoch = policy.keybag?.epoch else { return nil }
        return cache.entry(CredentialCache.key(unit, id), epoch: epoch, files: credentialFiles())
    }

    /// ``credential(unit:id:)``, kept in `cache` when the keybag is watched
    /// and neither the keys nor the files changed while it was read.
    public func credential(unit: SystemdUnitName, id: CredentialID, cache: CredentialCache) -> Result<SecureBytes, CredentialRefusal> {
        guard let keybag = policy.keybag, let epoch = keybag.epoch else { return credential(unit: unit, id: id) }
        let before = credentialFiles()
        let result = credential(unit: unit, id: id)
        if case .success(let secret) = result, keybag.epoch == epoch, credentialFiles() == before {
            cache.store(CredentialCache.key(unit, id), secret, epoch: epoch, files: before)
        }
        return result
    }
}
