import AppHomeSystem
import PropertyList

/// This machine's part of the sync set-up (`<root>/Library/SyncedPreferences/sync.plist`).
public struct SyncConfiguration: Equatable, Sendable {
    static let formatVersion = 1

    /// Where the next pass's notices come from.
    public enum Phase: String, Sendable {
        /// No pass yet since the folder was set: the first values are an initial sync.
        case initial
        /// The folder was changed: the next values are an account change.
        case account
        /// Passes have run: remote values are server changes.
        case steady
    }

    /// This machine's device identifier (``DeviceIdentifier``).
    public var device: String
    /// The folder an engine replicates, or `nil` when sync is not set up.
    public var folder: String?
    public var phase: Phase = .initial
    /// The machine's hybrid logical clock: the latest reading written or merged.
    public var clock: HybridTime = .zero

    /// This device's own log in the folder.
    public var logPath: String? { folder.map { $0 + "/" + device + ChangeLog.fileExtension } }

    func encoded() throws(PlistError) -> [UInt8] {
        var d: [PlistKey: PlistValue] = ["FormatVersion": .integer(Int128(Self.formatVersion)), "Device": .string(device),
                                         "Phase": .string(phase.rawValue)]
        if let folder { d["Folder"] = .string(folder) }
        d["Clock"] = .array([.integer(Int128(clock.milliseconds)), .integer(Int128(clock.counter))])
        return try PlistCodec.encode(.dictionary(d), format: .binary)
    }

    init(device: String, folder: String? = nil) {
        self.device = device
        self.folder = folder
    }

    init(decoding bytes: [UInt8], path: String) throws(SyncError) {
        func bad(_ why: String) -> SyncError { .damaged(path: path, reason: why) }
        guard case .dictionary(let d)? = try? PlistCodec.decode(bytes) else { throw bad("it is not a property list dictionary") }
        guard case .integer(let v)? = d["FormatVersion"], v >= 1 else { throw bad("it has no valid FormatVersion") }
        if v > Int128(Self.formatVersion) { throw bad("it has format version \(v), newer than this AppHome reads (\(Self.formatVersion))") }
        guard case .string(let device)? = d["Device"], DeviceIdentifier.isValid(device) else { throw bad("it has no valid Device") }
        self.device = device
        if case .string(let f)? = d["Folder"] { folder = f }
        if case .string(let p)? = d["Phase"], let phase = Phase(rawValue: p) { self.phase = phase }
        if case .array(let c)? = d["Clock"], c.count == 2, case .integer(let t) = c[0], case .integer(let n) = c[1],
           let ms = Int64(exactly: t), let cn = Int64(exactly: n) {
            clock = HybridTime(milliseconds: ms, counter: cn)
        }
    }
}
