import AppHomeSystem
import Containers
import PropertyList

/// What one pass did.
public struct SyncPassReport: Sendable {
    /// Logs read and merged (file names).
    public var merged: [String] = []
    /// Logs skipped, with the reason (nothing of them was applied).
    public var skipped: [(name: String, reason: String)] = []
    /// Conflict copies merged and removed.
    public var removedConflictCopies: [String] = []
    /// Store → keys whose values changed.
    public var changes: [(store: StoreIdentifier, keys: [String], reason: KeyValueChangeReason)] = []
}

/// The state of the set-up, for `apphome sync status`.
public struct SyncStatus: Sendable {
    public var device: String
    public var folder: String?
    /// Each log in the folder: its file name and what it holds, or why it cannot be read.
    public var logs: [(name: String, summary: String)] = []
    /// Each store on this machine and its number of live keys.
    public var stores: [(store: StoreIdentifier, keys: Int, bytes: Int)] = []
}

extension KeyValueSync {
    /// Names `folder` as the folder an engine replicates, and writes this
    /// device's log there. Another folder than before is an account change
    /// for the next pass's notices.
    ///
    /// - Throws: ``SyncError/notConfigured(_:)`` for a folder that is not an
    ///   absolute path of a directory.
    @discardableResult
    public func setUp(folder given: String) throws -> SyncConfiguration {
        let folder = FileSystem.trimmingTrailingSlashes(given)
        guard folder.hasPrefix("/") else { throw SyncError.notConfigured("the sync folder must be an absolute path, not '\(given)'") }
        guard FileSystem.isDirectory(folder) else {
            throw SyncError.notConfigured("the sync folder \(folder) is not a directory (create it, and share it with your engine first)")
        }
        return try locked {
            var config = try loadConfiguration(create: true)!
            if config.folder != folder {
                config.phase = config.folder == nil ? .initial : .account
                config.folder = folder
                try save(config)
            }
            try reconcileOwnLog(config)
            return config
        }
    }

    /// This machine's device identifier, or `nil` before its first synced write or set-up.
    public func configuredDevice() -> String? { (try? loadConfiguration(create: false))??.device }

    /// The folder set up, or `nil`.
    public func folder() throws(SyncError) -> String? { try loadConfiguration(create: false)?.folder }

