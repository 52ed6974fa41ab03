import Testing
@testable import Keychain
import PropertyList

@Suite struct PassphraseTests {
    func stored(ops: Int128, mem: Int128, alg: String = "argon2id13", salt: Int = 16) -> PlistValue {
        .dictionary(["Algorithm": .string(alg), "Salt": .data([UInt8](repeating: 7, count: salt)),
                     "OpsLimit": .integer(ops), "MemLimit": .integer(mem)])
    }

    /// (ops, mem MiB, algorithm, expected error or nil).
    static let cases: [(Int128, Int128, String, String?)] = [
        (3, 64, "argon2id13", nil),
        (4, 256, "argon2id13", nil),
        (2, 64, "argon2id13", "the passphrase parameters (opslimit 2, memlimit 64 MiB) are below the floor (opslimit 3, memlimit 64 MiB)"),
        (3, 32, "argon2id13", "the passphrase parameters (opslimit 3, memlimit 32 MiB) are below the floor (opslimit 3, memlimit 64 MiB)"),
        (1, 1, "argon2id13", "the passphrase parameters (opslimit 1, memlimit 1 MiB) are below the floor (opslimit 3, memlimit 64 MiB)"),
        (3, 64, "argon2i13", "the passphrase algorithm 'argon2i13' is not supported (only argon2id13)"),
    ]

    @Test(arguments: cases.indices)
    func storedParametersBelowTheFloorAreRefused(_ i: Int) {
        let (ops, mem, alg, message) = Self.cases[i]
        let value = stored(ops: ops, mem: mem << 20, alg: alg)
        if let message {
            #expect(throws: KeychainError.invalidParameter(message)) { try PassphraseParameters(plist: value) }
        } else {
            #expect(throws: Never.self) { try PassphraseParameters(plist: value) }
        }
    }

    @Test func defaultsAreModerateAndRoundTrip() throws {
        let p = PassphraseParameters.fresh()
        #expect(p.opsLimit == 3 && p.memLimit == 256 << 20 && p.salt.count == 16)
        #expect(try PassphraseParameters(plist: p.plist) == p)
        #expect(PassphraseParameters.fresh().salt != p.salt)
    }

    @Test func derivationIsDeterministicPerSaltAndPassphrase() throws {
        // Minimum costs behind the explicit test-only switch keep this fast.
        let p = try PassphraseParameters(plist: stored(ops: 1, mem: 8192), belowFloorForTesting: true)
        let a = try p.deriveKey(secret("correct horse"))
        #expect(a.constantTimeEquals(try p.deriveKey(secret("correct horse"))))
        #expect(!a.constantTimeEquals(try p.deriveKey(secret("correct horsf"))))
        var q = p
        q.salt[0] ^= 1
        #expect(!a.constantTimeEquals(try q.deriveKey(secret("correct horse"))))
    }

    @Test func theCacheDerivesOncePerPassphraseAndParameters() throws {
        let p = try PassphraseParameters(plist: stored(ops: 1, mem: 8192), belowFloorForTesting: true)
        let cache = DerivedKeyCache()
        let first = try cache.key(secret("correct horse"), p)
        // The same passphrase in another buffer: the same key object, not a second derivation.
        #expect(try cache.key(secret("correct horse"), p) === first)
        #expect(first.constantTimeEquals(try p.deriveKey(secret("correct horse"))))
        let other = try cache.key(secret("correct horsf"), p)
        #expect(other !== first && !other.constantTimeEquals(first))
        var q = p
        q.salt[0] ^= 1
        #expect(try cache.key(secret("correct horse"), q) !== first)
    }
}
