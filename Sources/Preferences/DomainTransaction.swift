#if canImport(Glibc)
import Glibc
#endif
import AppHomeSystem
import PropertyList

/// Several domains committed all or nothing (`defaults apply`).
///
/// 1. Every domain's lock (`.<file>.lock`, the one ``DomainCommit`` takes)
///    is taken, in byte order of the files' paths (so two transactions
///    never wait on each other in a circle).
/// 2. Under all of them each domain is loaded, changed, checked and its new
///    file written beside it as `.<file>.apply-<id>.pending` (`fsync`ed).
///    A failure in 1 or 2 changes nothing: the pending files are removed.
/// 3. A journal naming every domain, its pending file and the status of
///    the file it replaces is written durably
///    (`<journal directory>/.apply-<id>.journal`, locked while it runs).
/// 4. Each pending file is renamed over its domain (or the domain removed).
/// 5. The journal is removed.
///
/// A crash in 4 leaves the journal: ``recover(journalDirectory:)`` (the
/// next `apply`, or `apphome doctor`) finishes it: each domain whose file
/// is still the one the journal recorded gets its pending file; a domain
/// written by someone else since keeps that write (and is reported).
public enum DomainTransaction {
    /// One domain of the transaction.
    public struct Item {
        public var domain: Domain
        public var path: String
        /// Changes the contents; checks them against the store's policy.
        public var change: (inout [PlistKey: PlistValue]) throws -> [WriteNote]

        public init(domain: Domain, path: String, change: @escaping (inout [PlistKey: PlistValue]) throws -> [WriteNote]) {
            self.domain = domain
            self.path = path
            self.change = change
        }
    }

    /// A domain the transaction changed.
    public struct Committed: Sendable {
        public var domain: Domain
        public var path: String
        public var old: [PlistKey: PlistValue]
        public var new: [PlistKey: PlistValue]
        public var notes: [WriteNote]
    }

    /// A failure after the first domain was replaced: `committed` were
    /// replaced; the rest will be by ``recover(journalDirectory:)``.
    public struct PartialFailure: Error, CustomStringConvertible {
        public var committed: [Committed]
        public var error: PreferencesError
        public var description: String { "\(error)" }
    }

    /// The journal's format version.
    static let formatVersion = 1

    /// Runs the transaction.
    ///
    /// - Returns: the domains changed, in the order of `items`.
    /// - Throws: what a lock, a load, a change or a write throws, with
    ///   nothing changed; ``PartialFailure`` after the first replace.
    public static func run(_ items: [Item], journalDirectory: String) throws -> [Committed] {
        // 1. Every lock, in byte order of the paths; one path once.
        var seen: Set<PlistKey> = []
        for item in items where !seen.insert(PlistKey(item.path)).inserted {
            throw PreferencesError.invalidDomainName(item.domain.description, reason: "another domain of the same transaction is stored in the same file \(item.path)")
        }
        var locks: [FileLock] = []
        defer { for lock in locks { lock.unlock() } }
        for item in items.sorted(by: { PlistKey($0.path) < PlistKey($1.path) }) {
            do { locks.append(try DomainCommit.lock(item.path)) } catch { throw PreferencesError.system(error) }
        }
        // 2. Every new file, prepared.
        let id = Random.alphanumeric(12)
        var prepared: [(committed: Committed, pending: String?, before: FileStatus?)] = []
        var done = false
        defer {
            if !done { for p in prepared { if let pending = p.pending { try? FileSystem.removeFile(pending) } } }
        }
        for item in items {
            FilePreferenceStore.removeStaleTemporaryFiles(for: item.path)
            let before = FileStatus.of(item.path)
            let old = try DomainCommit.loadSettled(FilePreferenceStore.load, item.domain, item.path) ?? [:]
            var contents = old
            let notes = try item.change(&contents)
            if contents == old { continue }
            for (key, value) in contents where old[key] != value {
                if let (where_, seconds) = value.firstNonFiniteDate(at: key.string) {
                    throw PreferencesError.encoding(item.domain, .malformed(format: "date", detail: "the date at \(where_) is \(seconds), not a finite time; only finite dates can be stored"))
                }
            }
            var pending: String? = nil
            if !contents.isEmpty {
                let bytes: [UInt8]
                do { bytes = try PlistCodec.encode(.dictionary(contents), format: .binary) } catch {
                    throw PreferencesError.encoding(item.domain, error)
                }
                let path = FileSystem.parentDirectory(item.path) + "/." + FileSystem.lastComponent(item.path) + ".apply-" + id + ".pending"
                do { try FileSystem.writeNewFile(bytes, to: path) } catch { throw PreferencesError.system(error) }
                pending = path
            }
            prepared.append((Committed(domain: item.domain, path: item.path, old: old, new: contents, notes: notes), pending, before))
        }
        if prepared.isEmpty { done = true; return [] }
        // 3. The journal, durable before anything is replaced.
        let journal = journalDirectory + "/.apply-" + id + ".journal"
        let journalLock: FileLock
        do {
            try FileSystem.makeDirectories(journalDirectory)
            journalLock = try FileLock(path: journal + ".lock")
            let entries: [PlistValue] = prepared.map { p in
                var d: [PlistKey: PlistValue] = ["Path": .string(p.committed.path)]
                if let pending = p.pending { d["Pending"] = .string(pending) }
                if let b = p.before { d["Before"] = encode(b) }
                return .dictionary(d)
            }
            let bytes = try PlistCodec.encode(.dictionary(["FormatVersion": .integer(Int128(formatVersion)), "Domains": .array(entries)]), format: .binary)
            try FileSystem.writeAtomically(bytes, to: journal)
        } catch let error as SystemError {
            throw PreferencesError.system(error)
        }
        defer { journalLock.unlock() }
        // 4. Replace, in order.
        done = true // from here a pending file is the journal's to finish
        var committed: [Committed] = []
        for p in prepared {
            do {
                if let pending = p.pending {
                    try FileSystem.move(pending, to: p.committed.path)
                } else {
                    try FileSystem.removeFile(p.committed.path)
                }
            } catch {
                throw PartialFailure(committed: committed, error: PreferencesError.system(error))
            }
            committed.append(p.committed)
        }
        // 5. Done.
        try? FileSystem.removeFile(journal)
        try? FileSystem.removeFile(journal + ".lock")
        return committed
    }

