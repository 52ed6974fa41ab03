import AppHomeSystem
import Containers
import Preferences
import PropertyList

/// The synced key-value stores of one root: local writes, the merge of
/// every device's log in the sync folder, and the stores' files in the
/// app homes.
///
/// Machine-wide files live in `<root>/Library/SyncedPreferences/`: the
/// set-up (`sync.plist`), each store's merged state (`<store>.state`,
/// values and tombstones with their clocks) and its last notices
/// (`<store>.events`). Each app whose signature grants a store gets its
/// live values in `Library/SyncedPreferences/<store>.plist` in its home,
/// written through ``DomainCommit``. Every change of these files happens
/// under one lock (`.sync.lock`), so a write, a pass of `apphome sync`
/// and prefsd never interleave.
public struct KeyValueSync: Sendable {
    public let root: String
    /// Wall-clock milliseconds since 1970 (tests pass their own).
    public let wallClock: @Sendable () -> Int64

    public init(root: String, wallClock: @escaping @Sendable () -> Int64 = { Int64(SystemClock.secondsSince1970() * 1000) }) {
        self.root = root
        self.wallClock = wallClock
    }

    /// `<root>/Library/SyncedPreferences`.
    public var directory: String { root + "/Library/SyncedPreferences" }
    public var configurationPath: String { directory + "/sync.plist" }
    var lockPath: String { directory + "/.sync.lock" }
    func statePath(_ store: StoreIdentifier) -> String { directory + "/" + store.rawValue + ".state" }
    /// The file of a store's notices (``KeyValueObserver`` watches it).
    public func eventsPath(_ store: StoreIdentifier) -> String { directory + "/" + store.rawValue + ".events" }

    /// Where an app home keeps its copy of `store`.
    public static func storeFile(home: ApplicationHome, store: StoreIdentifier) -> String {
        home.library + "/SyncedPreferences/" + store.rawValue + ".plist"
    }

    // MARK: - Locking and files

    func locked<T>(_ body: () throws -> T) throws -> T {
        let lock: FileLock
        do {
            try FileSystem.makeDirectories(directory)
            lock = try FileLock(path: lockPath)
        } catch { throw SyncError.system(error) }
        defer { lock.unlock() }
        return try body()
    }

    /// The set-up, made (with a new device identifier) when `create` and absent.
    func loadConfiguration(create: Bool) throws(SyncError) -> SyncConfiguration? {
        let bytes: [UInt8]?
        do { bytes = try FileSystem.readRegularFile(configurationPath, limit: 1 << 20, followLinks: false) } catch { throw .system(error) }
        if let bytes { return try SyncConfiguration(decoding: bytes, path: configurationPath) }
        guard create else { return nil }
        let config = SyncConfiguration(device: DeviceIdentifier.make())
        try save(config)
        return config
    }

    func save(_ config: SyncConfiguration) throws(SyncError) {
        do { try FileSystem.writeAtomically(try config.encoded(), to: configurationPath) } catch let e as SystemError {
            throw .system(e)
        } catch { throw .damaged(path: configurationPath, reason: "\(error)") }
    }

    func loadState(_ store: StoreIdentifier) throws(SyncError) -> StoreState {
        let path = statePath(store)
        let bytes: [UInt8]?
        do { bytes = try FileSystem.readRegularFile(path, limit: 64 << 20, followLinks: false) } catch { throw .system(error) }
        guard let bytes else { return StoreState() }
        return try StoreState(decoding: bytes, path: path)
    }

    func save(_ state: StoreState, _ store: StoreIdentifier) throws(SyncError) {
        let path = statePath(store)
        do { try FileSystem.writeAtomically(try state.encoded(), to: path) } catch let e as SystemError {
            throw .system(e)
        } catch { throw .damaged(path: path, reason: "cannot encode the state: \(error)") }
    }

    /// Stores with a state on this machine.
    public func knownStores() -> [StoreIdentifier] {
        let names = (try? FileSystem.directoryEntries(directory)) ?? []
        return names.compactMap { name -> StoreIdentifier? in
            guard name.hasSuffix(".state") else { return nil }
            return try? StoreIdentifier(String(name.dropLast(6)))
        }.sorted()
    }

