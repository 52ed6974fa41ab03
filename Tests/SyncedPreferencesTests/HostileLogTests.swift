import AppHomeSystem
import Foundation
import PropertyList
import Testing
import TestSupport
@testable import SyncedPreferences

@Suite("Logs that are damaged, too new or hostile")
struct HostileLogTests {
    static let device = "0123456789ABCDEF0123456789ABCDEF"

    static func entry(_ key: String, _ value: PlistValue, store: String = "ABCDE12345.com.example.notes", t: Int = 1_800_000_000_000) -> PlistValue {
        .dictionary(["S": .string(store), "K": .string(key), "T": .integer(Int128(t)), "C": .integer(0), "D": .string(device), "V": value])
    }

    static func log(_ entries: [PlistValue], version: Int = 1, device: String = device) -> [UInt8] {
        try! PlistCodec.encode(.dictionary(["Format": .string(ChangeLog.formatName), "FormatVersion": .integer(Int128(version)),
                                            "Device": .string(device), "Entries": .array(entries)]), format: .binary)
    }

    static func nested(_ depth: Int) -> PlistValue {
        var v: PlistValue = .integer(1)
        for _ in 0..<depth { v = .array([v]) }
        return v
    }

    /// Named mutations of one good log; each must be refused whole.
    static let bad: [(String, [UInt8])] = {
        let good = log([entry("ok", .integer(1)), entry("alsoOk", .string("x"))])
        return [
            ("truncated", Array(good.prefix(good.count / 2))),
            ("empty", []),
            ("garbage", Array("not a plist at all".utf8)),
            ("xml instead of binary", try! PlistCodec.encode(.dictionary(["Format": .string(ChangeLog.formatName)]), format: .xml)),
            ("newer format", log([entry("ok", .integer(1))], version: 2)),
            ("no format name", try! PlistCodec.encode(.dictionary(["FormatVersion": .integer(1)]), format: .binary)),
            ("bad device", log([entry("ok", .integer(1))], device: "../../etc")),
            ("key past 64 bytes", log([entry("ok", .integer(1)), entry(String(repeating: "k", count: 65), .integer(1))])),
            ("empty key", log([entry("ok", .integer(1)), entry("", .integer(1))])),
            ("store with a slash", log([entry("ok", .integer(1)), entry("k", .integer(1), store: "../../x")])),
            ("deep value", log([entry("ok", .integer(1)), entry("deep", nested(200))])),
            ("clock from far future", log([entry("ok", .integer(1)), entry("k", .integer(1), t: Int(Int64.max))])),
            ("uid value", log([entry("ok", .integer(1)), entry("k", .uid(3))])),
            ("value over 1 MB", log([entry("ok", .integer(1)), entry("big", .data([UInt8](repeating: 7, count: 1_100_000)))])),
            ("entry not a dictionary", log([entry("ok", .integer(1)), .string("x")])),
            ("too many stores", log([entry("ok", .integer(1))] + (0..<300).map { entry("k", .integer(1), store: "ABCDE12345.s\($0)") })),
            ("too many keys of one store", log([entry("ok", .integer(1))] + (0..<16_400).map { entry("k\($0)", .integer(1)) })),
        ]
    }()

    @Test("each bad log is skipped whole, with a warning, and the good one still merges", arguments: bad.map(\.0))
    func badLogSkipped(name: String) throws {
        let bytes = Self.bad.first { $0.0 == name }!.1
        let scratch = ScratchDirectory.make("kv-hostile")
        defer { ScratchDirectory.remove(scratch) }
        let m = try Machine(scratch, "m")
        let good = ChangeLog(device: "FEDCBA9876543210FEDCBA9876543210", entries: [
            ChangeEntry(store: storeA, key: "fromGood", value: .integer(7),
                        stamp: ChangeStamp(time: HybridTime(milliseconds: 1_800_000_000_000, counter: 0), device: "FEDCBA9876543210FEDCBA9876543210")),
        ])
        try Data(try good.encoded()).write(to: URL(fileURLWithPath: m.folder + "/FEDCBA9876543210FEDCBA9876543210.kvlog"))
        try Data(bytes).write(to: URL(fileURLWithPath: m.folder + "/" + Self.device + ".kvlog"))
        var warnings: [String] = []
        let report = try m.sync.pass(warn: { warnings.append($0) })
        #expect(report.skipped.map(\.name) == [Self.device + ".kvlog"])
        #expect(warnings.count == 1 && warnings[0].contains(Self.device + ".kvlog"))
        let values = try m.values(storeA)
        #expect(values == ["fromGood": .integer(7)], "nothing of the bad log may be applied")
        // The bad file is left as it was.
        #expect(Array(try Data(contentsOf: URL(fileURLWithPath: m.folder + "/" + Self.device + ".kvlog"))) == bytes)
    }

