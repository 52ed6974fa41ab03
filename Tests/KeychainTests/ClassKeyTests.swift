import Foundation
import Testing
@testable import Keychain

/// Accessibility classes that decide when an item opens, against the
/// in-memory store (its one collection locks and unlocks like the Secret
/// Service's; its cache plays the kernel keyring). The same rules against
/// the real gnome-keyring are in `LockedKeyringTests`.
@Suite struct ClassKeyTests {
    /// A keychain with one item of every class, its key in `store`.
    final class Setup {
        let scratch = KeychainScratch()
        let store = InMemorySecretStore()
        let app: KeychainContext
        var policy: DeviceKeyPolicy { DeviceKeyPolicy(secretStore: store, kernelKeys: .untilReboot) }

        init() throws {
            app = try context("com.example.A")
            for c in Accessibility.allCases {
                try keychain().add(generic("alice", c.name, accessibility: c), data: secret("s-" + c.name), context: app)
            }
        }

        func keychain() -> Keychain { Keychain(root: scratch.root, policy: policy, now: testClock) }

        /// The status of reading the item of class `c` in a fresh keychain (as a new process would).
        func read(_ c: Accessibility) -> Int32 {
            status { () throws(KeychainError) in
                let found = try keychain().copyMatching(query(service: c.name), context: app)
                #expect(text(found[0].data) == "s-" + c.name)
            }
        }

        func readable() -> [Accessibility] { Accessibility.allCases.filter { read($0) == 0 } }
    }

    static let afterFirstUnlock: [Accessibility] = [.afterFirstUnlock, .afterFirstUnlockThisDeviceOnly]

    @Test func everyClassOpensWhileTheStoreIsUnlocked() throws {
        let s = try Setup()
        #expect(s.readable() == Accessibility.allCases)
        #expect(try s.keychain().lockInfo() == KeychainLockInfo(state: .unlocked, store: .secretService, afterFirstUnlockOpen: true))
    }

