import Foundation
import Testing
@testable import Keychain
import PropertyList

/// A keychain written by the format-1 writer (before class keys) opens, and
/// moves to class keys (format 2) and a sealed record (format 3) on its
/// first use with the device key.
@Suite struct MigrationTests {
    static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/format1").path
    static let files = ["device.plist", "device.key", "keys.plist", "com.example.A.keychain"]

    /// A scratch root holding the format-1 fixture.
    func formatOne() throws -> KeychainScratch {
        let s = KeychainScratch()
        try FileManager.default.createDirectory(atPath: s.keychains, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        for name in Self.files {
            let target = s.keychains + "/" + name
            try FileManager.default.copyItem(atPath: Self.fixture + "/" + name, toPath: target)
            chmod(target, 0o600)
        }
        return s
    }

    func version(_ s: KeychainScratch, _ name: String) throws -> PlistValue? {
        try recordField(s, name, "FormatVersion")
    }

    @Test func aFormatOneKeychainOpensAndMovesToClassKeys() throws {
        let s = try formatOne()
        #expect(try version(s, "device.plist") == .integer(1))
        let app = try context("com.example.A")
        let found = try s.keychain().copyMatching(query(account: "alice", attributes: true), context: app)
        #expect(text(found[0].data) == "pw-format1")
        #expect(found[0].attributes?.label == "Format 1")
        #expect(found[0].attributes?.accessibility == .whenUnlocked)
        #expect(try version(s, "device.plist") == .integer(3))
        // The group file is written in the current group format (3: Secret Service attributes).
        #expect(try version(s, "com.example.A.keychain") == .integer(3))
        #expect(try recordField(s, "device.plist", "ClassKeyChecks")?.dictionaryValue?.keys.sorted() == ["ck", "cku", "kek"])
        // The moved keychain reads and takes writes of every class as before.
        var web = ItemQuery(itemClass: .internetPassword)
        web.server = "example.com"; web.returnData = true
        #expect(text(try s.keychain().copyMatching(web, context: app)[0].data) == "web-format1")
        try s.keychain().add(generic("bob", "svc", accessibility: .afterFirstUnlockThisDeviceOnly), data: secret("new"), context: app)
        #expect(text(try s.keychain().copyMatching(query(account: "bob"), context: app)[0].data) == "new")
        #expect(text(try s.keychain().copyMatching(query(account: "alice"), context: app)[0].data) == "pw-format1")
    }

    /// A format-1 keychain whose key is in a locked Secret Service waits for
    /// the first unlock: nothing opens, nothing is rewritten.
    @Test func aFormatOneKeychainInALockedStoreWaitsForTheFirstUnlock() throws {
        let s = try formatOne()
        // The same keychain with its key moved into the (in-memory) Secret Service.
        let store = InMemorySecretStore()
        let recordBytes = try #require(s.bytes(s.keychains + "/device.plist"))
        var record = try #require(try PlistCodec.decode(recordBytes).dictionaryValue)
        record["RootKeyStore"] = .string("secret-service")
        try s.write(try PlistCodec.encode(.dictionary(record), format: .binary), s.keychains + "/device.plist")
        let key = try #require(try DeviceKey.readKeyFile(s.keychains + "/device.key"))
        unlink(s.keychains + "/device.key")
        guard case .string(let deviceID)? = record["DeviceID"] else { Issue.record("no device id"); return }
        try store.store(schema: DeviceKey.schema, attributes: DeviceKey.serviceAttributes(root: s.root, deviceID: deviceID),
                        label: "test", secret: DeviceKey.toHex(key))
        try store.lockCollection(schema: DeviceKey.schema, attributes: [:])
        let keychain = Keychain(root: s.root, policy: DeviceKeyPolicy(secretStore: store, kernelKeys: .untilReboot), now: testClock)
        let app = try context("com.example.A")
        let before = s.files().map { s.bytes(s.keychains + "/" + $0) }
        #expect(status { () throws(KeychainError) in _ = try keychain.copyMatching(query(account: "alice"), context: app) } == -25308)
        #expect(s.files().map { s.bytes(s.keychains + "/" + $0) } == before)
        try keychain.unlock(password: secret("password"))
        #expect(try version(s, "device.plist") == .integer(3))
        try store.lockCollection(schema: DeviceKey.schema, attributes: [:])
        // Moved, and the first unlock put the after-first-unlock keys in the kernel (here: the store's cache).
        try keychain.add(generic("bob", "svc", accessibility: .afterFirstUnlock), data: secret("bg"), context: app)
        #expect(text(try keychain.copyMatching(query(account: "bob"), context: app)[0].data) == "bg")
        #expect(status { () throws(KeychainError) in _ = try keychain.copyMatching(query(account: "alice"), context: app) } == -25308)
    }
}
