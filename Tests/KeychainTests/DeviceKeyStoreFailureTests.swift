import Foundation
import Testing
@testable import Keychain

/// A Secret Service that answers on the bus but cannot keep a new item: its
/// `store` fails as libsecret reports it (here: the default collection is
/// locked and the unlock prompt cannot be shown).
final class RefusingSecretStore: SecretStore {
    static let failure = KeychainError.secretService(domain: "secret-error", code: 2, message: "Cannot create an item in a locked collection")
    let stored = InMemorySecretStore()

    func store(schema: String, attributes: [String: String], label: String, secret: SecureBytes) throws(KeychainError) {
        throw Self.failure
    }
    func lookup(schema: String, attributes: [String: String]) throws(KeychainError) -> SecureBytes? {
        try stored.lookup(schema: schema, attributes: attributes)
    }
    func clear(schema: String, attributes: [String: String]) throws(KeychainError) -> Bool {
        try stored.clear(schema: schema, attributes: attributes)
    }
}

/// A new keychain's device key goes to the Secret Service when one is
/// reachable; when the service cannot keep it, creating the keychain fails
/// and says why, and no key file appears behind the user's back.
@Suite struct DeviceKeyStoreFailureTests {
    static let expected = KeychainError.keyStoreUnavailable(
        "the Secret Service could not store a new keychain's device key (Cannot create an item in a locked collection); "
            + "set APPHOME_KEYCHAIN_KEY_STORE=file to keep the key in a 0600 file under the root instead")

    @Test func creatingAKeychainFailsWithTheCauseWhenTheServiceCannotStoreTheKey() throws {
        let s = KeychainScratch()
        let k = Keychain(root: s.root, policy: DeviceKeyPolicy(secretStore: RefusingSecretStore()), now: testClock)
        #expect(throws: Self.expected) { try k.add(generic("alice", "svc"), data: secret("pw"), context: try context("com.example.A")) }
        // Nothing that holds or records a key: no device.key, device.plist or keys.plist.
        #expect(s.files().filter { !$0.hasPrefix(".") } == [])
        #expect(try k.deviceKeyStore() == nil)
    }

    @Test func anExistingKeychainWithAKeyFileKeepsWorkingWhenTheServiceRefuses() throws {
        let s = KeychainScratch()
        let app = try context("com.example.A")
        try s.keychain().add(generic("alice", "svc"), data: secret("pw"), context: app)
        #expect(s.files().contains("device.key"))
        let k = Keychain(root: s.root, policy: DeviceKeyPolicy(secretStore: RefusingSecretStore()), now: testClock)
        #expect(text(try k.copyMatching(query(account: "alice"), context: app)[0].data) == "pw")
        try k.add(generic("bob", "svc"), data: secret("pw2"), context: app)
        #expect(text(try k.copyMatching(query(account: "bob"), context: app)[0].data) == "pw2")
        #expect(try k.deviceKeyStore() == .file)
    }

    @Test func forcingTheFileStoreNeverAsksTheService() throws {
        let s = KeychainScratch()
        let k = Keychain(root: s.root, policy: DeviceKeyPolicy(secretStore: RefusingSecretStore(), forceFile: true), now: testClock)
        try k.add(generic("alice", "svc"), data: secret("pw"), context: try context("com.example.A"))
        #expect(try k.deviceKeyStore() == .file)
    }
}
