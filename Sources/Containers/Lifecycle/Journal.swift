import AppHomeSystem
import Preferences
import PropertyList

/// The install, update or uninstall in progress under a root: written
/// before the operation changes anything and removed when it is done, so
/// that after a crash ``Doctor/checkAndRepair(dryRun:environment:hookTimeout:)``
/// (and the next command) knows exactly what was under way and can finish
/// it or undo it. The file format is described in `Schemas/journal.md`.
///
/// Only one operation runs at a time (each holds the registry lock), so
/// there is at most one journal.
public struct Journal: Equatable, Sendable {
    /// The format version this code writes, and the newest it reads.
    public static let formatVersion = 1

    /// What was under way.
    public enum Operation: String, Sendable, CaseIterable {
        case install, update, uninstall
    }

    /// The operation.
    public var operation: Operation
    /// The entry being written (install, update: the new home) or removed
    /// (uninstall).
    public var entry: RegistryEntry
    /// For an update, the entry before it (the old home).
    public var previous: RegistryEntry?
    /// App-group containers the operation creates (install, update) or
    /// removes (uninstall): group id → container UUID.
    public var groups: [AppGroupIdentifier: String]
    /// The last step completed (`begin` before the first): one of
    /// ``InstallStep``, ``UpdateStep`` or ``UninstallStep``.
    public var step: String

    public init(operation: Operation, entry: RegistryEntry, previous: RegistryEntry? = nil,
                groups: [AppGroupIdentifier: String] = [:], step: String = "begin") {
        self.operation = operation
        self.entry = entry
        self.previous = previous
        self.groups = groups
        self.step = step
    }

    /// The operation in words: `the update of com.example.A from 1.0 (1) to 2.0 (2)`.
    public var summary: String {
        let id = entry.bundleIdentifier.rawValue
        switch operation {
        case .install: return "the install of \(id) \(entry.displayVersion)"
        case .update: return "the update of \(id) from \(previous?.displayVersion ?? "?") to \(entry.displayVersion)"
        case .uninstall: return "the uninstall of \(id) \(entry.displayVersion)"
        }
    }

    /// The journal as a binary property list.
    public func encoded() throws(ContainersError) -> [UInt8] {
        var top: [PlistKey: PlistValue] = [
            "FormatVersion": .integer(Int128(Self.formatVersion)),
            "Operation": .string(operation.rawValue),
            "Step": .string(step),
            "BundleIdentifier": .string(entry.bundleIdentifier.rawValue),
            "Entry": entry.plistValue,
        ]
        if let previous { top["Previous"] = previous.plistValue }
        var table: [PlistKey: PlistValue] = [:]
        for (id, uuid) in groups { table[id.rawValue] = .string(uuid) }
        top["Groups"] = .dictionary(table)
        do { return try PlistCodec.encode(.dictionary(top), format: .binary) } catch {
            throw .journalDamaged(path: "", reason: "cannot encode: \(error)")
        }
    }

    /// Reads a journal file's bytes, validating every name again.
    ///
    /// - Throws: ``ContainersError/journalVersionTooNew(path:found:supported:)``,
    ///   ``ContainersError/journalDamaged(path:reason:)``.
    public init(decoding bytes: [UInt8], path: String) throws(ContainersError) {
        func damaged(_ reason: String) -> ContainersError { .journalDamaged(path: path, reason: reason) }
        let value: PlistValue
        do { value = try PlistCodec.decode(bytes) } catch { throw damaged("\(error)") }
        guard let top = value.dictionaryValue else { throw damaged("the top level is not a dictionary") }
        _ = try checkedFormatVersion(in: top, supported: Self.formatVersion, tooNew: {
            .journalVersionTooNew(path: path, found: $0, supported: $1)
        }, damaged: damaged)
        guard case .string(let op)? = top["Operation"], let operation = Operation(rawValue: op) else { throw damaged("Operation is missing or unknown") }
        guard case .string(let step)? = top["Step"] else { throw damaged("Step is missing") }
        guard case .string(let id)? = top["BundleIdentifier"], let entryValue = top["Entry"] else { throw damaged("Entry is missing") }
        let entry = try RegistryEntry(key: id, value: entryValue, corrupt: damaged)
        var previous: RegistryEntry?
        if let p = top["Previous"] { previous = try RegistryEntry(key: id, value: p, corrupt: damaged) }
        if operation == .update && previous == nil { throw damaged("an update has no Previous entry") }
        var groups: [AppGroupIdentifier: String] = [:]
        for (key, value) in top["Groups"]?.dictionaryValue ?? [:] {
            guard let group = try? AppGroupIdentifier(key.string), case .string(let uuid) = value, ContainerLayout.isValidUUID(uuid) else {
                throw damaged("the group entry \(key) is not valid")
            }
            groups[group] = uuid
        }
        self.init(operation: operation, entry: entry, previous: previous, groups: groups, step: step)
    }
}

extension Journal {
    /// The pending journal under `layout`, or `nil` when no operation was interrupted.
    static func pending(in layout: ContainerLayout) throws(ContainersError) -> Journal? {
        let bytes: [UInt8]?
        do { bytes = try FileSystem.readFileIfPresent(layout.journalPath) } catch { throw .system(error) }
        guard let bytes else { return nil }
        return try Journal(decoding: bytes, path: layout.journalPath)
    }
}

/// The journal of the operation under way: written at each step, removed at the end.
extension ContainerOperation {
    /// The pending journal, or `nil` when no operation was interrupted.
    func pendingJournal() throws(ContainersError) -> Journal? {
        try Journal.pending(in: layout)
    }

    /// Writes `journal` atomically and durably. Call with the registry lock held.
    func writeJournal(_ journal: Journal) throws(ContainersError) {
        let bytes = try journal.encoded()
        do { try FileSystem.writeAtomically(bytes, to: layout.journalPath) } catch { throw .system(error) }
    }

    /// Writes the first journal of an operation (step `begin`), then gives
    /// the step hook its turn with `<operation>.begin`.
    func beginJournal(_ journal: Journal) throws(ContainersError) {
        try writeJournal(journal)
        try stepHook(journal.operation.rawValue + ".begin")
    }

    /// Records that `step` of `journal` is done, then gives the step hook
    /// (tests: a simulated crash; the binary: a real `SIGKILL`) its turn.
    func completed(_ step: String, _ journal: inout Journal) throws(ContainersError) {
        journal.step = step
        try writeJournal(journal)
        try stepHook(journal.operation.rawValue + "." + step)
    }

    /// Removes the journal durably: the operation is over.
    func clearJournal() throws(ContainersError) {
        do { try FileSystem.removeFile(layout.journalPath) } catch { throw .system(error) }
    }
}
