import AppHomeSystem
import PropertyList

/// The merged state of one store on this machine
/// (`<root>/Library/SyncedPreferences/<store>.state`): for every key its
/// winning change (a value or a tombstone) and the clock, so that the
/// next local write is later than anything merged.
///
/// The store's file in each app home is made from it (the live values,
/// without tombstones); `Schemas/synced-preferences-log.md` describes it.
struct StoreState: Equatable, Sendable {
    static let formatVersion = 1
    static let formatName = "AppHome synced preferences state"

    var clock: HybridTime = .zero
    /// Key → winning change.
    var entries: [PlistKey: (value: PlistValue?, stamp: ChangeStamp)] = [:]

    static func == (a: StoreState, b: StoreState) -> Bool {
        a.clock == b.clock && a.entries.count == b.entries.count && a.entries.allSatisfy { k, v in
            guard let o = b.entries[k] else { return false }
            return o.stamp == v.stamp && o.value == v.value
        }
    }

    /// The live values.
    var values: [PlistKey: PlistValue] {
        var out: [PlistKey: PlistValue] = [:]
        for (k, e) in entries { if let v = e.value { out[k] = v } }
        return out
    }

    /// Applies `entry` if it wins; returns whether the live value changed.
    @discardableResult
    mutating func apply(_ entry: ChangeEntry) -> Bool {
        if entry.stamp.time > clock { clock = entry.stamp.time }
        if let current = entries[entry.key] {
            if entry.stamp < current.stamp { return false }
            // One stamp, two values: only a hostile or broken log does this; the
            // same one still wins everywhere (the greater encoding, a removal lowest).
            if entry.stamp == current.stamp && !Self.outranks(entry.value, current.value) { return false }
        }
        let before = entries[entry.key]?.value
        entries[entry.key] = (entry.value, entry.stamp)
        return before != entry.value
    }

    static func outranks(_ a: PlistValue?, _ b: PlistValue?) -> Bool {
        guard a != b, let a else { return false }
        guard let b else { return true }
        let ea = (try? PlistCodec.encode(a, format: .binary)) ?? []
        let eb = (try? PlistCodec.encode(b, format: .binary)) ?? []
        return eb.lexicographicallyPrecedes(ea)
    }

    func encoded() throws(PlistError) -> [UInt8] {
        var table: [PlistKey: PlistValue] = [:]
        for (k, e) in entries {
            var d: [PlistKey: PlistValue] = ["T": .integer(Int128(e.stamp.time.milliseconds)), "C": .integer(Int128(e.stamp.time.counter)),
                                             "D": .string(e.stamp.device)]
            if let v = e.value { d["V"] = v } else { d["X"] = .bool(true) }
            table[k] = .dictionary(d)
        }
        return try PlistCodec.encode(.dictionary([
            "Format": .string(Self.formatName), "FormatVersion": .integer(Int128(Self.formatVersion)),
            "Clock": .array([.integer(Int128(clock.milliseconds)), .integer(Int128(clock.counter))]),
            "Entries": .dictionary(table),
        ]), format: .binary)
    }

    init() {}

    init(decoding bytes: [UInt8], path: String) throws(SyncError) {
        func bad(_ why: String) -> SyncError { .damaged(path: path, reason: why) }
        guard case .dictionary(let d)? = try? PlistCodec.decode(bytes), case .string(Self.formatName)? = d["Format"] else {
            throw bad("it is not an AppHome synced preferences state")
        }
        guard case .integer(let version)? = d["FormatVersion"], version >= 1 else { throw bad("it has no valid FormatVersion") }
        if version > Int128(Self.formatVersion) { throw bad("it has format version \(version), newer than this AppHome reads (\(Self.formatVersion))") }
        guard case .array(let c)? = d["Clock"], c.count == 2, case .integer(let t) = c[0], case .integer(let n) = c[1],
              let ms = Int64(exactly: t), let cn = Int64(exactly: n) else { throw bad("it has no valid Clock") }
        clock = HybridTime(milliseconds: ms, counter: cn)
        guard case .dictionary(let table)? = d["Entries"] else { throw bad("it has no Entries") }
        for (k, item) in table {
            guard case .dictionary(let e) = item, case .integer(let t)? = e["T"], case .integer(let n)? = e["C"],
                  let ms = Int64(exactly: t), let cn = Int64(exactly: n), case .string(let dev)? = e["D"] else {
                throw bad("the entry of '\(k)' is malformed")
            }
            entries[k] = (e["V"], ChangeStamp(time: HybridTime(milliseconds: ms, counter: cn), device: dev))
        }
    }
}

