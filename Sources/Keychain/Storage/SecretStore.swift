import Synchronization

/// The user's secret store as the keychain needs it: one secret per
/// attribute map, for the device root key. The real one is the Secret
/// Service through libsecret (`LibSecretStore` in `KeychainSecretService`,
/// the only target that imports libsecret); ``InMemorySecretStore`` passes
/// the same contract for tests.
///
/// Contract: `store` replaces a secret with the same schema and attributes
/// (Secret Service semantics); `lookup` returns `nil`, not an error, when
/// nothing matches; `clear` removes every match and says whether there was
/// one. Errors never contain the secret. A store may also keep a
/// short-lived cache (``cached(_:)``); callers check whatever comes out of it.
/// A place for keys that should outlive a process but not a boot: the
/// kernel's user keyring for the real one (`LibSecretStore`), a dictionary
/// in ``InMemorySecretStore``. Callers check whatever comes out of it.
public protocol KernelKeyCache: Sendable {
    /// A secret cached under `name`, if the store keeps a cache.
    func cached(_ name: String) -> SecureBytes?
    /// Caches `secret` under `name` for `seconds` (0: until reboot).
    func cache(_ name: String, _ secret: SecureBytes, seconds: UInt32)
    /// Drops the cached secret `name`.
    func forgetCached(_ name: String)
}

public protocol SecretStore: KernelKeyCache {
    func store(schema: String, attributes: [String: String], label: String, secret: SecureBytes) throws(KeychainError)
    func lookup(schema: String, attributes: [String: String]) throws(KeychainError) -> SecureBytes?
    @discardableResult
    func clear(schema: String, attributes: [String: String]) throws(KeychainError) -> Bool
    /// A secret cached under `name`, if the store keeps a cache.
    func cached(_ name: String) -> SecureBytes?
    /// Caches `secret` under `name` for `seconds`.
    func cache(_ name: String, _ secret: SecureBytes, seconds: UInt32)
    /// Drops the cached secret `name`.
    func forgetCached(_ name: String)

    /// Like ``lookup(schema:attributes:)``, but says when the item is there
    /// and its collection is locked, without asking anyone to unlock it (no
    /// prompt).
    func lookupState(schema: String, attributes: [String: String]) throws(KeychainError) -> SecretLookup
    /// Locks the collection holding the item with these attributes
    /// (`org.freedesktop.Secret.Service.Lock`).
    func lockCollection(schema: String, attributes: [String: String]) throws(KeychainError)
    /// Unlocks the collection holding the item: with `password`, the
    /// collection's password (headless); without, by asking the service,
    /// which may show its own prompt.
    func unlockCollection(schema: String, attributes: [String: String], password: SecureBytes?) throws(KeychainError)
}

/// What a look-up that never prompts found.
public enum SecretLookup: Sendable {
    /// The item, its collection unlocked.
    case found(SecureBytes)
    /// The item is there, but its collection is locked.
    case locked
    /// No such item.
    case missing
}

extension SecretStore {
    public func cached(_ name: String) -> SecureBytes? { nil }
    public func cache(_ name: String, _ secret: SecureBytes, seconds: UInt32) {}
    public func forgetCached(_ name: String) {}

    public func lookupState(schema: String, attributes: [String: String]) throws(KeychainError) -> SecretLookup {
        guard let found = try lookup(schema: schema, attributes: attributes) else { return .missing }
        return .found(found)
    }

    public func lockCollection(schema: String, attributes: [String: String]) throws(KeychainError) {
        throw .invalidParameter("this secret store cannot be locked")
    }

    public func unlockCollection(schema: String, attributes: [String: String], password: SecureBytes?) throws(KeychainError) {
        throw .invalidParameter("this secret store cannot be unlocked")
    }
}

/// A ``SecretStore`` in memory, with a cache and one collection that can
/// be locked (its password is `password`), for tests.
public final class InMemorySecretStore: SecretStore {
    private struct State {
        var items: [[String: String]: SecureBytes] = [:]
        var cache: [String: SecureBytes] = [:]
        var locked = false
    }
    private let state = Mutex(State())

    public init() {}

    public func store(schema: String, attributes: [String: String], label: String, secret: SecureBytes) throws(KeychainError) {
        let copy = secret.withUnsafeBytes { SecureBytes(copying: $0) }
        state.withLock { $0.items[Self.key(schema, attributes)] = copy }
    }

    public func lookup(schema: String, attributes: [String: String]) throws(KeychainError) -> SecureBytes? {
        try state.withLock { (s) throws(KeychainError) -> SecureBytes? in
            guard let found = s.items[Self.key(schema, attributes)] else { return nil }
            if s.locked { throw .secretService(domain: "secret-error", code: 2, message: "the collection is locked") }
            return found
        }
    }

    public func lookupState(schema: String, attributes: [String: String]) throws(KeychainError) -> SecretLookup {
        state.withLock { s in
            guard let found = s.items[Self.key(schema, attributes)] else { return .missing }
            return s.locked ? .locked : .found(found)
        }
    }

    public func lockCollection(schema: String, attributes: [String: String]) throws(KeychainError) {
        state.withLock { $0.locked = true }
    }

    public func unlockCollection(schema: String, attributes: [String: String], password: SecureBytes?) throws(KeychainError) {
        guard let password, password.constantTimeEquals(SecureBytes(utf8: "password")) else {
            throw .wrongPassphrase("the collection password is wrong")
        }
        state.withLock { $0.locked = false }
    }

    /// Whether the collection is locked.
    public var isLocked: Bool { state.withLock { $0.locked } }

    @discardableResult
    public func clear(schema: String, attributes: [String: String]) throws(KeychainError) -> Bool {
        state.withLock { $0.items.removeValue(forKey: Self.key(schema, attributes)) != nil }
    }

    public func cached(_ name: String) -> SecureBytes? { state.withLock { $0.cache[name] } }
    public func cache(_ name: String, _ secret: SecureBytes, seconds: UInt32) { state.withLock { $0.cache[name] = secret } }
    public func forgetCached(_ name: String) { _ = state.withLock { $0.cache.removeValue(forKey: name) } }

    private static func key(_ schema: String, _ attributes: [String: String]) -> [String: String] {
        var k = attributes
        k["xdg:schema"] = schema
        return k
    }
}
