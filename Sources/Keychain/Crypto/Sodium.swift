import CSodium
import Synchronization

/// The few libsodium calls the keychain makes, each wrapped so a C return
/// code becomes a Swift value here and nowhere else.
enum Sodium {
    static let keyBytes = 32
    static let nonceBytes = 24
    static let tagBytes = 16
    private static let initialized = Atomic<Bool>(false)

    /// Calls `sodium_init` once; a failure (no usable random source) is fatal.
    static func ensureInitialized() {
        if initialized.load(ordering: .acquiring) { return }
        guard sodium_init() >= 0 else { fatalError("sodium_init failed: libsodium is unusable") }
        initialized.store(true, ordering: .releasing)
    }

    /// Zeroes an array in place (its storage is unique after the mutable access).
    static func wipe(_ bytes: inout [UInt8]) {
        bytes.withUnsafeMutableBytes { if $0.count > 0 { sodium_memzero($0.baseAddress!, $0.count) } }
    }

    /// `nonce ‖ ciphertext ‖ tag`: XChaCha20-Poly1305-IETF under `key` with
    /// a fresh random 24-byte nonce, binding `ad`.
    static func seal(_ plaintext: UnsafeRawBufferPointer, key: SecureBytes, ad: [UInt8]) -> [UInt8] {
        ensureInitialized()
        var out = [UInt8](repeating: 0, count: nonceBytes + plaintext.count + tagBytes)
        out.withUnsafeMutableBytes { o in
            let base = o.baseAddress!.assumingMemoryBound(to: UInt8.self)
            randombytes_buf(base, nonceBytes)
            var clen: UInt64 = 0
            key.withUnsafeBytes { k in
                ad.withUnsafeBytes { a in
                    _ = crypto_aead_xchacha20poly1305_ietf_encrypt(
                        base + nonceBytes, &clen,
                        plaintext.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(plaintext.count),
                        a.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(a.count), nil,
                        base, k.baseAddress!.assumingMemoryBound(to: UInt8.self))
                }
            }
        }
        return out
    }

    static func seal(_ plaintext: SecureBytes, key: SecureBytes, ad: [UInt8]) -> [UInt8] {
        plaintext.withUnsafeBytes { seal($0, key: key, ad: ad) }
    }

    static func seal(_ plaintext: [UInt8], key: SecureBytes, ad: [UInt8]) -> [UInt8] {
        plaintext.withUnsafeBytes { seal($0, key: key, ad: ad) }
    }

    /// Opens what ``seal(_:key:ad:)`` made into secure memory, or `nil`
    /// when the key, the data or the associated data do not match.
    static func open(_ sealed: [UInt8], key: SecureBytes, ad: [UInt8]) -> SecureBytes? {
        ensureInitialized()
        guard sealed.count >= nonceBytes + tagBytes else { return nil }
        let out = SecureBytes(uninitializedCount: sealed.count - nonceBytes - tagBytes)
        let rc: Int32 = sealed.withUnsafeBytes { s in
            let base = s.baseAddress!.assumingMemoryBound(to: UInt8.self)
            return out.withUnsafeMutableBytes { o in
                var mlen: UInt64 = 0
                return key.withUnsafeBytes { k in
                    ad.withUnsafeBytes { a in
                        crypto_aead_xchacha20poly1305_ietf_decrypt(
                            o.baseAddress?.assumingMemoryBound(to: UInt8.self), &mlen, nil,
                            base + nonceBytes, UInt64(sealed.count - nonceBytes),
                            a.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(a.count),
                            base, k.baseAddress!.assumingMemoryBound(to: UInt8.self))
                    }
                }
            }
        }
        return rc == 0 ? out : nil
    }

    /// A 32-byte subkey of `key` (BLAKE2b through `crypto_kdf`); `context` is 8 bytes.
    static func deriveKey(_ key: SecureBytes, id: UInt64, context: StaticString) -> SecureBytes {
        precondition(context.utf8CodeUnitCount == 8)
        ensureInitialized()
        let sub = SecureBytes(uninitializedCount: keyBytes)
        sub.withUnsafeMutableBytes { s in
            key.withUnsafeBytes { k in
                context.withUTF8Buffer { c in
                    c.withMemoryRebound(to: CChar.self) { cc in
                        _ = crypto_kdf_derive_from_key(s.baseAddress!.assumingMemoryBound(to: UInt8.self), keyBytes, id,
                                                       cc.baseAddress!, k.baseAddress!.assumingMemoryBound(to: UInt8.self))
                    }
                }
            }
        }
        return sub
    }

    /// An unkeyed BLAKE2b-256 of `data` (a digest against changed bytes, not a seal).
    static func hash(_ data: [UInt8]) -> [UInt8] {
        ensureInitialized()
        var out = [UInt8](repeating: 0, count: 32)
        out.withUnsafeMutableBytes { o in
            data.withUnsafeBytes { d in
                _ = crypto_generichash(o.baseAddress!.assumingMemoryBound(to: UInt8.self), 32,
                                       d.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(d.count), nil, 0)
            }
        }
        return out
    }

    /// A keyed BLAKE2b-256 of `data`.
    static func keyedHash(_ data: [UInt8], key: SecureBytes) -> [UInt8] {
        ensureInitialized()
        var out = [UInt8](repeating: 0, count: 32)
        out.withUnsafeMutableBytes { o in
            data.withUnsafeBytes { d in
                key.withUnsafeBytes { k in
                    _ = crypto_generichash(o.baseAddress!.assumingMemoryBound(to: UInt8.self), 32,
                                           d.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(d.count),
                                           k.baseAddress!.assumingMemoryBound(to: UInt8.self), k.count)
                }
            }
        }
        return out
    }

    /// Constant-time comparison of two arrays.
    static func equal(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        if a.isEmpty { return true }
        return a.withUnsafeBytes { x in b.withUnsafeBytes { y in sodium_memcmp(x.baseAddress!, y.baseAddress!, a.count) == 0 } }
    }

    /// Random bytes (for item ids).
    static func randomBytes(_ count: Int) -> [UInt8] {
        ensureInitialized()
        var out = [UInt8](repeating: 0, count: count)
        out.withUnsafeMutableBytes { randombytes_buf($0.baseAddress!, count) }
        return out
    }
}

/// The canonical, length-prefixed encoding used for associated data and
/// for what the file seal covers: each field is a 4-byte big-endian length
/// and its bytes, so no two different field lists encode the same.
struct CanonicalEncoder {
    private(set) var bytes: [UInt8] = []

    mutating func append(_ field: [UInt8]) {
        let n = UInt32(field.count)
        bytes.append(contentsOf: [UInt8(n >> 24), UInt8((n >> 16) & 0xFF), UInt8((n >> 8) & 0xFF), UInt8(n & 0xFF)])
        bytes.append(contentsOf: field)
    }

    mutating func append(_ text: String) { append(Array(text.utf8)) }

    mutating func append(_ number: UInt64) {
        append((0..<8).map { UInt8((number >> (56 - 8 * UInt64($0))) & 0xFF) })
    }
}
