#if canImport(Glibc)
import Glibc
#endif
import CSecret
import AppHomeSystem
import Keychain

/// The user's Secret Service (gnome-keyring, KeePassXC…) through libsecret,
/// as the keychain's ``SecretStore``, with the kernel's user keyring as its
/// short-lived cache.
///
/// The boundary with C is this target: libsecret is loaded on the first
/// call that needs it (`CSecret` resolves it with dlopen, so a process that
/// never asks the Secret Service never loads libsecret or GLib), and its
/// `GError`s become `KeychainError.secretService(domain:code:message:)`
/// here, by domain and code. Only `main` makes one, and only when a
/// session bus is set, so libsecret never autolaunches anything.
public struct LibSecretStore: SecretStore {
    public init() {}

    /// From now on this process never loads libsecret: a call that needs
    /// the Secret Service fails with `reason` (``KeychainError/keyStoreUnavailable(_:)``).
    /// For the statically linked `security`, which cannot load shared
    /// libraries and hands such commands to `security-secret-service`.
    public static func forbidLoading(_ reason: String) {
        apphome_secret_forbid_loading(reason)
    }

    /// libsecret's synchronous calls share one default service object and
    /// are not safe to make from several threads at once: one at a time.
    private static let serial = SerialLock()

    private static func convert(_ error: inout apphome_secret_error) -> KeychainError {
        defer { apphome_secret_error_clear(&error) }
        let domain = error.domain.map { String(cString: $0) } ?? "unknown"
        let message = error.message.map { String(cString: $0) } ?? "unknown failure"
        if domain == "forbidden" { return .keyStoreUnavailable(message) }
        if domain == "dlopen" {
            return .keyStoreUnavailable("libsecret cannot be loaded (\(message)); install libsecret-1-0, or set APPHOME_KEYCHAIN_KEY_STORE=file")
        }
        return .secretService(domain: domain, code: Int32(error.code), message: message)
    }

    /// Runs `body` under the store's lock with the attributes as two C
    /// string arrays and an error slot: the one place that builds them.
    private static func withQuery<T>(_ attributes: [String: String],
                                     _ body: (UnsafePointer<UnsafePointer<CChar>?>, UnsafePointer<UnsafePointer<CChar>?>, Int,
                                              inout apphome_secret_error) throws(KeychainError) -> T) throws(KeychainError) -> T {
        let pairs = attributes.sorted { $0.key < $1.key }
        let count = pairs.count
        let keys = UnsafeMutablePointer<UnsafePointer<CChar>?>.allocate(capacity: max(count, 1))
        let values = UnsafeMutablePointer<UnsafePointer<CChar>?>.allocate(capacity: max(count, 1))
        for (i, pair) in pairs.enumerated() {
            keys[i] = UnsafePointer(strdup(pair.key))
            values[i] = UnsafePointer(strdup(pair.value))
        }
        defer {
            for i in 0..<count { free(UnsafeMutablePointer(mutating: keys[i])); free(UnsafeMutablePointer(mutating: values[i])) }
            keys.deallocate()
            values.deallocate()
        }
        serial.lock()
        defer { serial.unlock() }
        var error = apphome_secret_error()
        return try body(keys, values, count, &error)
    }

    /// Stores `secret` (text) under `attributes` in the default collection,
    /// replacing an item with the same attributes.
    public func store(schema: String, attributes: [String: String], label: String, secret: SecureBytes) throws(KeychainError) {
        try Self.withQuery(attributes) { k, v, n, error throws(KeychainError) in
            // libsecret wants a NUL-terminated string: build it in secure memory.
            let text = SecureBytes(count: secret.count + 1) { t in
                secret.withUnsafeBytes { s in if s.count > 0 { t.baseAddress!.copyMemory(from: s.baseAddress!, byteCount: s.count) } }
            }
            let ok = text.withUnsafeBytes { t in
                apphome_secret_store(schema, k, v, n, label, t.baseAddress!.assumingMemoryBound(to: CChar.self), &error)
            }
            if ok == 0 { throw Self.convert(&error) }
        }
    }

    /// The secret stored under `attributes`, or `nil` when there is none.
    public func lookup(schema: String, attributes: [String: String]) throws(KeychainError) -> SecureBytes? {
        try Self.withQuery(attributes) { k, v, n, error throws(KeychainError) -> SecureBytes? in
            guard let found = apphome_secret_lookup(schema, k, v, n, &error) else {
                if error.domain != nil { throw Self.convert(&error) }
                return nil
            }
            defer { apphome_secret_password_free(found) }
            return SecureBytes(copying: UnsafeRawBufferPointer(start: found, count: strlen(found)))
        }
    }

    /// Removes every item matching `attributes`; returns whether one was removed.
    @discardableResult
    public func clear(schema: String, attributes: [String: String]) throws(KeychainError) -> Bool {
        try Self.withQuery(attributes) { k, v, n, error throws(KeychainError) in
            let r = apphome_secret_clear(schema, k, v, n, &error)
            if r < 0 { throw Self.convert(&error) }
            return r > 0
        }
    }

    // MARK: Locked collections (no prompts)

