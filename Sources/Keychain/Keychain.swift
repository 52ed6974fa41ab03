import AppHomeSystem
import PropertyList

/// The keychain under `<root>/Keychains/`: items of every app, each access
/// group in its own encrypted file, outside every app home.
///
/// Calls follow Apple's `SecItem` semantics (`add`, `copyMatching`,
/// `update`, `delete`) and act for one ``KeychainContext``: an app sees and
/// changes only items of its access groups.
///
/// Readers take no lock (files are replaced atomically); writers hold
/// `<root>/Keychains/.lock` while they read, change and write, so concurrent
/// writers lose nothing. The device root key is made on the first write.
public final class Keychain {
    /// `<root>/Keychains`.
    public let directory: String
    let root: String
    let policy: DeviceKeyPolicy
    let now: @Sendable () -> PlistDate
    /// The keys of the call under way (never kept past it: see ``call(_:)``).
    private var device: ClassKeys?
    /// Whether this keychain holds `.lock` now (a migration inside a write
    /// must not take it again).
    private var lockHeld = false
    /// Argon2id costs for a new passphrase key file; tests set libsodium's
    /// minimum (and read such files back), real use keeps MODERATE.
    var passphraseCostForTesting: PassphraseParameters?
    /// Unwrapped group keys by group, with the wrapped form they came from.
    private var groupKeys: [AccessGroup: (wrapped: [UInt8], keys: GroupKeys)] = [:]
    /// The files as this process last read them (prefsd), or `nil`: every
    /// call reads them.
    let readCache: KeychainReadCache?

    /// Opens the keychain of `root` (nothing is created until the first write).
    ///
    /// - Parameters:
    ///   - root: the AppHome root.
    ///   - policy: where a new device root key goes.
    ///   - now: the clock for creation and modification dates.
    ///   - readCache: what a long-running process keeps of the files between
    ///     calls (``KeychainReadCache``); `nil` reads them on every call.
    public init(root: String, policy: DeviceKeyPolicy, now: @escaping @Sendable () -> PlistDate, readCache: KeychainReadCache? = nil) {
        let r = Paths.trimmingTrailingSlashes(root)
        self.root = r
        self.directory = r + "/Keychains"
        self.policy = policy
        self.now = now
        self.readCache = readCache
    }

    var recordPath: String { directory + "/device.plist" }
    func groupPath(_ group: AccessGroup) -> String { directory + "/" + group.rawValue + ".keychain" }

    /// The file of `group` (`<root>/Keychains/<group>.keychain`), for a
    /// reader that watches it for changes.
    public func groupFilePath(_ group: AccessGroup) -> String { groupPath(group) }

    /// Where this keychain keeps its device root key, or `nil` before the first write.
    public func deviceKeyStore() throws(KeychainError) -> DeviceKeyStoreKind? {
        try readRecord()?.store
    }

    /// This device's id (recorded with the key), or `nil` before the first write.
    public func deviceID() throws(KeychainError) -> String? {
        try readRecord()?.deviceID
    }

    func readRecord() throws(KeychainError) -> DeviceRecord? {
        let path = recordPath
        func load() throws(KeychainError) -> DeviceRecord? {
            guard let bytes = try PrivateFile.read(path) else { return nil }
            return try DeviceRecord(decoding: bytes, path: path)
        }
        return try StampedFileCache.value(in: readCache?.records, at: path, load: load)
    }

