import CSecret
import Synchronization

/// The user's Secret Service (gnome-keyring, KeePassXC…) through libsecret:
/// store, look up and clear one secret by a string → string attribute map.
///
/// The boundary with C is this file: `GError`s become
/// ``KeychainError/secretService(domain:code:message:)`` here, by domain and
/// code; callers never see GLib types.
public enum SecretService {
    /// libsecret's error domain name and codes.
    static let secretErrorDomain = "secret-error-quark"
    /// libsecret's synchronous calls share one default service object and
    /// are not safe to make from several threads at once: one at a time.
    private static let serial = Mutex(())

    private static func makeSchema(_ name: String, attributes: [String]) -> UnsafeMutablePointer<SecretSchema> {
        let table = apphome_schema_table_new()!
        for a in attributes { apphome_schema_table_add_string(table, a) }
        defer { g_hash_table_unref(table) }
        return secret_schema_newv(name, SECRET_SCHEMA_NONE, table)
    }

    private static func makeTable(_ attributes: [String: String]) -> OpaquePointer {
        let table = apphome_string_table_new()!
        for (k, v) in attributes { apphome_string_table_insert(table, k, v) }
        return table
    }

    private static func convert(_ error: UnsafeMutablePointer<GError>?) -> KeychainError {
        guard let error else { return .secretService(domain: "unknown", code: 0, message: "unknown failure") }
        defer { g_error_free(error) }
        let domain = g_quark_to_string(error.pointee.domain).map { String(cString: $0) } ?? "unknown"
        let message = error.pointee.message.map { String(cString: $0) } ?? ""
        return .secretService(domain: domain, code: error.pointee.code, message: message)
    }

    /// Stores `secret` (text) under `attributes` in the default collection,
    /// replacing an item with the same attributes.
    public static func store(schema: String, attributes: [String: String], label: String, secret: SecureBytes) throws(KeychainError) {
        try serial.withLock { _ throws(KeychainError) in try storeUnlocked(schema: schema, attributes: attributes, label: label, secret: secret) }
    }

    private static func storeUnlocked(schema: String, attributes: [String: String], label: String, secret: SecureBytes) throws(KeychainError) {
        let s = makeSchema(schema, attributes: Array(attributes.keys))
        defer { secret_schema_unref(s) }
        let table = makeTable(attributes)
        defer { g_hash_table_unref(table) }
        var error: UnsafeMutablePointer<GError>?
        // libsecret wants a NUL-terminated string: build it in secure memory.
        let text = SecureBytes(uninitializedCount: secret.count + 1)
        text.withUnsafeMutableBytes { t in
            secret.withUnsafeBytes { s in if s.count > 0 { t.baseAddress!.copyMemory(from: s.baseAddress!, byteCount: s.count) } }
            t[secret.count] = 0
        }
        let ok = text.withUnsafeBytes { t in
            secret_password_storev_sync(s, table, nil, label, t.baseAddress!.assumingMemoryBound(to: CChar.self), nil, &error)
        }
        if ok == 0 { throw convert(error) }
    }

    /// The secret stored under `attributes`, or `nil` when there is none.
    public static func lookup(schema: String, attributes: [String: String]) throws(KeychainError) -> SecureBytes? {
        try serial.withLock { _ throws(KeychainError) in try lookupUnlocked(schema: schema, attributes: attributes) }
    }

    private static func lookupUnlocked(schema: String, attributes: [String: String]) throws(KeychainError) -> SecureBytes? {
        let s = makeSchema(schema, attributes: Array(attributes.keys))
        defer { secret_schema_unref(s) }
        let table = makeTable(attributes)
        defer { g_hash_table_unref(table) }
        var error: UnsafeMutablePointer<GError>?
        guard let found = secret_password_lookupv_nonpageable_sync(s, table, nil, &error) else {
            if error != nil { throw convert(error) }
            return nil
        }
        defer { secret_password_free(found) }
        let n = strlen(found)
        return SecureBytes(copying: UnsafeRawBufferPointer(start: found, count: n))
    }

    /// Removes every item matching `attributes`; returns whether one was removed.
    @discardableResult
    public static func clear(schema: String, attributes: [String: String]) throws(KeychainError) -> Bool {
        try serial.withLock { _ throws(KeychainError) in try clearUnlocked(schema: schema, attributes: attributes) }
    }

    private static func clearUnlocked(schema: String, attributes: [String: String]) throws(KeychainError) -> Bool {
        let s = makeSchema(schema, attributes: Array(attributes.keys))
        defer { secret_schema_unref(s) }
        let table = makeTable(attributes)
        defer { g_hash_table_unref(table) }
        var error: UnsafeMutablePointer<GError>?
        let ok = secret_password_clearv_sync(s, table, nil, &error)
        if ok == 0 && error != nil { throw convert(error) }
        return ok != 0
    }
}
