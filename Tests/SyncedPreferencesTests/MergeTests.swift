import AppHomeSystem
import Foundation
import PropertyList
import Testing
import TestSupport
@testable import SyncedPreferences

/// A deterministic random source, so a failing order can be replayed.
struct SeededRandom: RandomNumberGenerator {
    var state: UInt64
    init(_ seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// A clock tests move by hand.
final class ManualClock: @unchecked Sendable {
    private let lock = NSLock()
    private var now: Int64
    init(_ start: Int64) { now = start }
    func read() -> Int64 { lock.lock(); defer { lock.unlock() }; return now }
    func advance(_ ms: Int64) { lock.lock(); now += ms; lock.unlock() }
    func set(_ ms: Int64) { lock.lock(); now = ms; lock.unlock() }
}

/// One machine with no engine: its root and its own copy of the sync folder.
struct Machine {
    let root: String
    let folder: String
    let clock: ManualClock
    let sync: KeyValueSync

    init(_ scratch: String, _ name: String, clock start: Int64 = 1_800_000_000_000) throws {
        root = scratch + "/" + name
        folder = scratch + "/" + name + "-folder"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let clock = ManualClock(start)
        self.clock = clock
        sync = KeyValueSync(root: root, wallClock: { clock.read() })
        try sync.setUp(folder: folder)
    }

    var device: String { try! sync.status().device }

    func set(_ store: StoreIdentifier, _ key: String, _ value: PlistValue?) throws {
        try sync.commit(store) { $0[PlistKey(key)] = value }
    }

    /// The newest change a log holds, to tell an older copy from a newer one.
    static func newest(_ path: String) -> ChangeStamp? {
        guard let data = FileManager.default.contents(atPath: path), let log = try? ChangeLog(decoding: Array(data)) else { return nil }
        return log.entries.map(\.stamp).max()
    }

    /// Copies every log of `other`'s folder that `pick` chooses into this one
    /// (as an engine would: a temporary file renamed into place; never an
    /// older copy of a log over a newer one, which an engine's versions prevent).
    func receive(from other: Machine, pick: (String) -> Bool = { _ in true }) throws {
        for name in try FileManager.default.contentsOfDirectory(atPath: other.folder) where name.hasSuffix(".kvlog") && pick(name) {
            if let mine = Self.newest(folder + "/" + name), let theirs = Self.newest(other.folder + "/" + name), !(mine < theirs) { continue }
            let tmp = folder + "/.syncthing." + name + ".tmp"
            try? FileManager.default.removeItem(atPath: tmp)
            try FileManager.default.copyItem(atPath: other.folder + "/" + name, toPath: tmp)
            if FileManager.default.fileExists(atPath: folder + "/" + name) { try FileManager.default.removeItem(atPath: folder + "/" + name) }
            try FileManager.default.moveItem(atPath: tmp, toPath: folder + "/" + name)
        }
    }

    func pass() throws -> SyncPassReport {
        var warnings: [String] = []
        let report = try sync.pass(warn: { warnings.append($0) })
        return report
    }

    func values(_ store: StoreIdentifier) throws -> [PlistKey: PlistValue] { try sync.read(store) }
}

let storeA = try! StoreIdentifier("ABCDE12345.com.example.notes")
let storeB = try! StoreIdentifier("ABCDE12345.com.example.shared")

@Suite("Merging synced key-value stores without an engine")
struct MergeTests {
    /// Random writes and removals on `machines`, logs copied between their
    /// folders in random subsets and orders, clocks skewed and advancing
    /// unevenly; then everyone gets everything and every store is equal.
    func converge(machines count: Int, seed: UInt64) throws {
        let scratch = ScratchDirectory.make("kv-merge")
        defer { ScratchDirectory.remove(scratch) }
        var rng = SeededRandom(seed)
        var machines: [Machine] = []
        for i in 0..<count {
            // Clocks up to ten seconds apart, some behind the others.
            machines.append(try Machine(scratch, "m\(i)", clock: 1_800_000_000_000 + Int64.random(in: -10_000...10_000, using: &rng)))
        }
        let keys = (0..<12).map { "key\($0)" }
        for _ in 0..<120 {
            let m = machines[Int.random(in: 0..<count, using: &rng)]
            m.clock.advance(Int64.random(in: 0...40, using: &rng))
            switch Int.random(in: 0..<10, using: &rng) {
            case 0..<6:
                let store = Bool.random(using: &rng) ? storeA : storeB
                let value: PlistValue = Bool.random(using: &rng) ? .integer(Int128(Int.random(in: 0..<1000, using: &rng))) : .string("v\(Int.random(in: 0..<100, using: &rng))")
                try m.set(store, keys.randomElement(using: &rng)!, value)
            case 6..<8:
                try m.set(Bool.random(using: &rng) ? storeA : storeB, keys.randomElement(using: &rng)!, nil)
            default:
                // A delivery: some of another machine's logs arrive, then a pass (or not yet).
                let from = machines[Int.random(in: 0..<count, using: &rng)]
                guard from.root != m.root else { continue }
                try m.receive(from: from, pick: { _ in Bool.random(using: &rng) })
                if Bool.random(using: &rng) { _ = try m.pass() }
            }
        }
        // Everything reaches everyone, in a random order of machines.
        for _ in 0..<2 {
            for m in machines.shuffled(using: &rng) {
                for other in machines.shuffled(using: &rng) where other.root != m.root { try m.receive(from: other) }
                _ = try m.pass()
            }
        }
        let first = try machines[0].values(storeA), firstB = try machines[0].values(storeB)
        #expect(!first.isEmpty || !firstB.isEmpty)
        for m in machines.dropFirst() {
            #expect(try m.values(storeA) == first, "store A differs on \(m.root)")
            #expect(try m.values(storeB) == firstB, "store B differs on \(m.root)")
        }
        // The states agree too (tombstones and stamps), not only the values.
        let states = try machines.map { try $0.sync.loadState(storeA) }
        for s in states.dropFirst() {
            #expect(s.entries.count == states[0].entries.count)
            for (k, e) in s.entries { #expect(states[0].entries[k]?.stamp == e.stamp) }
        }
    }

    @Test("two roots end with the same stores", arguments: [1, 2, 3] as [UInt64])
    func twoRootsConverge(seed: UInt64) throws { try converge(machines: 2, seed: seed) }

    @Test("three roots end with the same stores", arguments: [11, 12, 13] as [UInt64])
    func threeRootsConverge(seed: UInt64) throws { try converge(machines: 3, seed: seed) }

    @Test("the same logs give the same store in any order of arrival")
    func orderOfArrivalDoesNotMatter() throws {
        let scratch = ScratchDirectory.make("kv-order")
        defer { ScratchDirectory.remove(scratch) }
        let writers = try (0..<3).map { try Machine(scratch, "w\($0)", clock: 1_800_000_000_000 + Int64($0) * 7) }
        for round in 0..<20 {
            for (i, w) in writers.enumerated() {
                w.clock.advance(Int64((round * 3 + i) % 5))
                try w.set(storeA, "k\((round + i) % 6)", round % 7 == i ? nil : .integer(Int128(round * 10 + i)))
            }
        }
        var results: [[PlistKey: PlistValue]] = []
        var rng = SeededRandom(99)
        for r in 0..<4 {
            let reader = try Machine(scratch, "reader\(r)")
            for w in writers.shuffled(using: &rng) {
                try reader.receive(from: w)
                _ = try reader.pass()
            }
            results.append(try reader.values(storeA))
        }
        #expect(results.allSatisfy { $0 == results[0] })
        #expect(!results[0].isEmpty)
    }

    @Test("concurrent writes to one key end with the same winner everywhere")
    func concurrentWritesSameWinner() throws {
        let scratch = ScratchDirectory.make("kv-concurrent")
        defer { ScratchDirectory.remove(scratch) }
        // One wall time on both: the clock readings tie, and the device identifier decides.
        let a = try Machine(scratch, "a", clock: 1_800_000_000_000)
        let b = try Machine(scratch, "b", clock: 1_800_000_000_000)
        try a.set(storeA, "theme", .string("dark"))
        try b.set(storeA, "theme", .string("light"))
        try a.receive(from: b); try b.receive(from: a)
        _ = try a.pass(); _ = try b.pass()
        let expected: PlistValue = Array(a.device.utf8).lexicographicallyPrecedes(Array(b.device.utf8)) ? .string("light") : .string("dark")
        #expect(try a.values(storeA)["theme"] == expected)
        #expect(try b.values(storeA)["theme"] == expected)
    }

    @Test("a write made after seeing a remote change wins, even on a clock that is behind")
    func causalityBeatsClockSkew() throws {
        let scratch = ScratchDirectory.make("kv-causal")
        defer { ScratchDirectory.remove(scratch) }
        let ahead = try Machine(scratch, "ahead", clock: 1_800_000_060_000)
        let behind = try Machine(scratch, "behind", clock: 1_800_000_000_000)
        try ahead.set(storeA, "k", .integer(1))
        try behind.receive(from: ahead); _ = try behind.pass()
        try behind.set(storeA, "k", .integer(2))
        try ahead.receive(from: behind); _ = try ahead.pass()
        #expect(try ahead.values(storeA)["k"] == .integer(2))
        #expect(try behind.values(storeA)["k"] == .integer(2))
    }

    @Test("a removal wins over an older write and loses to a newer one")
    func removalsAreTombstones() throws {
        let scratch = ScratchDirectory.make("kv-tombstone")
        defer { ScratchDirectory.remove(scratch) }
        let a = try Machine(scratch, "a", clock: 1_800_000_000_000)
        let b = try Machine(scratch, "b", clock: 1_800_000_000_000)
        try a.set(storeA, "k", .integer(1))            // t = 0
        b.clock.advance(100)
        try b.set(storeA, "k", .integer(5))
        try b.set(storeA, "k", nil)                      // t = 100: newer than a's write
        try a.receive(from: b); try b.receive(from: a)
        _ = try a.pass(); _ = try b.pass()
        #expect(try a.values(storeA)["k"] == nil)
        #expect(try b.values(storeA)["k"] == nil)
        a.clock.advance(500)
        try a.set(storeA, "k", .integer(2))            // newer than the removal
        try b.receive(from: a); _ = try b.pass()
        #expect(try b.values(storeA)["k"] == .integer(2))
        // An old write arriving late loses to the removal it predates.
        let c = try Machine(scratch, "c", clock: 1_799_999_000_000)
        try c.set(storeA, "gone", .integer(9))
        b.clock.advance(10)
        try b.set(storeA, "gone", .integer(1)); try b.set(storeA, "gone", nil)
        try b.receive(from: c); _ = try b.pass()
        #expect(try b.values(storeA)["gone"] == nil)
    }

    @Test("a conflict copy is merged like any log, then removed, and its changes live on")
    func conflictCopyMergedAndRemoved() throws {
        let scratch = ScratchDirectory.make("kv-conflict")
        defer { ScratchDirectory.remove(scratch) }
        let a = try Machine(scratch, "a")
        let b = try Machine(scratch, "b")
        let c = try Machine(scratch, "c")
        try a.set(storeA, "fromCopy", .string("kept"))
        // An engine renamed a's log aside: only the copy reaches b.
        let name = a.device + ".sync-conflict-20261203-111111-ABCDEFG.kvlog"
        try FileManager.default.copyItem(atPath: a.folder + "/" + a.device + ".kvlog", toPath: b.folder + "/" + name)
        let report = try b.pass()
        #expect(report.removedConflictCopies == [name])
        #expect(!FileManager.default.fileExists(atPath: b.folder + "/" + name))
        #expect(try b.values(storeA)["fromCopy"] == .string("kept"))
        // c never sees a's log, only b's: the change was carried on.
        try c.receive(from: b); _ = try c.pass()
        #expect(try c.values(storeA)["fromCopy"] == .string("kept"))
    }

    @Test("this device's log is compacted and keeps every winning change")
    func ownLogIsCompacted() throws {
        let scratch = ScratchDirectory.make("kv-compact")
        defer { ScratchDirectory.remove(scratch) }
        let a = try Machine(scratch, "a")
        for i in 0..<300 { a.clock.advance(1); try a.set(storeA, "counter", .integer(Int128(i))) }
        let log = try ChangeLog(decoding: Array(try Data(contentsOf: URL(fileURLWithPath: a.folder + "/" + a.device + ".kvlog"))))
        #expect(log.entries.count <= 2 * 1 + 256 + 1)
        #expect(log.entries.last?.value == .integer(299))
        // A log lost or damaged is made again from the state by the next pass.
        try FileManager.default.removeItem(atPath: a.folder + "/" + a.device + ".kvlog")
        _ = try a.pass()
        let b = try Machine(scratch, "b")
        try b.receive(from: a); _ = try b.pass()
        #expect(try b.values(storeA)["counter"] == .integer(299))
    }
}