    /// The item's secret, or whether it is locked or missing, without
    /// prompting to unlock it.
    public func lookupState(schema: String, attributes: [String: String]) throws(KeychainError) -> SecretLookup {
        try Self.withQuery(attributes) { k, v, n, error throws(KeychainError) in
            var r = -1
            let buffer = SecureBytes(count: 256) { r = apphome_secret_lookup_state(schema, k, v, n, $0.baseAddress, $0.count, &error) }
            switch r {
            case -1: return .missing
            case -2: return .locked
            case -3: throw Self.convert(&error)
            case -4: throw .keyStoreUnavailable("the Secret Service item is longer than a device key")
            default: return .found(buffer.prefix(r))
            }
        }
    }

    /// Locks the collection that holds the item
    /// (`org.freedesktop.Secret.Service.Lock` through libsecret).
    public func lockCollection(schema: String, attributes: [String: String]) throws(KeychainError) {
        try setLocked(true, schema: schema, attributes: attributes)
    }

    /// Unlocks the collection that holds the item. With `password`, through
    /// gnome-keyring's internal `UnlockWithMasterPassword`
    /// (no prompt: what works headless); without, `Service.Unlock`, which shows
    /// the service's prompt (and fails where there is no display).
    public func unlockCollection(schema: String, attributes: [String: String], password: SecureBytes?) throws(KeychainError) {
        guard let password else { return try setLocked(false, schema: schema, attributes: attributes) }
        try Self.withQuery(attributes) { k, v, n, error throws(KeychainError) in
            let r = password.withUnsafeBytes { apphome_secret_unlock_with_password(schema, k, v, n, $0.baseAddress, $0.count, &error) }
            if r == -2 { throw .wrongPassphrase("the Secret Service refused the password of the collection holding the device key") }
            if r < 0 { throw Self.convert(&error) }
            if r == 0 { throw .keyStoreUnavailable("the Secret Service has no item for this keychain's device key") }
        }
    }

    private func setLocked(_ lock: Bool, schema: String, attributes: [String: String]) throws(KeychainError) {
        try Self.withQuery(attributes) { k, v, n, error throws(KeychainError) in
            let r = apphome_secret_set_locked(schema, k, v, n, lock ? 1 : 0, &error)
            if r < 0 { throw Self.convert(&error) }
            if r == 0 {
                throw lock ? .keyStoreUnavailable("the Secret Service has no item for this keychain's device key")
                           : .interactionNotAllowed("the Secret Service did not unlock the collection (its prompt was dismissed or cannot be shown; pipe the keyring password on standard input)")
            }
        }
    }

    // MARK: The cache: the kernel's user keyring (keyctl(2))

    /// The secret cached under `name` in the user keyring (up to 256 bytes).
    public func cached(_ name: String) -> SecureBytes? {
        var n = -1
        let buffer = SecureBytes(count: 257) { n = apphome_keyring_read(name, $0.baseAddress, $0.count) }
        guard n > 0 && n <= 256 else { return nil }
        return buffer.prefix(n)
    }

    /// Caches `secret` in the user keyring (user: view, read, search; never
    /// swapped) for `seconds` (0: until reboot or logout). Best effort: where
    /// the kernel refuses keyctl (containers with a seccomp filter), nothing
    /// is cached.
    public func cache(_ name: String, _ secret: SecureBytes, seconds: UInt32) {
        _ = secret.withUnsafeBytes { apphome_keyring_store(name, $0.baseAddress, $0.count, seconds) }
    }

    public func forgetCached(_ name: String) {
        apphome_keyring_remove(name)
    }

    /// Whether the kernel lets this process use its user keyring.
    public static func kernelCacheIsAvailable() -> Bool {
        let store = LibSecretStore()
        let probe = SecureBytes.random(count: 32)
        let name = "apphome-keychain:probe"
        store.cache(name, probe, seconds: 5)
        defer { store.forgetCached(name) }
        return store.cached(name)?.constantTimeEquals(probe) ?? false
    }
}

/// A plain mutex: libsecret's calls are made one at a time.
private final class SerialLock: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    init() {
        mutex = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
    }
    func lock() { pthread_mutex_lock(mutex) }
    func unlock() { pthread_mutex_unlock(mutex) }
}

extension DeviceKeyPolicy {
    /// The policy `configuration` asks for: the Secret Service when a
    /// session bus is set, unless the key store is ``Configuration/KeyStore/file``.
    /// The after-first-unlock class keys stay in the kernel's user keyring
    /// until reboot or logout, or at most ``Configuration/keyCacheSeconds``
    /// when that is set (`0`: not kept, so those classes close with the
    /// store). The kernel keyring is used with or without a bus (a
    /// passphrase keychain needs no Secret Service).
    public init(configuration: Configuration) {
        let lifetime: DeviceKeyPolicy.KernelKeyLifetime
        switch configuration.keyCacheSeconds {
        case nil: lifetime = .untilReboot
        case 0?: lifetime = .off
        case let n?: lifetime = .seconds(n)
        }
        self.init(secretStore: configuration.sessionBusAvailable ? LibSecretStore() : nil,
                  forceFile: configuration.keyStore == .file,
                  kernelKeys: lifetime, keyCache: LibSecretStore())
    }
}
