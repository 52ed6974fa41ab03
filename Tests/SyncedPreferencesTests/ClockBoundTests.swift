import AppHomeSystem
import Foundation
import Preferences
import PropertyList
import Testing
import TestSupport
@testable import SyncedPreferences

@Suite("The clock a peer's log can move, and logs that claim another device")
struct ClockBoundTests {
    static let peer = "0123456789ABCDEF0123456789ABCDEF"

    static func entry(_ key: String, t: Int64, c: Int64 = 0, device: String = peer) -> ChangeEntry {
        ChangeEntry(store: storeA, key: PlistKey(key), value: .integer(1),
                    stamp: ChangeStamp(time: HybridTime(milliseconds: t, counter: c), device: device))
    }

    static func put(_ log: ChangeLog, in m: Machine, as name: String) throws {
        try Data(try log.encoded()).write(to: URL(fileURLWithPath: m.folder + "/" + name))
    }

    /// A scratch folder and a machine set up in it.
    static func machine(_ label: String) throws -> (String, Machine) {
        let scratch = ScratchDirectory.make(label)
        return (scratch, try Machine(scratch, "m"))
    }

    /// This machine's own log, as another machine reads it.
    static func ownLog(_ m: Machine) throws -> ChangeLog {
        try ChangeLog(decoding: Array(try Data(contentsOf: URL(fileURLWithPath: m.folder + "/" + m.device + ".kvlog"))))
    }

    @Test("the largest reading a log allows is left for later; local writes stay within the format")
    func largestReadingDoesNotCutTheMachineOff() throws {
        let (scratch, m) = try Self.machine("kv-maxclock")
        defer { ScratchDirectory.remove(scratch) }
        let now = m.clock.read()
        try Self.put(ChangeLog(device: Self.peer, entries: [
            Self.entry("pinned", t: HybridTime.maximumMilliseconds, c: HybridTime.maximumCounter),
            Self.entry("fine", t: now + 60_000),                                  // a minute ahead: within the bound
        ]), in: m, as: Self.peer + ".kvlog")
        var warnings: [String] = []
        _ = try m.sync.pass(warn: { warnings.append($0) })
        #expect(warnings.count == 1 && warnings[0].contains("device \(Self.peer)") && warnings[0].contains("1 change(s)"), "\(warnings)")
        #expect(try m.values(storeA) == ["fine": .integer(1)])
        // Every write after it is a reading the format holds, so other machines still read this log.
        for _ in 0..<3 { try m.set(storeA, "local", .integer(2)) }
        let log = try Self.ownLog(m)
        #expect(log.entries.allSatisfy { $0.stamp.time.isValid && $0.stamp.time.milliseconds <= now + 60_000 })
        let other = try Machine(scratch, "other")
        try other.receive(from: m)
        #expect(try other.pass().skipped.isEmpty)
        #expect(try other.values(storeA)["local"] == .integer(2))
        // Once this machine's clock reaches a deferred change, it is merged.
        m.clock.advance(HybridTime.maximumOffsetMilliseconds)
        try Self.put(ChangeLog(device: Self.peer, entries: [Self.entry("later", t: now + HybridTime.maximumOffsetMilliseconds + 60_000)]),
                     in: m, as: Self.peer + ".kvlog")
        _ = try m.sync.pass()
        #expect(try m.values(storeA)["later"] == .integer(1))
    }

    @Test("a clock in the year 9999 pins nothing")
    func year9999IsSkipped() throws {
        let (scratch, m) = try Self.machine("kv-9999")
        defer { ScratchDirectory.remove(scratch) }
        let year9999: Int64 = 253_402_300_799_000
        try Self.put(ChangeLog(device: Self.peer, entries: [Self.entry("future", t: year9999)]), in: m, as: Self.peer + ".kvlog")
        var warnings: [String] = []
        _ = try m.sync.pass(warn: { warnings.append($0) })
        #expect(warnings.contains { $0.contains(Self.peer) && $0.contains("ahead of this machine's clock") }, "\(warnings)")
        try m.set(storeA, "k", .integer(1))
        #expect(try Self.ownLog(m).entries.last?.stamp.time.milliseconds == m.clock.read())
    }

