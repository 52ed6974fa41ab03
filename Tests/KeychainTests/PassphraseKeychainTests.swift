import Foundation
import Testing
@testable import Keychain
import PropertyList

/// A keychain whose device key is sealed under a passphrase (`device.pkey`):
/// `unlock` plays the Secret Service's part, the session lives in the key
/// cache (the kernel keyring for real; the in-memory store here).
@Suite struct PassphraseKeychainTests {
    final class Setup {
        let scratch = KeychainScratch()
        let cache = InMemorySecretStore()
        let app: KeychainContext
        init() throws {
            app = try context("com.example.A")
            try keychain().createProtected(passphrase: secret("correct horse"))
            for c in Accessibility.allCases {
                try keychain().add(generic("alice", c.name, accessibility: c), data: secret("s-" + c.name), context: app)
            }
        }
        func keychain(testing: Bool = true) -> Keychain {
            let k = Keychain(root: scratch.root, policy: DeviceKeyPolicy(kernelKeys: .untilReboot, keyCache: cache), now: testClock)
            // libsodium's minimum costs: the floor is tested below.
            if testing { k.passphraseCostForTesting = PassphraseParameters(salt: Sodium.randomBytes(16), opsLimit: 1, memLimit: 8192) }
            return k
        }
        func readable() -> [Accessibility] {
            Accessibility.allCases.filter { c in
                (try? keychain().copyMatching(query(service: c.name), context: app)).flatMap { text($0[0].data) } == "s-" + c.name
            }
        }
    }

    @Test func aNewPassphraseKeychainIsUnlockedAndOpensEveryClass() throws {
        let s = try Setup()
        #expect(s.readable() == Accessibility.allCases)
        #expect(try s.keychain().lockInfo() == KeychainLockInfo(state: .unlocked, store: .passphraseFile, afterFirstUnlockOpen: true))
        #expect(s.scratch.files().contains("device.pkey") && !s.scratch.files().contains("device.key"))
        #expect(throws: KeychainError.duplicateItem) { try s.keychain().createProtected(passphrase: secret("again")) }
    }

    @Test func lockingLeavesTheAfterFirstUnlockClassesAndThePassphraseReopensTheRest() throws {
        let s = try Setup()
        try s.keychain().lock()
        #expect(s.readable() == [.afterFirstUnlock, .afterFirstUnlockThisDeviceOnly])
        #expect(throws: KeychainError.interactionNotAllowed("the keychain is locked: run `security unlock-keychain` with its passphrase")) {
            _ = try s.keychain().copyMatching(query(service: "whenUnlocked"), context: s.app)
        }
        let path = s.scratch.keychains + "/device.pkey"
        #expect(throws: KeychainError.wrongPassphrase("the passphrase does not open \(path)")) { try s.keychain().unlock(password: secret("wrong")) }
        #expect(try s.keychain().lockInfo().state == .locked)
        try s.keychain().unlock(password: secret("correct horse"))
        #expect(s.readable() == Accessibility.allCases)
    }

    @Test func afterARebootNothingOpensUntilThePassphraseIsGiven() throws {
        let s = try Setup()
        try s.keychain().forgetAfterFirstUnlockKeys()
        #expect(s.readable() == [])
        #expect(try s.keychain().lockInfo() == KeychainLockInfo(state: .locked, store: .passphraseFile, afterFirstUnlockOpen: false))
        try s.keychain().unlock(password: secret("correct horse"))
        #expect(s.readable() == Accessibility.allCases)
    }

    /// A key file whose Argon2id costs are below the floor is refused
    /// outside tests, so nobody can swap in a cheap one.
    @Test func aKeyFileBelowTheArgon2idFloorIsRefused() throws {
        let s = try Setup()
        try s.keychain().lock()
        #expect(throws: KeychainError.invalidParameter("the passphrase parameters (opslimit 1, memlimit 0 MiB) are below the floor (opslimit 3, memlimit 64 MiB)")) {
            try s.keychain(testing: false).unlock(password: secret("correct horse"))
        }
    }

    @Test func theParametersAreBoundToTheSealedKey() throws {
        let s = try Setup()
        try s.keychain().lock()
        let path = s.scratch.keychains + "/device.pkey"
        let bytes = try #require(s.scratch.bytes(path))
        var top = try #require(try PlistCodec.decode(bytes).dictionaryValue)
        var parameters = try #require(top["Parameters"]?.dictionaryValue)
        parameters["OpsLimit"] = .integer(2)
        top["Parameters"] = .dictionary(parameters)
        try s.scratch.write(try PlistCodec.encode(.dictionary(top), format: .binary), path)
        #expect(throws: KeychainError.wrongPassphrase("the passphrase does not open \(path)")) { try s.keychain().unlock(password: secret("correct horse")) }
    }
}
