import Foundation
import Testing
@testable import Keychain
import KeychainSecretService

/// Whether `scripts/with-keyring.sh` started a headless gnome-keyring for this run.
let keyringSession = ProcessInfo.processInfo.environment["APPHOME_TEST_SECRET_SERVICE"] == "1"

/// The stores to run the contract against: always the in-memory one; the
/// real Secret Service inside the keyring session of `make test`.
func stores() -> [(String, any SecretStore)] {
    var list: [(String, any SecretStore)] = [("in-memory", InMemorySecretStore())]
    if keyringSession { list.append(("libsecret", LibSecretStore())) }
    return list
}

/// The ``SecretStore`` contract and the device root key kept in a store;
/// serialised because the real service is one shared process.
@Suite(.serialized) struct SecretStoreTests {
    let schema = "org.apphome.Keychain.Test"

    @Test(arguments: stores().indices)
    func storeLookupAndClearFollowTheContract(_ i: Int) throws {
        let (name, store) = stores()[i]
        let attributes = ["case": "round-trip-\(getpid())-\(name)"]
        #expect(try store.lookup(schema: schema, attributes: attributes) == nil)
        try store.store(schema: schema, attributes: attributes, label: "AppHome test", secret: secret("s3cret"))
        #expect(text(try store.lookup(schema: schema, attributes: attributes)) == "s3cret")
        // The same attributes replace (Secret Service semantics).
        try store.store(schema: schema, attributes: attributes, label: "AppHome test", secret: secret("other"))
        #expect(text(try store.lookup(schema: schema, attributes: attributes)) == "other")
        // Another schema is another item.
        #expect(try store.lookup(schema: schema + ".Other", attributes: attributes) == nil)
        #expect(try store.clear(schema: schema, attributes: attributes) == true)
        #expect(try store.lookup(schema: schema, attributes: attributes) == nil)
        #expect(try store.clear(schema: schema, attributes: attributes) == false)
    }