    /// The store files of the apps `registry` grants `store`.
    public func storeFiles(_ store: StoreIdentifier, registry: Registry) -> [String] {
        let layout = ContainerLayout(root: root)
        return registry.sortedEntries.filter { $0.ubiquityKeyValueStore == store.rawValue }.map {
            Self.storeFile(home: layout.home(uuid: $0.homeUUID, bundleName: $0.bundleName), store: store)
        }
    }

    /// Writes `values` into each granted home's file (through the one commit path).
    func project(_ store: StoreIdentifier, _ values: [PlistKey: PlistValue], registry: Registry) throws {
        let files = storeFiles(store, registry: registry)
        guard !files.isEmpty else { return }
        let domain: Domain
        do { domain = try Domain(argument: store.rawValue) } catch { throw SyncError.preferences(error) }
        for file in files {
            _ = try DomainCommit.run(domain, path: file, load: { d, p throws(PreferencesError) in
                // A damaged copy is only a copy: the state is the truth, so it is replaced.
                (try? FilePreferenceStore.load(d, path: p)) ?? nil
            }) { contents in contents = values }
        }
    }

    // MARK: - Reading and writing

    /// The live values of `store` on this machine.
    public func read(_ store: StoreIdentifier) throws(SyncError) -> [PlistKey: PlistValue] {
        try loadState(store).values
    }

    /// Changes `store`: runs `change` on its live values, refuses a result
    /// past the limits (with a quota-violation notice), stamps each changed
    /// key with the next clock reading, and commits the state, the homes'
    /// files and this device's log.
    ///
    /// - Returns: the keys that changed.
    /// - Throws: ``SyncError/quotaViolation(store:reason:)``, what `change` throws.
    @discardableResult
    public func commit(_ store: StoreIdentifier, registry: Registry? = nil,
                       _ change: (inout [PlistKey: PlistValue]) throws -> Void) throws -> [PlistKey] {
        try locked {
            var config = try loadConfiguration(create: true)!
            var state = try loadState(store)
            let old = state.values
            var new = old
            try change(&new)
            let changed = Set(old.keys).union(new.keys).filter { old[$0] != new[$0] }.sorted()
            if changed.isEmpty { return [] }
            if let reason = Self.violation(old: old, new: new, changed: changed) {
                try? EventFile.append(eventsPath(store), reason: .quotaViolationChange, keys: changed.map(\.string))
                throw SyncError.quotaViolation(store: store.rawValue, reason: reason)
            }
            // One clock for the machine: each write is later than every change written or merged here.
            guard let time = max(config.clock, state.clock).next(wall: wallClock()) else {
                throw SyncError.damaged(path: directory, reason: "this machine's clock holds the largest reading a log may carry, which only a hostile log can bring")
            }
            config.clock = time
            try save(config)
            let entries = changed.map { ChangeEntry(store: store, key: $0, value: new[$0], stamp: ChangeStamp(time: time, device: config.device)) }
            for e in entries { state.apply(e) }
            try save(state, store)
            try project(store, state.values, registry: registry ?? ContainerRegistry.readOrEmpty(root: root))
            // The change is committed; a log that cannot be written now (the folder
            // gone for a moment) is made complete by the next write or pass.
            if config.folder != nil { try? appendToOwnLog(config, entries) }
            return changed
        }
    }

    /// A write's limit problem, or `nil`. What merges brought in may
    /// already be past a limit: a write that does not make it worse passes.
    static func violation(old: [PlistKey: PlistValue], new: [PlistKey: PlistValue], changed: [PlistKey]) -> String? {
        let set = changed.filter { new[$0] != nil }
        for key in set {
            if let p = KeyValueStoreLimits.keyProblem(key) { return p }
            if let p = KeyValueStoreLimits.valueProblem(new[key]!) { return p }
        }
        if new.count > KeyValueStoreLimits.maximumKeys && new.count > old.count {
            return "the store would hold \(new.count) keys, more than the \(KeyValueStoreLimits.maximumKeys) allowed"
        }
        var delta = 0
        for key in changed {
            delta += new[key].map(KeyValueStoreLimits.size) ?? 0
            delta -= old[key].map(KeyValueStoreLimits.size) ?? 0
        }
        if delta > 0 {
            let total = KeyValueStoreLimits.totalBytes(new)
            if total > KeyValueStoreLimits.maximumTotalBytes {
                return "the store's values would take \(total) bytes, more than the \(KeyValueStoreLimits.maximumTotalBytes) (1 MB) allowed"
            }
        }
        return nil
    }

