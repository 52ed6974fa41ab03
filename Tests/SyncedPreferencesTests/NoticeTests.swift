import AppHomeSystem
import Foundation
import PropertyList
import Synchronization
import Testing
import TestSupport
@testable import SyncedPreferences

@Suite("Notices of a synced store and the Swift API")
struct NoticeTests {
    /// Two machines, `b` observing `storeA`, and what `b` heard of `a`'s
    /// first value (`one` = 1).
    static func observed(_ scratch: String) throws -> (a: Machine, b: Machine, observer: KeyValueObserver, first: [KeyValueChange]) {
        let a = try Machine(scratch, "a")
        let b = try Machine(scratch, "b")
        let observer = try KeyValueObserver(sync: b.sync, store: storeA)
        try a.set(storeA, "one", .integer(1))
        try b.receive(from: a); _ = try b.pass()
        return (a, b, observer, observer.next(timeout: 1))
    }

    @Test("the first values are an initial sync, later ones a server change, a new folder an account change")
    func reasonsFollowTheSetUp() throws {
        let scratch = ScratchDirectory.make("kv-notice")
        defer { ScratchDirectory.remove(scratch) }
        let (a, b, observer, first) = try Self.observed(scratch)
        #expect(first == [KeyValueChange(sequence: 1, reason: .initialSyncChange, keys: ["one"])])
        a.clock.advance(10)
        try a.set(storeA, "two", .integer(2))
        try a.set(storeA, "one", nil)
        try b.receive(from: a); _ = try b.pass()
        #expect(observer.next(timeout: 1) == [KeyValueChange(sequence: 2, reason: .serverChange, keys: ["one", "two"])])
        // Nothing new: no notice.
        _ = try b.pass()
        #expect(observer.next(timeout: 0.2).isEmpty)
        // Another folder: what it brings is an account change.
        let other = scratch + "/elsewhere"
        try FileManager.default.createDirectory(atPath: other, withIntermediateDirectories: true)
        try b.sync.setUp(folder: other)
        let c = try Machine(scratch, "c")
        try c.set(storeA, "three", .integer(3))
        try FileManager.default.copyItem(atPath: c.folder + "/" + c.device + ".kvlog", toPath: other + "/" + c.device + ".kvlog")
        _ = try b.sync.pass()
        #expect(observer.next(timeout: 1).map(\.reason) == [.accountChange])
    }

    @Test("a watcher keeps hearing a store after its directory is removed and made again")
    func observerOutlivesItsDirectory() throws {
        let scratch = ScratchDirectory.make("kv-notice-gone")
        defer { ScratchDirectory.remove(scratch) }
        let (a, b, observer, first) = try Self.observed(scratch)
        #expect(first.map(\.sequence) == [1])
        // The directory goes (its inotify watch with it), and a while later comes back, numbering from 1 again.
        try FileManager.default.removeItem(atPath: b.sync.directory)
        #expect(observer.next(timeout: 0.2).isEmpty)
        try b.sync.setUp(folder: b.folder)
        try b.receive(from: a); _ = try b.pass()
        let heard = observer.next(timeout: 5)
        #expect(heard.map(\.sequence) == [1] && heard.first?.keys == ["one"], "\(heard)")
        // And the new directory is watched: the next notice is heard too.
        a.clock.advance(10)
        try a.set(storeA, "two", .integer(2))
        try b.receive(from: a); _ = try b.pass()
        #expect(observer.next(timeout: 5).map(\.sequence) == [2])
    }

    @Test("the Swift API reads, writes, removes and hears about remote changes with their reason")
    func swiftAPI() throws {
        let scratch = ScratchDirectory.make("kv-api")
        defer { ScratchDirectory.remove(scratch) }
        let a = try Machine(scratch, "a")
        let b = try Machine(scratch, "b")
        let storeOnA = UbiquitousKeyValueStore(sync: a.sync, identifier: storeA)
        let storeOnB = UbiquitousKeyValueStore(sync: b.sync, identifier: storeA)
        try storeOnA.set(.integer(14), forKey: "fontSize")
        try storeOnA.set(.string("dark"), forKey: "theme")
        try storeOnA.removeObject(forKey: "theme")
        #expect(storeOnA.longLong(forKey: "fontSize") == 14)
        #expect(storeOnA.string(forKey: "theme") == nil)
        let heard = Mutex<[KeyValueChange]>([])
        let observation = try storeOnB.observe { change in heard.withLock { $0.append(change) } }
        defer { observation.cancel() }
        try b.receive(from: a)
        #expect(storeOnB.synchronize())
        #expect(storeOnB.longLong(forKey: "fontSize") == 14)
        let deadline = SystemClock.monotonicSeconds() + 5
        while heard.withLock({ $0.isEmpty }) && SystemClock.monotonicSeconds() < deadline { usleep(20_000) }
        #expect(heard.withLock { $0 } == [KeyValueChange(sequence: 1, reason: .initialSyncChange, keys: ["fontSize"])])
        // A refused write is a quota-violation notice too.
        #expect(throws: SyncError.self) { try storeOnB.set(.integer(1), forKey: String(repeating: "x", count: 65)) }
        while heard.withLock({ $0.count < 2 }) && SystemClock.monotonicSeconds() < deadline + 5 { usleep(20_000) }
        #expect(heard.withLock { $0.last?.reason } == .quotaViolationChange)
    }

    @Test("forgetting a store writes a removal of every key, which empties it elsewhere")
    func forgetWritesTombstones() throws {
        let scratch = ScratchDirectory.make("kv-forget")
        defer { ScratchDirectory.remove(scratch) }
        let a = try Machine(scratch, "a")
        let b = try Machine(scratch, "b")
        try a.set(storeA, "k1", .integer(1))
        try a.set(storeA, "k2", .integer(2))
        try b.receive(from: a); _ = try b.pass()
        #expect(try b.values(storeA).count == 2)
        a.clock.advance(5)
        #expect(try a.sync.forget(storeA).count == 2)
        try b.receive(from: a); _ = try b.pass()
        #expect(try b.values(storeA).isEmpty)
    }
}