    @Test(arguments: stores().indices)
    func theDeviceKeyGoesToTheStoreWhenOneIsReachable(_ i: Int) throws {
        let store = stores()[i].1
        let s = KeychainScratch()
        let k = Keychain(root: s.root, policy: DeviceKeyPolicy(secretStore: store), now: testClock)
        let app = try context("com.example.A")
        try k.add(generic("alice", "svc"), data: secret("pw"), context: app)
        #expect(try k.deviceKeyStore() == .secretService)
        #expect(!s.files().contains("device.key"))
        let deviceID = try #require(try k.deviceID())
        defer { _ = try? store.clear(schema: DeviceKey.schema, attributes: DeviceKey.serviceAttributes(root: s.root, deviceID: deviceID)) }
        // A fresh instance finds the key in the store, whatever its policy
        // says about new keys: the recorded choice wins.
        let again = Keychain(root: s.root, policy: DeviceKeyPolicy(secretStore: store, forceFile: true), now: testClock)
        #expect(text(try again.copyMatching(query(account: "alice"), context: app)[0].data) == "pw")
        let stored = try store.lookup(schema: DeviceKey.schema, attributes: DeviceKey.serviceAttributes(root: s.root, deviceID: deviceID))
        #expect(stored?.count == 64)
        // Without a reachable service the recorded choice is a clear error.
        #expect(throws: KeychainError.keyStoreUnavailable("the keychain records its key in the Secret Service, which cannot be reached (no session bus)")) {
            _ = try Keychain(root: s.root, policy: .fileOnly, now: testClock).copyMatching(query(), context: app)
        }
    }

    @Test(arguments: stores().indices)
    func aMissingServiceItemIsAClearErrorNotANewKey(_ i: Int) throws {
        let store = stores()[i].1
        let s = KeychainScratch()
        let app = try context("com.example.A")
        try Keychain(root: s.root, policy: DeviceKeyPolicy(secretStore: store), now: testClock).add(generic("alice", "svc"), data: secret("pw"), context: app)
        let deviceID = try #require(try s.keychain().deviceID())
        try store.clear(schema: DeviceKey.schema, attributes: DeviceKey.serviceAttributes(root: s.root, deviceID: deviceID))
        let before = s.files().map { s.bytes(s.keychains + "/" + $0) }
        let fresh = Keychain(root: s.root, policy: DeviceKeyPolicy(secretStore: store), now: testClock)
        let expected = KeychainError.keyStoreUnavailable("the keychain records its key in the Secret Service, but the item for device \(deviceID) is gone")
        #expect(throws: expected) { _ = try fresh.copyMatching(query(), context: app) }
        #expect(throws: expected) { try fresh.add(generic("bob", "svc"), data: secret("x"), context: app) }
        #expect(s.files().map { s.bytes(s.keychains + "/" + $0) } == before)
    }

    @Test func forceFileKeepsTheKeyInTheFileEvenWithAService() throws {
        let s = KeychainScratch()
        let k = Keychain(root: s.root, policy: DeviceKeyPolicy(secretStore: InMemorySecretStore(), forceFile: true), now: testClock)
        try k.add(generic("alice", "svc"), data: secret("pw"), context: try context("com.example.A"))
        #expect(try k.deviceKeyStore() == .file)
        #expect(s.files().contains("device.key"))
    }

    /// The kernel's after-first-unlock keys serve afterFirstUnlock items
    /// without the service until forgotten, never a whenUnlocked item, and a
    /// bundle that fails its checks is never used. Against the kernel keyring
    /// when the kernel allows it.
    @Test(arguments: stores().indices)
    func theKernelKeysServeAfterFirstUnlockItemsUntilForgottenAndAreAlwaysChecked(_ i: Int) throws {
        let store = stores()[i].1
        if store is LibSecretStore && !LibSecretStore.kernelCacheIsAvailable() { return }
        let s = KeychainScratch()
        let policy = DeviceKeyPolicy(secretStore: store, kernelKeys: .seconds(60))
        let app = try context("com.example.A")
        try Keychain(root: s.root, policy: policy, now: testClock).add(generic("alice", "svc", accessibility: .afterFirstUnlock), data: secret("pw"), context: app)
        try Keychain(root: s.root, policy: policy, now: testClock).add(generic("alice", "wu"), data: secret("wu"), context: app)
        let deviceID = try #require(try s.keychain().deviceID())
        let cacheName = DeviceKey.cacheName(deviceID)
        defer { store.forgetCached(cacheName) }
        try store.clear(schema: DeviceKey.schema, attributes: DeviceKey.serviceAttributes(root: s.root, deviceID: deviceID))
        // The service item is gone, the kernel's keys still open the afterFirstUnlock item ...
        #expect(text(try Keychain(root: s.root, policy: policy, now: testClock).copyMatching(query(service: "svc"), context: app)[0].data) == "pw")
        // ... but not a whenUnlocked one, not without the kernel keys, and not once they are forgotten.
        let expected = KeychainError.keyStoreUnavailable("the keychain records its key in the Secret Service, but the item for device \(deviceID) is gone")
        #expect(throws: expected) { _ = try Keychain(root: s.root, policy: policy, now: testClock).copyMatching(query(service: "wu"), context: app) }
        #expect(throws: expected) { _ = try Keychain(root: s.root, policy: DeviceKeyPolicy(secretStore: store), now: testClock).copyMatching(query(), context: app) }
        store.forgetCached(cacheName)
        #expect(throws: expected) { _ = try Keychain(root: s.root, policy: policy, now: testClock).copyMatching(query(), context: app) }
        // Wrong keys in the kernel are never used: they fail the checks in device.plist.
        store.cache(cacheName, SecureBytes.random(count: 96), seconds: 60)
        #expect(throws: expected) { _ = try Keychain(root: s.root, policy: policy, now: testClock).copyMatching(query(), context: app) }
    }

    /// `make test` (which sets APPHOME_TEST_VIA_MAKE) runs inside
    /// scripts/with-keyring.sh, so the real service must answer there; a
    /// plain `swift test` runs the in-memory half only.
    @Test(.enabled(if: ProcessInfo.processInfo.environment["APPHOME_TEST_VIA_MAKE"] == "1"))
    func theRealServiceAnswersInMakeTest() throws {
        #expect(keyringSession)
        let store = LibSecretStore()
        let attributes = ["probe": "make-test"]
        try store.store(schema: schema, attributes: attributes, label: "AppHome test probe", secret: SecureBytes(utf8: "probe-secret"))
        let found = try #require(try store.lookup(schema: schema, attributes: attributes))
        #expect(found.constantTimeEquals(SecureBytes(utf8: "probe-secret")))
        #expect(try store.clear(schema: schema, attributes: attributes))
        #expect(try store.lookup(schema: schema, attributes: attributes) == nil)
    }
}