    /// Removes every key of `store` everywhere: a tombstone for each, in this
    /// device's log (`apphome uninstall --forget-synced`).
    ///
    /// - Returns: the keys removed.
    @discardableResult
    public func forget(_ store: StoreIdentifier) throws -> [PlistKey] {
        try commit(store) { $0 = [:] }
    }

    /// The notices of `store` kept on this machine, oldest first.
    public func changes(_ store: StoreIdentifier) -> [KeyValueChange] { EventFile.read(eventsPath(store)) }

    // MARK: - This device's log

    func readOwnLog(_ config: SyncConfiguration) -> ChangeLog? {
        guard let path = config.logPath,
              let bytes = try? FileSystem.readRegularFile(path, limit: ChangeLog.maximumBytes, followLinks: false),
              let log = try? ChangeLog(decoding: bytes), log.device == config.device else { return nil }
        return log
    }

    func writeOwnLog(_ config: SyncConfiguration, _ log: ChangeLog) throws(SyncError) {
        guard let path = config.logPath else { return }
        var log = log
        // Compaction: once most entries are superseded, keep the last one per key.
        var latest: [StoreIdentifier: [PlistKey: Int]] = [:]
        for (i, e) in log.entries.enumerated() { latest[e.store, default: [:]][e.key] = i }
        let live = latest.values.reduce(0) { $0 + $1.count }
        if log.entries.count > 2 * live + 256 {
            let keep = Set(latest.values.flatMap(\.values))
            log.entries = log.entries.indices.filter(keep.contains).map { log.entries[$0] }
        }
        do { try FileSystem.writeAtomically(try log.encoded(), to: path) } catch let e as SystemError {
            throw .system(e)
        } catch { throw .damaged(path: path, reason: "cannot encode the log: \(error)") }
    }

    func appendToOwnLog(_ config: SyncConfiguration, _ entries: [ChangeEntry]) throws {
        guard var log = readOwnLog(config) else {
            // Missing or unreadable: made again from the states, which hold every change of this device.
            try reconcileOwnLog(config)
            return
        }
        log.entries.append(contentsOf: entries)
        try writeOwnLog(config, log)
    }

    /// Makes sure this device's log holds each winning change this device
    /// made (after a crash between the state and the log, or a new folder).
    func reconcileOwnLog(_ config: SyncConfiguration, carrying carried: [ChangeEntry] = []) throws {
        guard config.folder != nil else { return }
        let existing = readOwnLog(config)
        var log = existing ?? ChangeLog(device: config.device)
        var latest: [StoreIdentifier: [PlistKey: ChangeStamp]] = [:]
        for e in log.entries where latest[e.store]?[e.key].map({ $0 < e.stamp }) ?? true { latest[e.store, default: [:]][e.key] = e.stamp }
        var missing: [ChangeEntry] = []
        for store in knownStores() {
            guard let state = try? loadState(store) else { continue }
            for (key, e) in state.entries where e.stamp.device == config.device {
                if let have = latest[store]?[key], !(have < e.stamp) { continue }
                missing.append(ChangeEntry(store: store, key: key, value: e.value, stamp: e.stamp))
            }
        }
        for e in carried where latest[e.store]?[e.key].map({ $0 < e.stamp }) ?? true { missing.append(e) }
        guard !missing.isEmpty || existing == nil else { return }
        log.entries.append(contentsOf: missing.sorted { $0.stamp < $1.stamp })
        try writeOwnLog(config, log)
    }
}