    /// The device record and the keys open now; `create` makes the device
    /// key if absent (the caller holds the lock). A format-1 keychain is moved
    /// to class keys first (which needs the device root key).
    func loadDevice(create: Bool) throws(KeychainError) -> ClassKeys? {
        if let device { return device }
        let keys: ClassKeys
        if let record = try readRecord() {
            keys = try DeviceKey.open(record, directory: directory, root: root, policy: policy)
            guard record.sealMatches(kek: keys.kek) else {
                throw .corrupt(path: recordPath, reason: "its seal does not match under this keychain's keys (the file was changed)")
            }
            if record.version == 1 {
                device = try migrateToClassKeys(keys)
                return device
            }
            if record.version < DeviceRecord.formatVersion { try sealRecord(keys) }
        } else {
            // Keys without a device record: never make a new device key over them.
            if FileSystem.exists(keysPath) {
                throw .keyStoreUnavailable("\(recordPath) is missing, but the keychain has group keys in \(keysPath); restore it from a backup")
            }
            guard create else { return nil }
            do { try FileSystem.makeDirectories(directory) } catch { throw .system(error) }
            let (record, rootKey) = try DeviceKey.create(policy: policy, directory: directory, root: root)
            keys = ClassKeys(record: record, rootKey: rootKey, protected: record.store == .secretService)
            let bytes = try record.encoded(kek: keys.kek)
            do { try FileSystem.writeAtomically(bytes, to: recordPath) } catch { throw .system(error) }
            DeviceKey.keepAfterFirstUnlockKeys(keys, policy: policy)
        }
        device = keys
        return keys
    }

    /// Rewrites a format-2 record sealed (format 3), under the lock; one
    /// sealed meanwhile by another process is left as it is.
    func sealRecord(_ keys: ClassKeys) throws(KeychainError) {
        try withLock { () throws(KeychainError) in
            guard let current = try readRecord(), current.version == 2, current == keys.record else { return }
            var sealed = current
            sealed.version = DeviceRecord.formatVersion
            let bytes = try sealed.encoded(kek: keys.kek)
            do throws(SystemError) { try FileSystem.writeAtomically(bytes, to: recordPath) } catch { throw .system(error) }
            keys.record = sealed
        }
    }

    /// Runs one public call: the keys it opened are dropped at its end, so
    /// a `whenUnlocked…` class key never outlives the call.
    func call<R>(_ body: () throws(KeychainError) -> R) throws(KeychainError) -> R {
        let outer = device == nil
        defer { if outer { device = nil } }
        return try body()
    }

    func withLock<R>(_ body: () throws(KeychainError) -> R) throws(KeychainError) -> R {
        do { try FileSystem.makeDirectories(directory) } catch { throw .system(error) }
        if lockHeld { return try body() }
        guard policy.mayWait else { throw .wouldBlock }
        let lock: FileLock
        do { lock = try FileLock(path: directory + "/.lock") } catch { throw .system(error) }
        lockHeld = true
        defer { lockHeld = false; lock.unlock() }
        return try body()
    }

    var keysPath: String { directory + "/keys.plist" }

    /// What a call that may not wait (``DeviceKeyPolicy/mayWait``) leaves
    /// to a worker: parsing a group file larger than this many bytes, or
    /// searching one of more items (each item's attributes are opened).
    static let largeGroupFile = 64 * 1024
    static let manyItems = 128

    /// The key of `group`; `create` makes, wraps and records a new one
    /// when there is none (the caller holds the lock).
    func groupKey(_ group: AccessGroup, device: ClassKeys, create: Bool) throws(KeychainError) -> GroupKeys? {
        // keys.plist is read every time, so a destroyed key is never used.
        var table = try KeyTable.read(path: keysPath, deviceID: device.record.deviceID, cache: readCache?.keyTables)
        if let w = table.wrapped[group.rawValue] {
            if let known = groupKeys[group], known.wrapped == w { return known.keys }
            let keys = GroupKeys(try KeyTable.unwrap(w, group: group, deviceID: device.record.deviceID, kek: device.kek, path: keysPath))
            groupKeys[group] = (w, keys)
            return keys
        }
        guard create else { return nil }
        let akk = SecureBytes.random(count: Sodium.keyBytes)
        let wrapped = KeyTable.wrap(akk, group: group, deviceID: device.record.deviceID, kek: device.kek)
        table.wrapped[group.rawValue] = wrapped
        try table.write(path: keysPath)
        let keys = GroupKeys(akk)
        groupKeys[group] = (wrapped, keys)
        return keys
    }

