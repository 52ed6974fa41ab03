import Containers
import Preferences
import PropertyList

extension Keychain {
    /// A backup payload for `groups`: each group's file as it is on disk,
    /// still sealed under this device's key, or `nil` when none has items.
    func backupPayload(groups: [AccessGroup]) throws(KeychainError) -> [UInt8]? {
        guard let record = try readRecord() else { return nil }
        let table = try KeyTable.read(path: keysPath, deviceID: record.deviceID)
        var files: [String: PlistValue] = [:]
        for g in groups {
            let bytes: [UInt8]?
            bytes = try PrivateFile.read(groupPath(g))
            if let bytes, let key = table.wrapped[g.rawValue] { files[g.rawValue] = .dictionary(["File": .data(bytes), "Key": .data(key)]) }
        }
        if files.isEmpty { return nil }
        let top: [String: PlistValue] = [
            "FormatVersion": .integer(1), "DeviceID": .string(record.deviceID), "Groups": .dictionary(files),
        ]
        return try? PlistCodec.encode(.dictionary(top), format: .binary)
    }

    /// Restores a payload from ``backupPayload(groups:)`` for `context`.
    /// Items from the backup replace items with the same primary key; other
    /// items stay. Returns one note per group for the user.
    func restore(payload: [UInt8], context: KeychainContext) throws(KeychainError) -> [String] {
        let where_ = "keychain backup payload"
        guard let top = (try? PlistCodec.decode(payload))?.dictionaryValue, case .integer(let v)? = top["FormatVersion"] else {
            throw .corrupt(path: where_, reason: "not a readable property list")
        }
        if v > 1 { throw .versionTooNew(path: where_, found: Int(clamping: v), supported: 1) }
        guard case .string(let backupDevice)? = top["DeviceID"], case .dictionary(let groups)? = top["Groups"] else {
            throw .corrupt(path: where_, reason: "DeviceID or Groups is missing")
        }
        let app = context.bundleIdentifier
        var notes: [String] = []
        let thisDevice = try readRecord()?.deviceID
        for name in groups.keys.sorted() {
            guard case .dictionary(let entry)? = groups[name], case .data(let bytes)? = entry["File"], case .data(let wrappedKey)? = entry["Key"],
                  let group = try? AccessGroup(name) else {
                throw .corrupt(path: where_, reason: "the entry for group '\(name)' is malformed")
            }
            let count = Self.itemCount(bytes)
            guard backupDevice == thisDevice else {
                notes.append("keychain: \(count) item(s) of access group \(name) for \(app) not restored: the backup was made on another device, and keychain items stay on the device that made them")
                continue
            }
            guard context.accessGroups.contains(group) else {
                notes.append("keychain: \(count) item(s) of access group \(name) not restored: \(app) no longer lists that group")
                continue
            }
            let restored = try withLock { () throws(KeychainError) -> Int in
                let device = try loadDevice(create: false)!
                let path = where_ + " (" + name + ")"
                let akk = GroupKeys(try KeyTable.unwrap(wrappedKey, group: group, deviceID: device.record.deviceID, kek: device.kek, path: path))
                let source = try GroupFile.decode(bytes, group: group, path: path, deviceID: device.record.deviceID, groupKey: akk)
                let target = try openOrCreateGroup(group, device: device)
                for i in source.items.indices {
                    let a = try source.attributes(at: i)
                    let secret = try source.secret(at: i)
                    let item = source.items[i]
                    if let j = target.items.firstIndex(where: { Sodium.equal($0.tag, target.tag(itemClass: a.itemClass, primaryKey: a.primaryKeyFields)) }) {
                        let gen = max(target.items[j].generation, item.generation) + 1
                        target.replace(at: j, with: target.makeItem(a, secret: secret, id: target.items[j].id, generation: gen), attributes: a)
                    } else {
                        target.append(target.makeItem(a, secret: secret, id: item.id, generation: item.generation + 1), attributes: a)
                    }
                }
                try target.write()
                return source.items.count
            }
            notes.append("keychain: restored \(restored) item(s) of access group \(name)")
        }
        return notes
    }

    /// The number of records in a group file (in clear), for messages.
    static func itemCount(_ bytes: [UInt8]) -> Int {
        guard case .array(let items)? = (try? PlistCodec.decode(bytes))?.dictionaryValue?["Items"] else { return 0 }
        return items.count
    }
}

/// The keychain's part in app lifecycles (see ``AppDataParticipant``).
///
/// - Uninstall: every access group no remaining installed app lists is
///   crypto-shredded (its file and the wrapped group key in it removed).
///   A group shared with another installed app stays until its last member
///   goes. Shipping iOS keeps keychain items after uninstall; AppHome follows
///   the privacy intent of the iOS 10.3 beta, which deleted them.
/// - Backup: the app's groups' files, still sealed under this device's key.
/// - Restore: on the same device, items come back; on another device they
///   cannot be opened and are skipped with a note.
public struct KeychainParticipant: AppDataParticipant {
    public let root: String
    public let policy: DeviceKeyPolicy
    public let now: @Sendable () -> PlistDate

    public init(root: String, policy: DeviceKeyPolicy, now: @escaping @Sendable () -> PlistDate = ContainerManager.systemClock) {
        self.root = root
        self.policy = policy
        self.now = now
    }

    public var name: String { "keychain" }

    func keychain() -> Keychain { Keychain(root: root, policy: policy, now: now) }

    /// - Throws: when a remaining app's `Info.plist` cannot be read (then
    ///   nothing is removed, so no group still in use is lost).
    public func appUninstalled(_ entry: RegistryEntry, remaining: [RegistryEntry]) throws {
        let layout = ContainerLayout(root: root)
        var inUse: Set<AccessGroup> = []
        for other in remaining { inUse.formUnion(try KeychainContext(installed: other, layout: layout).accessGroups) }
        let k = keychain()
        let doomed = try k.storedGroups().filter { !inUse.contains($0) }
        if !doomed.isEmpty { try k.shred(doomed) }
    }

    public func backupPayload(for entry: RegistryEntry) throws -> [UInt8]? {
        let context = try KeychainContext(installed: entry, layout: ContainerLayout(root: root))
        return try keychain().backupPayload(groups: context.accessGroups)
    }

    public func restore(_ payload: [UInt8], for entry: RegistryEntry) throws -> [String] {
        let context = try KeychainContext(installed: entry, layout: ContainerLayout(root: root))
        return try keychain().restore(payload: payload, context: context)
    }
}