    @Test("a huge log is refused before it is read, and a link is not followed")
    func hugeAndLinkedLogsSkipped() throws {
        let scratch = ScratchDirectory.make("kv-huge")
        defer { ScratchDirectory.remove(scratch) }
        let m = try Machine(scratch, "m")
        let huge = m.folder + "/" + Self.device + ".kvlog"
        #expect(FileManager.default.createFile(atPath: huge, contents: nil))
        #expect(truncate(huge, off_t(ChangeLog.maximumBytes + 1)) == 0)
        symlink("/dev/zero", m.folder + "/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA.kvlog")
        var warnings: [String] = []
        let report = try m.sync.pass(warn: { warnings.append($0) })
        #expect(report.skipped.count == 2)
        #expect(warnings.count == 2)
    }

    @Test("a log with a lone surrogate in a key is refused")
    func invalidTextRefused() throws {
        // A UTF-16 key string (marker 0x6) whose one unit is a lone high surrogate.
        var bytes = Self.log([Self.entry("\u{4E00}", .integer(1))])
        let needle: [UInt8] = [0x61, 0x4E, 0x00]
        guard let at = (0..<(bytes.count - 2)).first(where: { Array(bytes[$0..<$0 + 3]) == needle }) else {
            Issue.record("no UTF-16 key found to damage"); return
        }
        bytes[at + 1] = 0xD8
        #expect(throws: LogProblem.self) { try ChangeLog(decoding: bytes) }
    }
}

@Suite("Apple's limits on a key-value store")
struct LimitTests {
    @Test("writes past a limit are refused, with a quota-violation notice, and change nothing")
    func limitsRefused() throws {
        let scratch = ScratchDirectory.make("kv-limits")
        defer { ScratchDirectory.remove(scratch) }
        let m = try Machine(scratch, "m")
        let observer = try KeyValueObserver(sync: m.sync, store: storeA)
        let long = String(repeating: "é", count: 33)    // 66 bytes of UTF-8, 33 characters
        #expect(throws: SyncError.self) { try m.set(storeA, long, .integer(1)) }
        try m.set(storeA, String(repeating: "k", count: 64), .integer(1))
        try m.sync.commit(storeA) { for i in 1..<1_024 { $0[PlistKey("key\(i)")] = .integer(Int128(i)) } }
        #expect(try m.values(storeA).count == 1_024)
        do {
            try m.set(storeA, "oneTooMany", .integer(1))
            Issue.record("the 1,025th key was written")
        } catch let error as SyncError {
            #expect(error.description.contains("1025 keys, more than the 1024 allowed"))
        }
        // Replacing a value is still fine at 1,024 keys; a removal too.
        try m.set(storeA, "key1", .string("changed"))
        try m.set(storeA, "key2", nil)
        let changes = observer.next(timeout: 1)
        #expect(changes.map(\.reason) == [.quotaViolationChange, .quotaViolationChange])
        #expect(changes.last?.keys == ["oneTooMany"])

        let big = try StoreIdentifier("ABCDE12345.com.example.big")
        try m.set(big, "half", .data([UInt8](repeating: 1, count: 600_000)))
        #expect(throws: SyncError.self) { try m.set(big, "other", .data([UInt8](repeating: 2, count: 500_000))) }
        #expect(try m.values(big).keys.map(\.string) == ["half"])
    }
}