    /// Runs one pass: merges every other device's log in the folder (and
    /// any conflict copy, which is then removed) into this machine's stores,
    /// refreshes the stores' files in the homes, and notifies watchers.
    ///
    /// A log that cannot be read, is too new, too big or breaks a rule is
    /// skipped whole, with `warn` told why; the others are merged.
    ///
    /// - Throws: ``SyncError/notConfigured(_:)`` when no folder is set up.
    @discardableResult
    public func pass(warn: (String) -> Void = { _ in }) throws -> SyncPassReport {
        try locked {
            var config = try loadConfiguration(create: true)!
            let originalConfig = config
            guard let folder = config.folder else {
                throw SyncError.notConfigured("sync is not set up: run 'apphome sync setup FOLDER' with a folder your sync engine replicates")
            }
            guard FileSystem.isDirectory(folder) else { throw SyncError.notConfigured("the sync folder \(folder) is not a directory") }
            var report = SyncPassReport()
            let names: [String]
            do { names = try FileSystem.directoryEntries(folder) } catch let e as SystemError { throw SyncError.system(e) }
            let own = config.device + ChangeLog.fileExtension
            var byStore: [StoreIdentifier: [ChangeEntry]] = [:]
            var conflictCopies: [(name: String, log: ChangeLog)] = []
            let now = wallClock()
            for name in names.sorted(by: { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) })
            where name.hasSuffix(ChangeLog.fileExtension) && !name.hasPrefix(".") && name != own {
                // A name from the folder is another machine's: shown escaped in every message.
                let shown = FileNames.escaped(name)
                let log: ChangeLog
                do {
                    guard let bytes = try FileSystem.readRegularFile(folder + "/" + name, limit: ChangeLog.maximumBytes, followLinks: false) else { continue }
                    log = try ChangeLog(decoding: bytes)
                    if let problem = Self.nameProblem(name, device: log.device, own: config.device) { throw LogProblem(problem) }
                } catch let e as SystemError {
                    report.skipped.append((name, e.description)); warn("skipped the sync log \(shown): \(e.description)"); continue
                } catch {
                    report.skipped.append((name, "\(error)")); warn("skipped the sync log \(shown): \(error)"); continue
                }
                var ahead: [String: Int] = [:]
                for e in log.entries {
                    // This machine's changes come from this machine alone: one stamped with its
                    // device in another log is one it has already, or a forgery, never merged
                    // (a merged one would be carried on in this machine's own log).
                    if e.stamp.device == config.device { continue }
                    // A reading too far ahead of this machine's clock waits for a later pass.
                    guard e.stamp.time.isAcceptable(atWall: now) else { ahead[e.stamp.device, default: 0] += 1; continue }
                    byStore[e.store, default: []].append(e)
                    if config.clock < e.stamp.time { config.clock = e.stamp.time }
                }
                for (device, count) in ahead.sorted(by: { $0.key < $1.key }) {
                    warn("left \(count) change(s) of device \(device) in the sync log \(shown) for a later pass: "
                         + "stamped more than \(HybridTime.maximumOffsetMilliseconds / 60_000) minutes ahead of this machine's clock "
                         + "(that device's clock is set ahead, or the log is hostile)")
                }
                report.merged.append(name)
                if name.contains(".sync-conflict-") { conflictCopies.append((name, log)) }
            }
            let registry = ContainerRegistry.readOrEmpty(root: root)
            let reason: KeyValueChangeReason = switch config.phase {
            case .initial: .initialSyncChange
            case .account: .accountChange
            case .steady: .serverChange
            }
            var carried: [ChangeEntry] = []
            let stores = Set(knownStores()).union(byStore.keys).sorted()
            for store in stores {
                var state: StoreState
                do { state = try loadState(store) } catch {
                    warn("left the key-value store \(store) alone: \(error)"); continue
                }
                let original = state
                let before = state.values
                for e in byStore[store] ?? [] { state.apply(e) }
                let after = state.values
                if state != original { try save(state, store) }
                try project(store, after, registry: registry)
                let changed = Set(before.keys).union(after.keys).filter { before[$0] != after[$0] }.sorted().map(\.string)
                if !changed.isEmpty {
                    try? EventFile.append(eventsPath(store), reason: reason, keys: changed)
                    report.changes.append((store, changed, reason))
                    if KeyValueStoreLimits.violation(after, changed: []) != nil {
                        try? EventFile.append(eventsPath(store), reason: .quotaViolationChange, keys: [])
                    }
                }
                for copy in conflictCopies {
                    // This machine's own changes are in its own log already: one stamped with its
                    // device that only a copy holds is forged, and is never carried on.
                    for e in copy.log.entries where e.store == store && e.stamp.device != config.device
                        && state.entries[e.key]?.stamp == e.stamp { carried.append(e) }
                }
            }
            // A conflict copy's winning changes go on in this device's log before the copy goes.
            try reconcileOwnLog(config, carrying: carried)
            for copy in conflictCopies {
                do { try FileSystem.removeFile(folder + "/" + copy.name); report.removedConflictCopies.append(copy.name) } catch {
                    warn("could not remove the conflict copy \(FileNames.escaped(copy.name)): \(error)")
                }
            }
            config.phase = .steady
            if config != originalConfig { try save(config) }
            return report
        }
    }

    /// Why a log named `name` in the folder may not be merged although it reads well,
    /// or `nil`: its `Device` must be the device its file is named for (`<device>.kvlog`,
    /// or an engine's conflict copy `<device>.sync-conflict-….kvlog`), and never this
    /// machine's own device (only this machine writes that log, under its own name).
    static func nameProblem(_ name: String, device: String, own: String) -> String? {
        var stem = Array(name.utf8.dropLast(ChangeLog.fileExtension.utf8.count))
        let marker = Array(".sync-conflict-".utf8)
        if let at = stem.indices.first(where: { stem[$0...].starts(with: marker) }) { stem = Array(stem[..<at]) }
        if device == own {
            return "it claims to be this machine's log (device \(own)), which only this machine writes, as \(own)\(ChangeLog.fileExtension); refused"
        }
        if !stem.elementsEqual(device.utf8) {
            return "its Device is \(device), not the device its file is named for; refused"
        }
        return nil
    }

    /// The set-up, the logs in the folder and the stores, for `apphome sync status`.
    public func status() throws -> SyncStatus {
        let config = try locked { try loadConfiguration(create: true)! }
        var status = SyncStatus(device: config.device, folder: config.folder)
        if let folder = config.folder, let names = try? FileSystem.directoryEntries(folder) {
            for name in names.sorted() where name.hasSuffix(ChangeLog.fileExtension) && !name.hasPrefix(".") {
                do {
                    guard let bytes = try FileSystem.readRegularFile(folder + "/" + name, limit: ChangeLog.maximumBytes, followLinks: false) else { continue }
                    let log = try ChangeLog(decoding: bytes)
                    if name != config.device + ChangeLog.fileExtension, let problem = Self.nameProblem(name, device: log.device, own: config.device) {
                        throw LogProblem(problem)
                    }
                    let mine = log.device == config.device ? " (this machine)" : ""
                    let conflict = name.contains(".sync-conflict-") ? " (a conflict copy: merged and removed by the next pass)" : ""
                    status.logs.append((name, "device \(log.device)\(mine), \(log.entries.count) change(s)\(conflict)"))
                } catch {
                    status.logs.append((name, "skipped: \(error)"))
                }
            }
        }
        for store in knownStores() {
            let values = (try? read(store)) ?? [:]
            status.stores.append((store, values.count, KeyValueStoreLimits.totalBytes(values)))
        }
        return status
    }
}