    /// The group's file, verified, or `nil` when it has none.
    func openGroup(_ group: AccessGroup, device: ClassKeys) throws(KeychainError) -> GroupFile? {
        let path = groupPath(group)
        let mayWait = policy.mayWait
        func load() throws(KeychainError) -> GroupFile.Records? {
            guard let bytes = try PrivateFile.read(path) else { return nil }
            if !mayWait && bytes.count > Self.largeGroupFile { throw .wouldBlock }
            return try GroupFile.Records(parsing: bytes, path: path)
        }
        guard let records = try StampedFileCache.value(in: readCache?.groupFiles, at: path, load: load) else { return nil }
        if !mayWait && records.items.count > Self.manyItems { throw .wouldBlock }
        guard let akk = try groupKey(group, device: device, create: false) else {
            throw .corrupt(path: path, reason: "the key of access group '\(group.rawValue)' was destroyed (the group was removed); this file is a leftover copy")
        }
        return try GroupFile.open(records, group: group, path: path, deviceID: device.record.deviceID, groupKey: akk, classes: device)
    }

    /// The group's file, or a new empty one (the caller holds the lock).
    func openOrCreateGroup(_ group: AccessGroup, device: ClassKeys) throws(KeychainError) -> GroupFile {
        if let f = try openGroup(group, device: device) { return f }
        let akk = try groupKey(group, device: device, create: true)!
        return GroupFile.create(group: group, path: groupPath(group), deviceID: device.record.deviceID, groupKey: akk, classes: device)
    }

    func groups(for query: ItemQuery, context: KeychainContext) throws(KeychainError) -> [AccessGroup] {
        guard let g = query.accessGroup else { return context.accessGroups }
        guard context.accessGroups.contains(g) else { throw .missingEntitlement(group: g.rawValue) }
        return [g]
    }

    /// The indices in `file` matching `query`, in file order.
    func matches(_ query: ItemQuery, in file: GroupFile) throws(KeychainError) -> [Int] {
        var found: [Int] = []
        let tag = query.pinnedPrimaryKey.map { file.tag(itemClass: query.itemClass, primaryKey: $0) }
        for i in file.items.indices {
            if let tag, !Sodium.equal(tag, file.items[i].tag) { continue }
            if query.matches(try file.attributes(at: i)) { found.append(i) }
        }
        return found
    }

    static func validate(_ a: ItemAttributes) throws(KeychainError) {
        if a.itemClass == .genericPassword && (!a.server.isEmpty || !a.protocol.isEmpty || a.port != 0 || !a.path.isEmpty
            || !a.authenticationType.isEmpty || !a.securityDomain.isEmpty) {
            throw .invalidParameter("internet-password attributes on a generic password")
        }
        if a.itemClass == .internetPassword && !a.service.isEmpty {
            throw .invalidParameter("a service on an internet password")
        }
        if a.port < 0 || a.port > 65535 { throw .invalidParameter("port \(a.port) is out of range") }
    }

    // MARK: SecItem

    /// Adds an item (`SecItemAdd`). Without an access group it goes to the
    /// app's first group; the creation and modification dates are set now.
    ///
    /// - Throws: ``KeychainError/duplicateItem`` when the primary key exists;
    ///   ``KeychainError/missingEntitlement(group:)`` for a group the app lacks.
    public func add(_ attributes: ItemAttributes, data: SecureBytes, context: KeychainContext) throws(KeychainError) {
        var a = attributes
        let group = a.accessGroup ?? context.accessGroups[0]
        guard context.accessGroups.contains(group) else { throw .missingEntitlement(group: group.rawValue) }
        a.accessGroup = group
        try Self.validate(a)
        let date = now()
        a.creationDate = date
        a.modificationDate = date
        try call { () throws(KeychainError) in try withLock { () throws(KeychainError) in
            let device = try loadDevice(create: true)!
            let file = try openOrCreateGroup(group, device: device)
            let tag = file.tag(itemClass: a.itemClass, primaryKey: a.primaryKeyFields)
            if file.items.contains(where: { Sodium.equal($0.tag, tag) }) { throw .duplicateItem }
            let item = try file.makeItem(a, secret: data, id: Sodium.randomBytes(16), generation: 1)
            file.append(item, attributes: a)
            try file.write()
        } }
    }

