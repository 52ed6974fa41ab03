import AppHomeSystem
import Foundation
import Glibc
import Testing
@testable import Keychain

/// prefsd's look-ups read the keychain's files through a ``KeychainReadCache``:
/// a `stat` per file while nothing changed, and every change another
/// process makes (an add, a delete, a shredded group, a tampered file) is
/// seen on the next call.
@Suite struct KeychainReadCacheTests {
    @Test func aCachedReaderSeesEveryChangeAnotherWriterMakes() throws {
        let s = KeychainScratch()
        let a = try context("com.example.A")
        let writer = s.keychain()
        let cache = KeychainReadCache()
        func reader() -> Keychain { Keychain(root: s.root, policy: .fileOnly, now: testClock, readCache: cache) }
        #expect(status { () throws(KeychainError) in _ = try reader().copyMatching(query(account: "ray"), context: a) } == -25300)
        try writer.add(generic("ray", "svc"), data: secret("one"), context: a)
        #expect(text(try reader().copyMatching(query(account: "ray"), context: a)[0].data) == "one")
        #expect(text(try reader().copyMatching(query(account: "ray"), context: a)[0].data) == "one")
        var c = ItemChanges()
        c.data = secret("two")
        try writer.update(query(account: "ray", data: false), with: c, context: a)
        #expect(text(try reader().copyMatching(query(account: "ray"), context: a)[0].data) == "two")
        try writer.add(generic("kay", "svc"), data: secret("three"), context: a)
        #expect(try reader().copyMatching(query(limit: .all), context: a).count == 2)
        try writer.delete(query(account: "ray", data: false), context: a)
        #expect(status { () throws(KeychainError) in _ = try reader().copyMatching(query(account: "ray"), context: a) } == -25300)
        // The group shredded (an uninstall): its key is gone, so is every item.
        try writer.shred([try group("com.example.A")])
        #expect(status { () throws(KeychainError) in _ = try reader().copyMatching(query(account: "kay"), context: a) } == -25300)
    }

    @Test func aFileTamperedWithAfterItWasKeptIsRefused() throws {
        let s = KeychainScratch()
        let a = try context("com.example.A")
        try s.keychain().add(generic("ray", "svc"), data: secret("one"), context: a)
        let cache = KeychainReadCache()
        let reader = Keychain(root: s.root, policy: .fileOnly, now: testClock, readCache: cache)
        #expect(text(try reader.copyMatching(query(account: "ray"), context: a)[0].data) == "one")
        // One byte of an item changed in place (same size, same inode): the file's times move on.
        let file = s.keychains + "/com.example.A.keychain"
        var bytes = try #require(s.bytes(file))
        let at = try #require(bytes.indices.last(where: { bytes[$0] != 0 }).map { $0 - 40 })
        bytes[at] ^= 0x01
        usleep(20_000)  // past the kernel's coarse file-time tick
        let fd = open(file, O_WRONLY)
        #expect(fd >= 0)
        #expect(bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) } == bytes.count)
        close(fd)
        #expect(status { () throws(KeychainError) in _ = try reader.copyMatching(query(account: "ray"), context: a) } == -26275,
                "errSecDecode: the file failed its seal")
    }

    @Test func aLookUpThatMayNotWaitLeavesTheSecretServiceToAWorker() throws {
        let s = KeychainScratch()
        let (store, keybag, policy) = keybagPolicy()
        let a = try context("com.example.A")
        try Keychain(root: s.root, policy: policy, now: testClock).add(generic("ray", "svc"), data: secret("w"), context: a)
        keybag.forgetAll()
        var loop = policy
        loop.mayWait = false
        let cache = KeychainReadCache()
        let lookups = store.lookups
        #expect(throws: KeychainError.wouldBlock) {
            try Keychain(root: s.root, policy: loop, now: testClock, readCache: cache).copyMatching(query(account: "ray"), context: a)
        }
        #expect(store.lookups == lookups, "the store was not asked")
        // A worker's call fills the keybag; the loop's calls then need no one.
        #expect(text(try Keychain(root: s.root, policy: policy, now: testClock, readCache: cache).copyMatching(query(account: "ray"), context: a)[0].data) == "w")
        #expect(text(try Keychain(root: s.root, policy: loop, now: testClock, readCache: cache).copyMatching(query(account: "ray"), context: a)[0].data) == "w")
        // A lock the watcher saw is answered at once, without waiting.
        keybag.storeLocked()
        #expect(status { () throws(KeychainError) in _ = try Keychain(root: s.root, policy: loop, now: testClock).copyMatching(query(account: "ray"), context: a) } == -25308)
    }

    @Test func aLargeGroupIsSearchedOnAWorker() throws {
        let s = KeychainScratch()
        let a = try context("com.example.A")
        let writer = s.keychain()
        for i in 0...Keychain.manyItems { try writer.add(generic("user\(i)", "svc"), data: secret("\(i)"), context: a) }
        var loop = DeviceKeyPolicy.fileOnly
        loop.mayWait = false
        let cache = KeychainReadCache()
        #expect(throws: KeychainError.wouldBlock) {
            try Keychain(root: s.root, policy: loop, now: testClock, readCache: cache).copyMatching(query(account: "user7"), context: a)
        }
        #expect(text(try Keychain(root: s.root, policy: .fileOnly, now: testClock, readCache: cache).copyMatching(query(account: "user7"), context: a)[0].data) == "7")
        #expect(throws: KeychainError.wouldBlock, "kept or not, the group is too large for the loop") {
            try Keychain(root: s.root, policy: loop, now: testClock, readCache: cache).copyMatching(query(account: "user7"), context: a)
        }
    }
}