/// Why a store's watchers are told of a change, as
/// `NSUbiquitousKeyValueStoreChangeReasonKey` (same numbers).
public enum KeyValueChangeReason: Int, Sendable, CaseIterable, CustomStringConvertible {
    /// Another machine changed the values.
    case serverChange = 0
    /// The first values from the sync folder arrived.
    case initialSyncChange = 1
    /// A write was refused for breaking a limit (or a merge went past one).
    case quotaViolationChange = 2
    /// The sync folder changed (`apphome sync setup` with another folder).
    case accountChange = 3

    public var description: String {
        switch self {
        case .serverChange: return "server change"
        case .initialSyncChange: return "initial sync"
        case .quotaViolationChange: return "quota violation"
        case .accountChange: return "account change"
        }
    }
}

/// One notice to a store's watchers: why, and which keys.
public struct KeyValueChange: Equatable, Sendable {
    /// Numbers the notices of one store, from 1.
    public var sequence: Int
    public var reason: KeyValueChangeReason
    /// The keys whose values changed (empty for a refused write).
    public var keys: [String]

    public init(sequence: Int, reason: KeyValueChangeReason, keys: [String]) {
        self.sequence = sequence
        self.reason = reason
        self.keys = keys
    }
}

/// The last notices of a store (`<store>.events`), for watchers in other
/// processes: each remembers the last sequence number it saw.
enum EventFile {
    static let formatVersion = 1
    static let kept = 64

    static func read(_ path: String) -> [KeyValueChange] {
        guard let bytes = try? FileSystem.readRegularFile(path, limit: 1 << 20, followLinks: false),
              case .dictionary(let d)? = try? PlistCodec.decode(bytes),
              case .integer(let v)? = d["FormatVersion"], v == Int128(formatVersion),
              case .array(let items)? = d["Events"] else { return [] }
        return items.compactMap { item -> KeyValueChange? in
            guard case .dictionary(let e) = item, case .integer(let s)? = e["Seq"], case .integer(let r)? = e["Reason"],
                  let reason = KeyValueChangeReason(rawValue: Int(truncatingIfNeeded: r)), case .array(let keys)? = e["Keys"] else { return nil }
            return KeyValueChange(sequence: Int(truncatingIfNeeded: s), reason: reason,
                                  keys: keys.compactMap { if case .string(let k) = $0 { return k } else { return nil } })
        }
    }

    static func append(_ path: String, reason: KeyValueChangeReason, keys: [String]) throws(SystemError) {
        var events = read(path)
        events.append(KeyValueChange(sequence: (events.last?.sequence ?? 0) + 1, reason: reason, keys: keys))
        if events.count > kept { events.removeFirst(events.count - kept) }
        let items: [PlistValue] = events.map {
            .dictionary(["Seq": .integer(Int128($0.sequence)), "Reason": .integer(Int128($0.reason.rawValue)),
                         "Keys": .array($0.keys.map { .string($0) })])
        }
        guard let bytes = try? PlistCodec.encode(.dictionary(["FormatVersion": .integer(Int128(formatVersion)), "Events": .array(items)]),
                                                 format: .binary) else { return }
        try FileSystem.writeAtomically(bytes, to: path)
    }
}