    /// Finds items (`SecItemCopyMatching`): the first match, or all with
    /// ``ItemQuery/MatchLimit/all``, with the data and attributes asked for.
    ///
    /// - Throws: ``KeychainError/itemNotFound`` when nothing matches.
    public func copyMatching(_ query: ItemQuery, context: KeychainContext) throws(KeychainError) -> [ItemResult] {
        let groups = try groups(for: query, context: context)
        return try call { () throws(KeychainError) -> [ItemResult] in
            guard let device = try loadDevice(create: false) else { throw .itemNotFound }
            var results: [ItemResult] = []
            var closed: KeychainError?
            for group in groups {
                guard let file = try openGroup(group, device: device) else { continue }
                for i in try matches(query, in: file) {
                    // An item of a class that is not open is passed over; if
                    // nothing else matches, the call fails as on iOS.
                    let a = try file.attributes(at: i)
                    do throws(KeychainError) { _ = try device.classKey(a.accessibility) } catch {
                        guard case .interactionNotAllowed = error else { throw error }
                        closed = closed ?? error
                        continue
                    }
                    var r = ItemResult()
                    if query.returnAttributes { r.attributes = a }
                    if query.returnData { r.data = try file.secret(at: i) }
                    results.append(r)
                    if query.matchLimit == .one { return results }
                }
            }
            if results.isEmpty { throw closed ?? .itemNotFound }
            return results
        }
    }

    /// Changes every item matching `query` (`SecItemUpdate`). Each changed
    /// item is sealed again under a fresh item key and nonces.
    ///
    /// - Throws: ``KeychainError/invalidParameter(_:)`` for return keys in the
    ///   query, no changes or a class change; ``KeychainError/duplicateItem``
    ///   when a change would collide with another item (nothing is changed);
    ///   ``KeychainError/itemNotFound`` when nothing matches.
    public func update(_ query: ItemQuery, with changes: ItemChanges, context: KeychainContext) throws(KeychainError) {
        if query.hasReturnKeys { throw .invalidParameter("an update query may not ask for results") }
        if changes.isEmpty { throw .invalidParameter("no attributes to update") }
        if let g = changes.accessGroup, !context.accessGroups.contains(g) { throw .missingEntitlement(group: g.rawValue) }
        let groups = try groups(for: query, context: context)
        try call { () throws(KeychainError) in try withLock { () throws(KeychainError) in
            guard let device = try loadDevice(create: false) else { throw .itemNotFound }
            var files: [AccessGroup: GroupFile] = [:]
            func file(_ g: AccessGroup) throws(KeychainError) -> GroupFile {
                if let f = files[g] { return f }
                let f = try openOrCreateGroup(g, device: device)
                files[g] = f
                return f
            }
            // Plan every change first, so a collision changes nothing.
            struct Change { var from: AccessGroup; var index: Int; var attributes: ItemAttributes; var secret: SecureBytes; var id: [UInt8]; var generation: UInt64 }
            var plan: [Change] = []
            for g in groups {
                guard FileSystem.exists(groupPath(g)) else { continue }
                let f = try file(g)
                for i in try matches(query, in: f) {
                    var a = try f.attributes(at: i)
                    changes.apply(to: &a)
                    a.modificationDate = now()
                    try Self.validate(a)
                    let secret: SecureBytes
                    if let d = changes.data { secret = d } else { secret = try f.secret(at: i) }
                    plan.append(Change(from: g, index: i, attributes: a, secret: secret, id: f.items[i].id, generation: f.items[i].generation + 1))
                }
            }
            if plan.isEmpty { throw .itemNotFound }
            // By exact bytes (`PlistKey`): canonically equivalent accounts are two items.
            var claimed: Set<[PlistKey]> = []
            for c in plan {
                let target = c.attributes.accessGroup!
                let key = ([target.rawValue, c.attributes.itemClass.rawValue] + c.attributes.primaryKeyFields).map { PlistKey($0) }
                if !claimed.insert(key).inserted { throw .duplicateItem }
                let f = try file(target)
                let tag = f.tag(itemClass: c.attributes.itemClass, primaryKey: c.attributes.primaryKeyFields)
                for (i, item) in f.items.enumerated() where Sodium.equal(item.tag, tag) {
                    if !plan.contains(where: { $0.from == target && $0.index == i }) { throw .duplicateItem }
                }
            }
            var removals: [AccessGroup: Set<Int>] = [:]
            for c in plan {
                let target = c.attributes.accessGroup!
                if target == c.from {
                    let f = try file(target)
                    f.replace(at: c.index, with: try f.makeItem(c.attributes, secret: c.secret, id: c.id, generation: c.generation), attributes: c.attributes)
                } else {
                    removals[c.from, default: []].insert(c.index)
                    let f = try file(target)
                    f.append(try f.makeItem(c.attributes, secret: c.secret, id: c.id, generation: c.generation), attributes: c.attributes)
                }
            }
            for (g, set) in removals { try file(g).remove(indices: set) }
            for g in files.keys.sorted() { try files[g]!.write() }
        } }
    }

