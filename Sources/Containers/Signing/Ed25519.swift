import CSodium

/// The libsodium Ed25519 calls code signing makes, each wrapped so a C
/// return code becomes a Swift value here and nowhere else.
enum Ed25519 {
    static let seedBytes = 32
    static let publicKeyBytes = 32
    static let secretKeyBytes = 64
    static let signatureBytes = 64

    private static let initialised: Bool = sodium_init() >= 0

    /// A fresh random 32-byte seed.
    static func randomSeed() -> [UInt8] {
        precondition(initialised, "libsodium could not be initialised")
        var seed = [UInt8](repeating: 0, count: seedBytes)
        seed.withUnsafeMutableBytes { randombytes_buf($0.baseAddress!, seedBytes) }
        return seed
    }

    /// The key pair of `seed` (`crypto_sign_seed_keypair`): the public key
    /// and libsodium's 64-byte secret key (seed ‖ public key).
    static func keyPair(seed: [UInt8]) -> (publicKey: [UInt8], secretKey: [UInt8]) {
        precondition(initialised && seed.count == seedBytes)
        var pk = [UInt8](repeating: 0, count: publicKeyBytes)
        var sk = [UInt8](repeating: 0, count: secretKeyBytes)
        _ = crypto_sign_seed_keypair(&pk, &sk, seed)
        return (pk, sk)
    }

    /// A detached signature of `message` (`crypto_sign_detached`).
    static func sign(_ message: [UInt8], secretKey: [UInt8]) -> [UInt8] {
        precondition(initialised && secretKey.count == secretKeyBytes)
        var signature = [UInt8](repeating: 0, count: signatureBytes)
        var length: UInt64 = 0
        _ = crypto_sign_detached(&signature, &length, message, UInt64(message.count), secretKey)
        return signature
    }

    /// Whether `signature` is `publicKey`'s over `message` (`crypto_sign_verify_detached`).
    static func verify(_ signature: [UInt8], message: [UInt8], publicKey: [UInt8]) -> Bool {
        precondition(initialised)
        guard signature.count == signatureBytes, publicKey.count == publicKeyBytes else { return false }
        return crypto_sign_verify_detached(signature, message, UInt64(message.count), publicKey) == 0
    }

    /// Zeroes secret bytes in place.
    static func wipe(_ bytes: inout [UInt8]) {
        bytes.withUnsafeMutableBytes { if $0.count > 0 { sodium_memzero($0.baseAddress!, $0.count) } }
    }
}
