import Foundation
import Testing
@testable import Keychain

/// Against a real gnome-keyring: run by `make test` through
/// `scripts/with-keyring.sh`, which starts a private D-Bus session with an
/// unlocked keyring and sets `APPHOME_TEST_SECRET_SERVICE=1`.
@Suite(.enabled(if: ProcessInfo.processInfo.environment["APPHOME_TEST_SECRET_SERVICE"] == "1",
                "needs the headless keyring session of scripts/with-keyring.sh"),
       .serialized)
struct SecretServiceIntegrationTests {
    let schema = "org.apphome.Keychain.Test"

    @Test func storeLookupAndClearRoundTrip() throws {
        let attributes = ["case": "round-trip-\(getpid())"]
        #expect(try SecretService.lookup(schema: schema, attributes: attributes) == nil)
        try SecretService.store(schema: schema, attributes: attributes, label: "AppHome test", secret: secret("s3cret"))
        #expect(text(try SecretService.lookup(schema: schema, attributes: attributes)) == "s3cret")
        // The same attributes replace (Secret Service semantics).
        try SecretService.store(schema: schema, attributes: attributes, label: "AppHome test", secret: secret("other"))
        #expect(text(try SecretService.lookup(schema: schema, attributes: attributes)) == "other")
        #expect(try SecretService.clear(schema: schema, attributes: attributes) == true)
        #expect(try SecretService.lookup(schema: schema, attributes: attributes) == nil)
        #expect(try SecretService.clear(schema: schema, attributes: attributes) == false)
    }

    @Test func theDeviceKeyGoesToTheSecretServiceWhenReachable() throws {
        let s = KeychainScratch()
        let k = Keychain(root: s.root, policy: DeviceKeyPolicy(secretServiceReachable: true), now: testClock)
        let app = try context("com.example.A")
        try k.add(generic("alice", "svc"), data: secret("pw"), context: app)
        #expect(try k.deviceKeyStore() == .secretService)
        #expect(!s.files().contains("device.key"))
        // A new process (a fresh instance) finds the key in the service,
        // whatever its own policy says: the recorded choice wins.
        let again = Keychain(root: s.root, policy: .fileOnly, now: testClock)
        #expect(text(try again.copyMatching(query(account: "alice"), context: app)[0].data) == "pw")
        // The key is in the service under this root, as hex.
        let deviceID = try #require(try k.deviceID())
        let stored = try SecretService.lookup(schema: DeviceKey.schema, attributes: DeviceKey.serviceAttributes(root: s.root, deviceID: deviceID))
        #expect(stored?.count == 64)
        try SecretService.clear(schema: DeviceKey.schema, attributes: DeviceKey.serviceAttributes(root: s.root, deviceID: deviceID))
    }

    @Test func aMissingServiceItemIsAClearErrorNotANewKey() throws {
        let s = KeychainScratch()
        let k = Keychain(root: s.root, policy: DeviceKeyPolicy(secretServiceReachable: true), now: testClock)
        let app = try context("com.example.A")
        try k.add(generic("alice", "svc"), data: secret("pw"), context: app)
        let deviceID = try #require(try k.deviceID())
        try SecretService.clear(schema: DeviceKey.schema, attributes: DeviceKey.serviceAttributes(root: s.root, deviceID: deviceID))
        let before = s.files().map { s.bytes(s.keychains + "/" + $0) }
        let fresh = Keychain(root: s.root, policy: DeviceKeyPolicy(secretServiceReachable: true), now: testClock)
        let expected = KeychainError.keyStoreUnavailable("the keychain records its key in the Secret Service, but the item for device \(deviceID) is gone")
        #expect(throws: expected) { _ = try fresh.copyMatching(query(), context: app) }
        #expect(throws: expected) { try fresh.add(generic("bob", "svc"), data: secret("x"), context: app) }
        #expect(s.files().map { s.bytes(s.keychains + "/" + $0) } == before)
    }

    @Test func forceFileKeepsTheKeyInTheFileEvenWithAService() throws {
        let s = KeychainScratch()
        let k = Keychain(root: s.root, policy: DeviceKeyPolicy(secretServiceReachable: true, forceFile: true), now: testClock)
        try k.add(generic("alice", "svc"), data: secret("pw"), context: try context("com.example.A"))
        #expect(try k.deviceKeyStore() == .file)
        #expect(s.files().contains("device.key"))
    }
    /// The kernel-keyring cache of a key fetched from the Secret Service.
    @Test(.enabled(if: KernelKeyCache.isAvailable(), "the kernel refuses keyctl(2) here"))
    func aCachedKeyServesLookupsUntilForgottenAndIsAlwaysChecked() throws {
        let s = KeychainScratch()
        let policy = DeviceKeyPolicy(secretServiceReachable: true, cacheSeconds: 60)
        let app = try context("com.example.A")
        try Keychain(root: s.root, policy: policy, now: testClock).add(generic("alice", "svc"), data: secret("pw"), context: app)
        let deviceID = try #require(try s.keychain().deviceID())
        defer { KernelKeyCache.forget(deviceID: deviceID) }
        // The first look-up fetches from the service and fills the cache.
        #expect(text(try Keychain(root: s.root, policy: policy, now: testClock).copyMatching(query(), context: app)[0].data) == "pw")
        try SecretService.clear(schema: DeviceKey.schema, attributes: DeviceKey.serviceAttributes(root: s.root, deviceID: deviceID))
        // The service item is gone, the cached key still opens the keychain ...
        #expect(text(try Keychain(root: s.root, policy: policy, now: testClock).copyMatching(query(), context: app)[0].data) == "pw")
        // ... but not without the cache, and not once it is forgotten.
        let expected = KeychainError.keyStoreUnavailable("the keychain records its key in the Secret Service, but the item for device \(deviceID) is gone")
        #expect(throws: expected) { _ = try Keychain(root: s.root, policy: DeviceKeyPolicy(secretServiceReachable: true), now: testClock).copyMatching(query(), context: app) }
        KernelKeyCache.forget(deviceID: deviceID)
        #expect(throws: expected) { _ = try Keychain(root: s.root, policy: policy, now: testClock).copyMatching(query(), context: app) }
        // A wrong key in the cache is never used: it fails the key check.
        KernelKeyCache.store("apphome-keychain:" + deviceID, SecureBytes.random(count: 32), seconds: 60)
        #expect(throws: expected) { _ = try Keychain(root: s.root, policy: policy, now: testClock).copyMatching(query(), context: app) }
    }
}
