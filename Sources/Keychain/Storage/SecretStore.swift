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
public protocol SecretStore: Sendable {
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
}

extension SecretStore {
    public func cached(_ name: String) -> SecureBytes? { nil }
    public func cache(_ name: String, _ secret: SecureBytes, seconds: UInt32) {}
    public func forgetCached(_ name: String) {}
}

/// A ``SecretStore`` in memory, with a cache, for tests.
public final class InMemorySecretStore: SecretStore {
    private struct State {
        var items: [[String: String]: SecureBytes] = [:]
        var cache: [String: SecureBytes] = [:]
    }
    private let state = Mutex(State())

    public init() {}

    public func store(schema: String, attributes: [String: String], label: String, secret: SecureBytes) throws(KeychainError) {
        let copy = secret.withUnsafeBytes { SecureBytes(copying: $0) }
        state.withLock { $0.items[Self.key(schema, attributes)] = copy }
    }

    public func lookup(schema: String, attributes: [String: String]) throws(KeychainError) -> SecureBytes? {
        state.withLock { $0.items[Self.key(schema, attributes)] }
    }

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
