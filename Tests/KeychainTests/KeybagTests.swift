import Synchronization
import Testing
@testable import Keychain

/// A Secret Service twin that counts the look-ups of the device key.
final class CountingSecretStore: SecretStore {
    let inner = InMemorySecretStore()
    private let count = Mutex(0)
    var lookups: Int { count.withLock { $0 } }
    func store(schema: String, attributes: [String: String], label: String, secret: SecureBytes) throws(KeychainError) {
        try inner.store(schema: schema, attributes: attributes, label: label, secret: secret)
    }
    func lookup(schema: String, attributes: [String: String]) throws(KeychainError) -> SecureBytes? {
        count.withLock { $0 += 1 }
        return try inner.lookup(schema: schema, attributes: attributes)
    }
    func lookupState(schema: String, attributes: [String: String]) throws(KeychainError) -> SecretLookup {
        count.withLock { $0 += 1 }
        return try inner.lookupState(schema: schema, attributes: attributes)
    }
    @discardableResult
    func clear(schema: String, attributes: [String: String]) throws(KeychainError) -> Bool { try inner.clear(schema: schema, attributes: attributes) }
    func lockCollection(schema: String, attributes: [String: String]) throws(KeychainError) { try inner.lockCollection(schema: schema, attributes: attributes) }
    func unlockCollection(schema: String, attributes: [String: String], password: SecureBytes?) throws(KeychainError) {
        try inner.unlockCollection(schema: schema, attributes: attributes, password: password)
    }
}

/// prefsd's key policy: a counting Secret Service twin, and a keybag whose
/// lock watcher runs.
func keybagPolicy() -> (CountingSecretStore, Keybag, DeviceKeyPolicy) {
    let store = CountingSecretStore()
    let keybag = Keybag()
    keybag.watcherStarted()
    var policy = DeviceKeyPolicy(secretStore: store, kernelKeys: .off)
    policy.keybag = keybag
    return (store, keybag, policy)
}

/// prefsd's keybag: calls need no Secret Service round trip each, and the
/// whenUnlocked keys go the moment the store locks.
@Suite struct KeybagTests {
    func setUp() throws -> (KeychainScratch, CountingSecretStore, Keybag, DeviceKeyPolicy, KeychainContext) {
        let s = KeychainScratch()
        let (store, keybag, policy) = keybagPolicy()
        let a = try context("com.example.A")
        let k = Keychain(root: s.root, policy: policy, now: testClock)
        try k.add(generic("when", "svc"), data: secret("w"), context: a)
        try k.add(generic("after", "svc", accessibility: .afterFirstUnlock), data: secret("f"), context: a)
        return (s, store, keybag, policy, a)
    }

    @Test func lookUpsThroughTheKeybagAskTheStoreOnce() throws {
        let (s, store, _, policy, a) = try setUp()
        let before = store.lookups
        for _ in 0..<20 {
            let k = Keychain(root: s.root, policy: policy, now: testClock)
            #expect(text(try k.copyMatching(query(account: "when"), context: a)[0].data) == "w")
            #expect(text(try k.copyMatching(query(account: "after"), context: a)[0].data) == "f")
        }
        #expect(store.lookups - before <= 1)
    }

    @Test func aLockDropsTheWhenUnlockedKeysAtOnceAndKeepsTheOthers() throws {
        let (s, store, keybag, policy, a) = try setUp()
        let k = Keychain(root: s.root, policy: policy, now: testClock)
        _ = try k.copyMatching(query(account: "when"), context: a)
        #expect(keybag.holdsRootKey)
        try store.lockCollection(schema: DeviceKey.schema, attributes: [:])
        keybag.storeLocked()  // what the Secret Service watcher does on PropertiesChanged Locked=true
        #expect(!keybag.holdsRootKey)
        let lookups = store.lookups
        #expect(status { () throws(KeychainError) in _ = try k.copyMatching(query(account: "when"), context: a) } == -25308)
        #expect(text(try k.copyMatching(query(account: "after"), context: a)[0].data) == "f")
        #expect(store.lookups == lookups, "a known lock is not asked about again")
        try store.unlockCollection(schema: DeviceKey.schema, attributes: [:], password: secret("password"))
        keybag.storeMayHaveUnlocked()
        #expect(text(try k.copyMatching(query(account: "when"), context: a)[0].data) == "w")
    }

    @Test func aChangeThatMayBeALockMakesTheNextCallAsk() throws {
        let (s, store, keybag, policy, a) = try setUp()
        let k = Keychain(root: s.root, policy: policy, now: testClock)
        _ = try k.copyMatching(query(account: "when"), context: a)
        try store.lockCollection(schema: DeviceKey.schema, attributes: [:])
        keybag.storeChanged()
        #expect(status { () throws(KeychainError) in _ = try k.copyMatching(query(account: "when"), context: a) } == -25308)
        #expect(keybag.storeIsLocked)
    }
}