    @Test func aLockedStoreLeavesOnlyTheAfterFirstUnlockClassesOpen() throws {
        let s = try Setup()
        try s.keychain().lock()
        #expect(s.store.isLocked)
        #expect(s.readable() == Self.afterFirstUnlock)
        #expect(s.read(.whenUnlocked) == -25308)
        #expect(throws: KeychainError.interactionNotAllowed("the keychain is locked: the Secret Service collection holding its device key is locked")) {
            _ = try s.keychain().copyMatching(query(service: "whenUnlockedThisDeviceOnly"), context: s.app)
        }
        #expect(try s.keychain().lockInfo() == KeychainLockInfo(state: .locked, store: .secretService, afterFirstUnlockOpen: true))
    }

    @Test func writesOfAClosedClassFailAndChangeNothing() throws {
        let s = try Setup()
        try s.keychain().lock()
        let before = s.scratch.files().map { s.scratch.bytes(s.scratch.keychains + "/" + $0) }
        #expect(status { () throws(KeychainError) in try s.keychain().add(generic("bob", "new"), data: secret("x"), context: s.app) } == -25308)
        #expect(status { () throws(KeychainError) in try s.keychain().delete(query(service: "whenUnlocked"), context: s.app) } == -25308)
        var changes = ItemChanges()
        changes.data = secret("changed")
        #expect(status { () throws(KeychainError) in try s.keychain().update(query(service: "whenUnlocked", data: false), with: changes, context: s.app) } == -25308)
        // A delete matching items of both kinds deletes none of them.
        #expect(status { () throws(KeychainError) in try s.keychain().delete(query(account: "alice"), context: s.app) } == -25308)
        #expect(s.scratch.files().map { s.scratch.bytes(s.scratch.keychains + "/" + $0) } == before)
        // The open classes still take writes.
        try s.keychain().add(generic("bob", "new", accessibility: .afterFirstUnlock), data: secret("x"), context: s.app)
        try s.keychain().update(query(service: "afterFirstUnlock", data: false), with: changes, context: s.app)
        #expect(text(try s.keychain().copyMatching(query(service: "afterFirstUnlock"), context: s.app)[0].data) == "changed")
    }

    @Test func aSearchOverMixedClassesReturnsTheOpenItemsOnly() throws {
        let s = try Setup()
        try s.keychain().lock()
        let found = try s.keychain().copyMatching(query(account: "alice", limit: .all, data: false, attributes: true), context: s.app)
        #expect(found.compactMap { $0.attributes?.accessibility } == Self.afterFirstUnlock)
    }

    @Test func unlockingOpensEveryClassAgain() throws {
        let s = try Setup()
        try s.keychain().lock()
        #expect(throws: KeychainError.wrongPassphrase("the collection password is wrong")) { try s.keychain().unlock(password: secret("nope")) }
        #expect(s.readable() == Self.afterFirstUnlock)
        try s.keychain().unlock(password: secret("password"))
        #expect(s.readable() == Accessibility.allCases)
    }

    /// A reboot clears the kernel's keys: until the next unlock nothing opens.
    @Test func afterARebootNothingOpensUntilTheFirstUnlock() throws {
        let s = try Setup()
        try s.keychain().lock()
        try s.keychain().forgetAfterFirstUnlockKeys()
        #expect(s.readable() == [])
        #expect(throws: KeychainError.interactionNotAllowed("the keychain has not been unlocked since the system started: the Secret Service collection holding its device key is locked")) {
            _ = try s.keychain().copyMatching(query(service: "afterFirstUnlock"), context: s.app)
        }
        #expect(try s.keychain().lockInfo().afterFirstUnlockOpen == false)
        try s.keychain().unlock(password: secret("password"))
        try s.keychain().lock()
        #expect(s.readable() == Self.afterFirstUnlock)
    }

    /// Without the kernel's keys (`APPHOME_KEYCHAIN_KEY_CACHE=0`) every class closes with the store.
    @Test func withoutKernelKeysEveryClassClosesWithTheStore() throws {
        let s = try Setup()
        try s.keychain().lock()
        let k = Keychain(root: s.scratch.root, policy: DeviceKeyPolicy(secretStore: s.store, kernelKeys: .off), now: testClock)
        #expect(status { () throws(KeychainError) in _ = try k.copyMatching(query(service: "afterFirstUnlock"), context: s.app) } == -25308)
    }

    /// A bundle in the kernel that does not belong to this keychain is never used.
    @Test func aForeignKernelBundleIsNeverUsed() throws {
        let s = try Setup()
        let id = try #require(try s.keychain().deviceID())
        try s.keychain().lock()
        s.store.cache(DeviceKey.cacheName(id), SecureBytes.random(count: 96), seconds: 0)
        #expect(s.readable() == [])
    }

    /// A `whenUnlocked` key is not kept past the call: one keychain object
    /// stops reading when the store locks between two calls.
    @Test func aWhenUnlockedKeyIsNotKeptPastTheCall() throws {
        let s = try Setup()
        let k = s.keychain()
        #expect(text(try k.copyMatching(query(service: "whenUnlocked"), context: s.app)[0].data) == "s-whenUnlocked")
        try k.lock()
        #expect(status { () throws(KeychainError) in _ = try k.copyMatching(query(service: "whenUnlocked"), context: s.app) } == -25308)
    }

    /// With a plain key file nothing locks, and the passcode class never opens.
    @Test func aPlainKeyFileOpensEveryClassButThePasscodeOne() throws {
        let s = KeychainScratch()
        let app = try context("com.example.A")
        let k = s.keychain()
        for c in Accessibility.allCases where c != .whenPasscodeSetThisDeviceOnly {
            try k.add(generic("alice", c.name, accessibility: c), data: secret("x"), context: app)
        }
        #expect(throws: KeychainError.interactionNotAllowed("whenPasscodeSetThisDeviceOnly items need a protected device key (the Secret Service); this keychain keeps its key in a plain key file")) {
            try k.add(generic("alice", "passcode", accessibility: .whenPasscodeSetThisDeviceOnly), data: secret("x"), context: app)
        }
        #expect(try k.lockInfo() == KeychainLockInfo(state: .unlocked, store: .file, afterFirstUnlockOpen: true))
        #expect(throws: KeychainError.invalidParameter("this keychain keeps its device key in a plain key file, which cannot be locked or unlocked")) { try k.lock() }
    }

    /// `--accessibility` takes Apple's names.
    @Test func classNamesParseAsApplesWithoutThePrefix() {
        #expect(Accessibility(name: "afterFirstUnlockThisDeviceOnly") == .afterFirstUnlockThisDeviceOnly)
        #expect(Accessibility(name: "kSecAttrAccessibleWhenUnlocked") == .whenUnlocked)
        #expect(Accessibility(name: "WhenPasscodeSetThisDeviceOnly") == .whenPasscodeSetThisDeviceOnly)
        #expect(Accessibility(name: "always") == nil)
        #expect(Accessibility(name: "") == nil)
    }
}