    @Test("the next reading after the largest counter moves on a millisecond, and after the largest reading there is none")
    func nextReadingStaysInRange() {
        let top = HybridTime(milliseconds: 1000, counter: HybridTime.maximumCounter)
        #expect(top.next(wall: 5) == HybridTime(milliseconds: 1001, counter: 0))
        #expect(HybridTime(milliseconds: HybridTime.maximumMilliseconds, counter: HybridTime.maximumCounter).next(wall: 5) == nil)
        #expect(HybridTime(milliseconds: 1000, counter: 3).next(wall: 5) == HybridTime(milliseconds: 1000, counter: 4))
        #expect(HybridTime(milliseconds: 1000, counter: 3).next(wall: 2000) == HybridTime(milliseconds: 2000, counter: 0))
    }

    @Test("a log whose Device is not its file's name, or is this machine's, is refused and never carried on")
    func logsThatClaimAnotherDeviceAreRefused() throws {
        let (scratch, m) = try Self.machine("kv-forged")
        defer { ScratchDirectory.remove(scratch) }
        let t = m.clock.read()
        let other = "FEDCBA9876543210FEDCBA9876543210"
        // Named for one device, claiming another.
        try Self.put(ChangeLog(device: other, entries: [Self.entry("a", t: t, device: other)]), in: m, as: Self.peer + ".kvlog")
        // This machine's own device, under another name and as a conflict copy of its own log.
        let forged = ChangeLog(device: m.device, entries: [Self.entry("b", t: t, device: m.device)])
        try Self.put(forged, in: m, as: "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA.kvlog")
        try Self.put(forged, in: m, as: m.device + ".sync-conflict-20261203-111111-ABCDEFG.kvlog")
        var warnings: [String] = []
        let report = try m.sync.pass(warn: { warnings.append($0) })
        #expect(report.skipped.count == 3 && report.merged.isEmpty, "\(report.skipped)")
        #expect(warnings.filter { $0.contains("not the device its file is named for") }.count == 1, "\(warnings)")
        #expect(warnings.filter { $0.contains("claims to be this machine's log") }.count == 2, "\(warnings)")
        #expect(try m.values(storeA).isEmpty)
        #expect(try Self.ownLog(m).entries.isEmpty)
        let status = try m.sync.status()
        #expect(status.logs.filter { $0.summary.contains("refused") }.count == 3, "\(status.logs)")
    }

    @Test("a conflict copy of another device's log never carries a change stamped with this machine's device")
    func forgedOwnEntriesInACopyAreNotCarried() throws {
        let (scratch, m) = try Self.machine("kv-forged-entry")
        defer { ScratchDirectory.remove(scratch) }
        let t = m.clock.read()
        try Self.put(ChangeLog(device: Self.peer, entries: [Self.entry("theirs", t: t), Self.entry("mine?", t: t, device: m.device)]),
                     in: m, as: Self.peer + ".sync-conflict-20261203-111111-ABCDEFG.kvlog")
        _ = try m.sync.pass()
        let carried = try Self.ownLog(m).entries
        #expect(carried.map(\.key) == ["theirs"], "\(carried)")
        #expect(try m.values(storeA) == ["theirs": .integer(1)])
    }

    @Test("a name from the sync folder reaches messages escaped")
    func folderNamesAreEscaped() throws {
        let (scratch, m) = try Self.machine("kv-names")
        defer { ScratchDirectory.remove(scratch) }
        let name = "\u{1B}[2J\u{1B}]0;owned\u{07}.kvlog"
        try Data("garbage".utf8).write(to: URL(fileURLWithPath: m.folder + "/" + name))
        var warnings: [String] = []
        _ = try m.sync.pass(warn: { warnings.append($0) })
        #expect(warnings.count == 1 && warnings[0].contains("\\x1B[2J\\x1B]0;owned\\x07.kvlog") && !warnings[0].contains("\u{1B}"), "\(warnings)")
    }

    @Test("defaults --synced read refuses a store no installed app grants, as a write is refused")
    func readOfAnUngrantedStoreIsRefused() throws {
        let (scratch, m) = try Self.machine("kv-ungranted")
        defer { ScratchDirectory.remove(scratch) }
        try m.set(storeA, "kept", .integer(1))                   // kept for a later install
        let store = SyncedPreferenceStore(root: m.root)
        #expect(throws: PreferencesError.self) { try store.read(try Domain(argument: storeA.rawValue), scope: .anyHost) }
        do { _ = try store.read(try Domain(argument: storeA.rawValue), scope: .anyHost) } catch {
            #expect("\(error)".contains("no installed app's signature grants the key-value store \(storeA)"), "\(error)")
        }
        #expect(try m.values(storeA) == ["kept": .integer(1)])
    }
}