    /// Finishes every transaction a crash (or a failed replace) left in
    /// `journalDirectory`, unless its writer is still running.
    ///
    /// - Returns: one line per domain, saying what was done.
    @discardableResult
    public static func recover(journalDirectory: String) -> [String] {
        guard let names = try? FileNames.entries(journalDirectory) else { return [] }
        var report: [String] = []
        for name in names.sorted() where name.hasPrefix(".apply-") && name.hasSuffix(".journal") {
            let journal = journalDirectory + "/" + name
            // Held by its writer while it runs: a free lock means it died.
            guard let held = try? FileLock.exclusiveIfFree(path: journal + ".lock") else { continue }
            defer { held.unlock() }
            guard let bytes = try? FileSystem.readFileIfPresent(journal) else { continue }
            guard let top = (try? PlistCodec.decode(bytes))?.dictionaryValue,
                  case .integer(let v)? = top["FormatVersion"], v == Int128(formatVersion),
                  case .array(let entries)? = top["Domains"] else {
                report.append("\(journal): not a journal this version reads; left as it is")
                continue
            }
            for entry in entries {
                guard case .dictionary(let d) = entry, case .string(let path)? = d["Path"] else { continue }
                var pending: String? = nil
                if case .string(let p)? = d["Pending"] { pending = p }
                let before = d["Before"].flatMap(decodeStatus)
                guard let lock = try? FileLock(path: DomainCommit.lockPath(of: path)) else {
                    report.append("\(path): cannot take its lock; the interrupted apply is left for the next run")
                    continue
                }
                defer { lock.unlock() }
                let current = FileStatus.of(path)
                if let pending {
                    guard FileSystem.exists(pending) else { continue } // already replaced
                    if current == before {
                        if (try? FileSystem.move(pending, to: path)) != nil {
                            report.append("\(path): finished the interrupted apply")
                        } else {
                            report.append("\(path): could not finish the interrupted apply")
                            continue
                        }
                    } else {
                        try? FileSystem.removeFile(pending)
                        report.append("\(path): written by another writer since the interrupted apply, which is dropped here")
                    }
                } else if let before, current == before {
                    try? FileSystem.removeFile(path)
                    report.append("\(path): finished the interrupted apply (the domain is removed)")
                }
            }
            try? FileSystem.removeFile(journal)
            try? FileSystem.removeFile(journal + ".lock")
        }
        return report
    }

    static func encode(_ s: FileStatus) -> PlistValue {
        .dictionary(["Device": .integer(Int128(s.device)), "Inode": .integer(Int128(s.inode)), "Size": .integer(Int128(s.size)),
                     "Modified": .integer(Int128(s.modificationTime)), "Changed": .integer(Int128(s.changeTime))])
    }

    static func decodeStatus(_ value: PlistValue) -> FileStatus? {
        guard case .dictionary(let d) = value, case .integer(let dev)? = d["Device"], case .integer(let ino)? = d["Inode"],
              case .integer(let size)? = d["Size"], case .integer(let m)? = d["Modified"], case .integer(let c)? = d["Changed"],
              let device = UInt64(exactly: dev), let inode = UInt64(exactly: ino), let sz = Int(exactly: size),
              let modified = Int64(exactly: m), let changed = Int64(exactly: c) else { return nil }
        var status = FileStatus(stat())
        status.device = device
        status.inode = inode
        status.size = sz
        status.modificationTime = modified
        status.changeTime = changed
        return status
    }
}
