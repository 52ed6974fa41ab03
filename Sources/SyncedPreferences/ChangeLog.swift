import AppHomeSystem
import PropertyList

/// One change of one key of one store: a value, or a removal (a tombstone).
public struct ChangeEntry: Equatable, Sendable {
    public var store: StoreIdentifier
    public var key: PlistKey
    /// The new value; `nil` for a removal.
    public var value: PlistValue?
    public var stamp: ChangeStamp

    public init(store: StoreIdentifier, key: PlistKey, value: PlistValue?, stamp: ChangeStamp) {
        self.store = store
        self.key = key
        self.value = value
        self.stamp = stamp
    }
}

/// A device's change log in the sync folder (`<device>.kvlog`): a binary
/// property list, described in `Schemas/synced-preferences-log.md`.
///
/// Only its device writes it (atomically replaced, entries appended in
/// order, compacted now and then), so a sync engine never sees two writers
/// on one file. A reader takes all of it or none of it.
public struct ChangeLog: Equatable, Sendable {
    /// The format version this code writes, and the newest it reads.
    public static let formatVersion = 1
    /// The value of the `Format` key: names what the file is.
    public static let formatName = "AppHome synced preferences log"
    /// The extension of log files.
    public static let fileExtension = ".kvlog"
    /// The largest log read (bytes); a bigger one is hostile.
    public static let maximumBytes = 32 << 20
    /// The most entries a log may hold.
    public static let maximumEntries = 500_000
    /// The most stores one log may name.
    public static let maximumStores = 256
    /// The most distinct keys of one store one log may name (live keys and
    /// removals: 16 times what a store may hold at once).
    public static let maximumKeysPerStore = 16_384

    /// The device that writes the log.
    public var device: String
    /// The entries, oldest first. An entry may carry another device's
    /// stamp: one taken over from a conflict copy, so that it is not lost.
    public var entries: [ChangeEntry]

    public init(device: String, entries: [ChangeEntry] = []) {
        self.device = device
        self.entries = entries
    }

    /// The file's bytes.
    public func encoded() throws(PlistError) -> [UInt8] {
        let items: [PlistValue] = entries.map { e in
            var d: [PlistKey: PlistValue] = [
                "S": .string(e.store.rawValue), "K": .string(e.key.string),
                "T": .integer(Int128(e.stamp.time.milliseconds)), "C": .integer(Int128(e.stamp.time.counter)),
                "D": .string(e.stamp.device),
            ]
            if let v = e.value { d["V"] = v } else { d["X"] = .bool(true) }
            return .dictionary(d)
        }
        return try PlistCodec.encode(.dictionary([
            "Format": .string(Self.formatName),
            "FormatVersion": .integer(Int128(Self.formatVersion)),
            "Device": .string(device),
            "Entries": .array(items),
        ]), format: .binary)
    }

    /// Reads a log, checking everything: the whole file is refused for the
    /// first problem (so it is never applied in part).
    ///
    /// - Throws: a sentence naming the problem.
    public init(decoding bytes: [UInt8]) throws(LogProblem) {
        if bytes.count > Self.maximumBytes { throw LogProblem("it is \(bytes.count) bytes, more than the \(Self.maximumBytes) a log may have") }
        if bytes.isEmpty { throw LogProblem("it is empty") }
        let top: PlistValue
        do { top = try PlistCodec.decode(bytes, format: .binary) } catch {
            throw LogProblem("it is not a binary property list (\(error))")
        }
        guard case .dictionary(let d) = top else { throw LogProblem("it is not a dictionary") }
        guard case .string(Self.formatName)? = d["Format"] else { throw LogProblem("it is not an AppHome synced preferences log") }
        guard case .integer(let version)? = d["FormatVersion"], version >= 1 else { throw LogProblem("it has no valid FormatVersion") }
        if version > Int128(Self.formatVersion) {
            throw LogProblem("it has format version \(version), and this AppHome reads only up to version \(Self.formatVersion); update AppHome on this machine")
        }
        guard case .string(let device)? = d["Device"], DeviceIdentifier.isValid(device) else { throw LogProblem("it has no valid Device") }
        guard case .array(let items)? = d["Entries"] else { throw LogProblem("it has no Entries array") }
        if items.count > Self.maximumEntries { throw LogProblem("it has \(items.count) entries, more than \(Self.maximumEntries)") }
        var entries: [ChangeEntry] = []
        entries.reserveCapacity(items.count)
        var stores: [String: StoreIdentifier] = [:]
        var keysPerStore: [StoreIdentifier: Set<PlistKey>] = [:]
        for (i, item) in items.enumerated() {
            func bad(_ why: String) -> LogProblem { LogProblem("entry \(i) \(why)") }
            guard case .dictionary(let e) = item else { throw bad("is not a dictionary") }
            guard case .string(let s)? = e["S"] else { throw bad("has no store") }
            let store: StoreIdentifier
            if let known = stores[s] { store = known } else {
                guard let id = try? StoreIdentifier(s) else { throw bad("names an invalid store '\(FileNames.escaped(String(s.prefix(80))))'") }
                if stores.count == Self.maximumStores { throw bad("names a store beyond the \(Self.maximumStores) a log may name") }
                stores[s] = id
                store = id
            }
            guard case .string(let k)? = e["K"] else { throw bad("has no key") }
            let key = PlistKey(k)
            if let p = KeyValueStoreLimits.keyProblem(key) { throw bad("is refused: \(p)") }
            if keysPerStore[store, default: []].insert(key).inserted, keysPerStore[store]!.count > Self.maximumKeysPerStore {
                throw bad("names a key of \(store) beyond the \(Self.maximumKeysPerStore) distinct keys a log may hold for one store")
            }
            guard case .integer(let t)? = e["T"], case .integer(let c)? = e["C"],
                  t >= 0, t <= Int128(HybridTime.maximumMilliseconds), c >= 0, c <= Int128(HybridTime.maximumCounter) else {
                throw bad("has no valid clock reading")
            }
            guard case .string(let dev)? = e["D"], DeviceIdentifier.isValid(dev) else { throw bad("has no valid device") }
            var value: PlistValue? = nil
            switch (e["V"], e["X"]) {
            case (let v?, nil):
                if let p = KeyValueStoreLimits.valueProblem(v) { throw bad("is refused: \(p)") }
                if v.firstNonFiniteDate(at: k) != nil { throw bad("holds a date that is not a finite time") }
                if KeyValueStoreLimits.size(of: v) > KeyValueStoreLimits.maximumTotalBytes { throw bad("has a value larger than 1 MB") }
                value = v
            case (nil, .bool(true)?): value = nil
            default: throw bad("is neither a value nor a removal")
            }
            if e.count != 6 { throw bad("has unknown fields") }
            entries.append(ChangeEntry(store: store, key: key, value: value,
                                       stamp: ChangeStamp(time: HybridTime(milliseconds: Int64(t), counter: Int64(c)), device: dev)))
        }
        self.device = device
        self.entries = entries
    }
}

/// Why a log was skipped.
public struct LogProblem: Error, Equatable, Sendable, CustomStringConvertible {
    public var reason: String
    public init(_ reason: String) { self.reason = reason }
    public var description: String { reason }
}
