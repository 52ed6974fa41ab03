import CGcrypt
import Keychain

/// A client's session (`OpenSession`): how secrets travel on the bus.
///
/// `plain`: as they are. `dh-ietf1024-sha256-aes128-cbc-pkcs7`: a
/// Diffie-Hellman exchange over the 1024-bit MODP group of RFC 2409, the
/// AES-128 key from the shared secret by HKDF-SHA256 (no salt, no info, as
/// libsecret and gnome-keyring do), each secret AES-128-CBC with PKCS#7
/// padding under a fresh 16-byte IV sent as the secret's parameters.
final class Session {
    enum Algorithm: String { case plain, dh = "dh-ietf1024-sha256-aes128-cbc-pkcs7" }

    let path: String
    /// The unique bus name of the client that opened it; only it may use it.
    let owner: String
    let algorithm: Algorithm
    private let key: SecureBytes?

    /// Why a secret could not be decoded.
    struct Refused: Error { var message: String }

    private init(path: String, owner: String, algorithm: Algorithm, key: SecureBytes?) {
        self.path = path; self.owner = owner; self.algorithm = algorithm; self.key = key
    }

    static func plain(path: String, owner: String) -> Session { Session(path: path, owner: owner, algorithm: .plain, key: nil) }

    /// A DH session with the client's public key `peer`; returns it with our public key.
    static func dh(path: String, owner: String, peer: [UInt8]) throws(Refused) -> (Session, [UInt8]) {
        guard apphome_gcrypt_init() == 1 else { throw Refused(message: "libgcrypt could not be initialized") }
        var ours = [UInt8](repeating: 0, count: 128)
        var length = 0
        var rc: Int32 = 0
        let key = SecureBytes(count: 16) { k in
            rc = apphome_dh_exchange(peer, peer.count, &ours, &length, k.baseAddress!.assumingMemoryBound(to: UInt8.self))
        }
        if rc == -1 { throw Refused(message: "the client's public key is not a valid key of the 1024-bit MODP group") }
        guard rc == 0 else { throw Refused(message: "the key exchange failed in libgcrypt") }
        return (Session(path: path, owner: owner, algorithm: .dh, key: key), Array(ours.prefix(length)))
    }

    /// `secret` as this session sends it: (parameters, value).
    func encode(_ secret: SecureBytes) -> (parameters: [UInt8], value: [UInt8]) {
        guard let key else { return ([], secret.exposedCopy()) }
        var iv = [UInt8](repeating: 0, count: 16)
        apphome_random_bytes(&iv, 16)
        var out = [UInt8](repeating: 0, count: secret.count + 16)
        let n = secret.withUnsafeBytes { s in
            key.withUnsafeBytes { k in
                apphome_aes_encrypt(k.baseAddress!.assumingMemoryBound(to: UInt8.self), iv,
                                    s.baseAddress?.assumingMemoryBound(to: UInt8.self), s.count, &out)
            }
        }
        return (iv, Array(out.prefix(max(0, n))))
    }

    /// The secret a client sent in this session.
    func decode(parameters: [UInt8], value: [UInt8]) throws(Refused) -> SecureBytes {
        guard let key else {
            guard parameters.isEmpty else { throw Refused(message: "a plain session's secret has no parameters") }
            return SecureBytes(value)
        }
        guard parameters.count == 16 else { throw Refused(message: "the secret's parameters must be its 16-byte IV") }
        var length = -1
        let plain = SecureBytes(count: value.count) { out in
            key.withUnsafeBytes { k in
                length = apphome_aes_decrypt(k.baseAddress!.assumingMemoryBound(to: UInt8.self), parameters, value, value.count,
                                             out.baseAddress!.assumingMemoryBound(to: UInt8.self))
            }
        }
        guard length >= 0 else { throw Refused(message: "the secret does not decrypt in this session (wrong key or padding)") }
        return plain.prefix(length)
    }
}
