import CSodium
import PropertyList
import Synchronization

/// Argon2id parameters for a key made from a human passphrase (the
/// building block of an optional backup password). Device and group keys
/// are random and never go through a KDF.
///
/// Stored parameters below the floor (opslimit 3, memlimit 64 MiB: RFC
/// 9106's second recommended option, single lane in libsodium) are refused,
/// so a file cannot be downgraded to a cheap KDF.
public struct PassphraseParameters: Equatable, Sendable {
    public static let algorithm = "argon2id13"
    public static let floorOpsLimit: UInt64 = 3
    public static let floorMemLimit = 64 << 20
    /// libsodium's MODERATE: opslimit 3, memlimit 256 MiB.
    public static let defaultOpsLimit: UInt64 = 3
    public static let defaultMemLimit = 256 << 20

    public var salt: [UInt8]
    public var opsLimit: UInt64
    public var memLimit: Int

    public init(salt: [UInt8], opsLimit: UInt64, memLimit: Int) {
        self.salt = salt; self.opsLimit = opsLimit; self.memLimit = memLimit
    }

    /// New parameters with a fresh 16-byte salt and the default cost.
    public static func fresh() -> PassphraseParameters {
        PassphraseParameters(salt: Sodium.randomBytes(16), opsLimit: defaultOpsLimit, memLimit: defaultMemLimit)
    }

    /// The parameters as stored (and authenticated as associated data by their user).
    public var plist: PlistValue {
        .dictionary(["Algorithm": .string(Self.algorithm), "Salt": .data(salt),
                     "OpsLimit": .integer(Int128(opsLimit)), "MemLimit": .integer(Int128(memLimit))])
    }

    /// Reads stored parameters, refusing unknown algorithms and costs below the floor.
    ///
    /// - Parameter belowFloorForTesting: accepts libsodium's minimum costs;
    ///   for tests only.
    public init(plist: PlistValue, belowFloorForTesting: Bool = false) throws(KeychainError) {
        guard let d = plist.dictionaryValue, case .string(let alg)? = d["Algorithm"], case .data(let salt)? = d["Salt"],
              case .integer(let ops)? = d["OpsLimit"], case .integer(let mem)? = d["MemLimit"] else {
            throw .invalidParameter("the passphrase parameters are incomplete")
        }
        guard alg == Self.algorithm else { throw .invalidParameter("the passphrase algorithm '\(alg)' is not supported (only \(Self.algorithm))") }
        guard salt.count == 16 else { throw .invalidParameter("the passphrase salt must be 16 bytes") }
        guard ops >= 1, ops <= 1 << 32, mem >= 8192, mem <= Int128(Int32.max) else {
            throw .invalidParameter("the passphrase parameters are out of range")
        }
        if !belowFloorForTesting && (ops < Int128(Self.floorOpsLimit) || mem < Int128(Self.floorMemLimit)) {
            throw .invalidParameter("the passphrase parameters (opslimit \(ops), memlimit \(mem / 1_048_576) MiB) are below the floor (opslimit 3, memlimit 64 MiB)")
        }
        self.init(salt: salt, opsLimit: UInt64(ops), memLimit: Int(mem))
    }

    /// A 32-byte key from `passphrase` with Argon2id.
    public func deriveKey(_ passphrase: SecureBytes) throws(KeychainError) -> SecureBytes {
        Sodium.ensureInitialized()
        let key = SecureBytes.random(count: Sodium.keyBytes)
        // crypto_pwhash wants a pointer even for an empty passphrase.
        let text = SecureBytes(uninitializedCount: passphrase.count + 1)
        text.withUnsafeMutableBytes { t in passphrase.withUnsafeBytes { p in if p.count > 0 { t.baseAddress!.copyMemory(from: p.baseAddress!, byteCount: p.count) } } }
        let rc = key.withUnsafeMutableBytes { k in
            text.withUnsafeBytes { p in
                salt.withUnsafeBytes { s in
                    crypto_pwhash(k.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(k.count),
                                  p.baseAddress!.assumingMemoryBound(to: CChar.self), UInt64(passphrase.count),
                                  s.baseAddress!.assumingMemoryBound(to: UInt8.self), opsLimit, memLimit, crypto_pwhash_ALG_ARGON2ID13)
                }
            }
        }
        guard rc == 0 else { throw .invalidParameter("Argon2id could not run (out of memory for memlimit \(memLimit / 1_048_576) MiB?)") }
        return key
    }
}

/// Keys derived from passphrases, kept so that one restore runs Argon2id
/// once (its check derives the key, the restore itself reuses it). An
/// entry matches only the same parameters and the same passphrase
/// (compared in constant time); keys stay in secure memory and go with the
/// cache.
public final class DerivedKeyCache: Sendable {
    private let entries = Mutex<[(parameters: PassphraseParameters, passphrase: SecureBytes, key: SecureBytes)]>([])

    public init() {}

    /// The key for `passphrase` under `parameters`, derived now or earlier.
    public func key(_ passphrase: SecureBytes, _ parameters: PassphraseParameters) throws(KeychainError) -> SecureBytes {
        let known = entries.withLock { list in
            list.first { $0.parameters == parameters && $0.passphrase.constantTimeEquals(passphrase) }?.key
        }
        if let known { return known }
        let key = try parameters.deriveKey(passphrase)
        let copy = passphrase.prefix(passphrase.count)
        entries.withLock { $0.append((parameters, copy, key)) }
        return key
    }
}