    /// Deletes every item matching `query` (`SecItemDelete`).
    ///
    /// - Throws: ``KeychainError/itemNotFound`` when nothing matches.
    public func delete(_ query: ItemQuery, context: KeychainContext) throws(KeychainError) {
        let groups = try groups(for: query, context: context)
        try call { () throws(KeychainError) in try withLock { () throws(KeychainError) in
            guard let device = try loadDevice(create: false) else { throw .itemNotFound }
            // Every match is checked first: a delete touching an item of a
            // class that is not open deletes nothing.
            var plan: [(GroupFile, [Int])] = []
            for g in groups {
                guard let f = try openGroup(g, device: device) else { continue }
                let found = try matches(query, in: f)
                guard !found.isEmpty else { continue }
                for i in found { _ = try device.classKey(try f.attributes(at: i).accessibility) }
                plan.append((f, found))
            }
            if plan.isEmpty { throw .itemNotFound }
            for (f, found) in plan {
                f.remove(indices: Set(found))
                try f.write()
            }
        } }
    }

    // MARK: Groups as a whole (uninstall, backup, restore)

    /// The access groups that have a file, sorted.
    public func storedGroups() throws(KeychainError) -> [AccessGroup] {
        let names: [String]
        do { names = try FileSystem.directoryEntries(directory) } catch { throw .system(error) }
        return names.compactMap { name -> AccessGroup? in
            guard name.hasSuffix(".keychain"), !name.hasPrefix(".") else { return nil }
            return try? AccessGroup(String(name.dropLast(9)))
        }.sorted()
    }

    /// Destroys `groups` (crypto-shredding): their keys are removed from
    /// `keys.plist` first, then their files. Copies of the files left
    /// elsewhere (old temporary files, snapshots, backups outside AppHome)
    /// cannot be opened without the keys. A deliberate AppHome backup
    /// carries its own wrapped key and still restores on this device.
    public func shred(_ groups: [AccessGroup]) throws(KeychainError) {
        try withLock { () throws(KeychainError) in
            // Shredding needs no key: only the record naming this device.
            if let record = try readRecord() {
                var table = try KeyTable.read(path: keysPath, deviceID: record.deviceID)
                for g in groups { table.wrapped[g.rawValue] = nil }
                try table.write(path: keysPath)
            }
            for g in groups {
                do throws(SystemError) { try FileSystem.removeFile(groupPath(g)) } catch { throw .system(error) }
            }
        }
    }
}
