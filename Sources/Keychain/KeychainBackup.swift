import AppHomeSystem
import Containers
import PropertyList

extension Keychain {
    /// The payload's format: 2 adds the optional backup-password part
    /// (version 1 payloads still restore).
    static let backupFormatVersion = 2

    static func passwordCheckAD() -> [UInt8] { Array("apphome.keychain.backup.2.check".utf8) }
    static func migratableAD(_ group: String) -> [UInt8] { Array("apphome.keychain.backup.2.items\u{0}".utf8) + Array(group.utf8) }

    /// A backup payload for `groups`: each group's file as it is on disk,
    /// still sealed under this device's key, or `nil` when none has items.
    ///
    /// With a `password`, each group's migratable items (accessibility
    /// without ThisDeviceOnly) are also sealed under a key derived from it
    /// with Argon2id (`kdf`, fresh parameters by default), so that they can
    /// be restored on another device.
    func backupPayload(groups: [AccessGroup], password: SecureBytes? = nil,
                       kdf: PassphraseParameters? = nil) throws(KeychainError) -> [UInt8]? {
        guard let record = try readRecord() else { return nil }
        // One snapshot of the keys and the files, under the writers' lock;
        // the migratable items are decoded from these same bytes.
        var snapshot: [(group: AccessGroup, bytes: [UInt8], key: [UInt8])] = []
        try withLock { () throws(KeychainError) in
            let table = try KeyTable.read(path: keysPath, deviceID: record.deviceID)
            for g in groups {
                if let bytes = try PrivateFile.read(groupPath(g)), let key = table.wrapped[g.rawValue] { snapshot.append((g, bytes, key)) }
            }
        }
        if snapshot.isEmpty { return nil }
        var files: [PlistKey: PlistValue] = [:]
        for s in snapshot { files[s.group.rawValue] = .dictionary(["File": .data(s.bytes), "Key": .data(s.key)]) }
        var top: [PlistKey: PlistValue] = [
            "FormatVersion": .integer(Int128(Self.backupFormatVersion)), "DeviceID": .string(record.deviceID),
        ]
        if let password {
            let parameters = kdf ?? .fresh()
            let key = try parameters.deriveKey(password)
            top["Password"] = .dictionary(["Parameters": parameters.plist,
                                           "Check": .data(Sodium.seal([UInt8](), key: key, ad: Self.passwordCheckAD()))])
            let device = try loadDevice(create: false)!
            for s in snapshot {
                let path = groupPath(s.group)
                let groupKey = GroupKeys(try KeyTable.unwrap(s.key, group: s.group, deviceID: record.deviceID, kek: device.kek, path: keysPath))
                let file = try GroupFile.decode(s.bytes, group: s.group, path: path, deviceID: record.deviceID, groupKey: groupKey, classes: device)
                guard case .dictionary(var entry)? = files[s.group.rawValue] else { continue }
                entry["Migratable"] = .data(Sodium.seal(try Self.exportMigratable(file), key: key, ad: Self.migratableAD(s.group.rawValue)))
                files[s.group.rawValue] = .dictionary(entry)
            }
        }
        top["Groups"] = .dictionary(files)
        return try KeychainError.binaryPlist(top)
    }

    /// The migratable items of `file`, in secure memory: for each, the
    /// attribute encoding and the secret, each after its 4-byte length.
    static func exportMigratable(_ file: GroupFile) throws(KeychainError) -> SecureBytes {
        var parts: [([UInt8], SecureBytes)] = []
        for i in file.items.indices {
            let a = try file.attributes(at: i)
            if a.accessibility.isThisDeviceOnly { continue }
            parts.append((try GroupFile.encodeAttributes(a), try file.secret(at: i)))
        }
        let total = parts.reduce(0) { $0 + 8 + $1.0.count + $1.1.count }
        return SecureBytes(count: total) { out in
            var at = 0
            func put(_ bytes: UnsafeRawBufferPointer) {
                var n = UInt32(bytes.count).bigEndian
                withUnsafeBytes(of: &n) { out.baseAddress!.advanced(by: at).copyMemory(from: $0.baseAddress!, byteCount: 4) }
                at += 4
                if bytes.count > 0 { out.baseAddress!.advanced(by: at).copyMemory(from: bytes.baseAddress!, byteCount: bytes.count) }
                at += bytes.count
            }
            for (attributes, secret) in parts {
                attributes.withUnsafeBytes { put($0) }
                secret.withUnsafeBytes { put($0) }
            }
        }
    }

    /// Reads what ``exportMigratable(_:)`` wrote, or `nil` when malformed.
    static func importMigratable(_ bytes: SecureBytes, group: AccessGroup) -> [(ItemAttributes, SecureBytes)]? {
        bytes.withUnsafeBytes { b -> [(ItemAttributes, SecureBytes)]? in
            var at = 0
            func take() -> UnsafeRawBufferPointer? {
                guard b.count - at >= 4 else { return nil }
                let n = Int(b[at]) << 24 | Int(b[at + 1]) << 16 | Int(b[at + 2]) << 8 | Int(b[at + 3])
                at += 4
                guard b.count - at >= n else { return nil }
                defer { at += n }
                return UnsafeRawBufferPointer(rebasing: b[at..<at + n])
            }
            var out: [(ItemAttributes, SecureBytes)] = []
            while at < b.count {
                guard let a = take(), let s = take(),
                      let attributes = GroupFile.decodeAttributes(Array(a), group: group), !attributes.accessibility.isThisDeviceOnly else { return nil }
                out.append((attributes, SecureBytes(copying: s)))
            }
            return out
        }
    }

    /// The parts of a payload, checked.
    struct BackupPayload {
        var deviceID: String
        var groups: [PlistKey: PlistValue]
        var password: (parameters: PassphraseParameters, check: [UInt8])?
    }

    static func decodeBackupPayload(_ payload: [UInt8], weakKDFForTesting: Bool) throws(KeychainError) -> BackupPayload {
        let where_ = "keychain backup payload"
        guard let top = (try? PlistCodec.decode(payload))?.dictionaryValue, case .integer(let v)? = top["FormatVersion"] else {
            throw .corrupt(path: where_, reason: "not a readable property list")
        }
        if v > Int128(backupFormatVersion) { throw .versionTooNew(path: where_, found: Int(clamping: v), supported: backupFormatVersion) }
        guard case .string(let backupDevice)? = top["DeviceID"], case .dictionary(let groups)? = top["Groups"] else {
            throw .corrupt(path: where_, reason: "DeviceID or Groups is missing")
        }
        var result = BackupPayload(deviceID: backupDevice, groups: groups, password: nil)
        if let p = top["Password"] {
            guard v >= 2, case .dictionary(let d) = p, let params = d["Parameters"], case .data(let check)? = d["Check"] else {
                throw .corrupt(path: where_, reason: "the backup password part is malformed")
            }
            result.password = (try PassphraseParameters(plist: params, belowFloorForTesting: weakKDFForTesting), check)
        }
        return result
    }

    /// The key `password` derives for `payload`, or `nil` when either has
    /// no password.
    ///
    /// - Throws: ``KeychainError/wrongBackupPassword`` when it does not
    ///   open the payload's check value.
    static func backupKey(_ payload: BackupPayload, password: SecureBytes?, keys: DerivedKeyCache? = nil) throws(KeychainError) -> SecureBytes? {
        guard let password, let stored = payload.password else { return nil }
        let key: SecureBytes
        if let keys { key = try keys.key(password, stored.parameters) } else { key = try stored.parameters.deriveKey(password) }
        guard Sodium.open(stored.check, key: key, ad: passwordCheckAD()) != nil else { throw .wrongBackupPassword }
        return key
    }

    /// Refuses a `password` that does not open `payload` (before a restore changes anything).
    func checkRestore(payload: [UInt8], password: SecureBytes?, keys: DerivedKeyCache? = nil,
                      weakKDFForTesting: Bool = false) throws(KeychainError) {
        _ = try Self.backupKey(try Self.decodeBackupPayload(payload, weakKDFForTesting: weakKDFForTesting), password: password, keys: keys)
    }

    /// Restores a payload from ``backupPayload(groups:password:kdf:)`` for
    /// `context`. Items from the backup replace items with the same primary
    /// key; other items stay. Returns one note per group for the user.
    ///
    /// - Same device: every item is restored (from the file sealed under
    ///   this device's key), with or without the password.
    /// - Another device: with the backup password, the migratable items
    ///   are restored (sealed again under this device's keys) and the
    ///   ThisDeviceOnly ones skipped; without it, all are skipped.
    /// - A wrong password: ``KeychainError/wrongBackupPassword``, nothing changed.
    func restore(payload: [UInt8], context: KeychainContext, password: SecureBytes? = nil, keys: DerivedKeyCache? = nil,
                 weakKDFForTesting: Bool = false) throws(KeychainError) -> [String] {
        let where_ = "keychain backup payload"
        let decoded = try Self.decodeBackupPayload(payload, weakKDFForTesting: weakKDFForTesting)
        let key = try Self.backupKey(decoded, password: password, keys: keys)
        let app = context.bundleIdentifier
        var notes: [String] = []
        if password != nil && decoded.password == nil {
            notes.append("keychain: the backup was made without a backup password; the password given was not needed")
        }
        let thisDevice = try readRecord()?.deviceID
        let sameDevice = decoded.deviceID == thisDevice
        for name in decoded.groups.sortedKeyStrings {
            guard case .dictionary(let entry)? = decoded.groups[name], case .data(let bytes)? = entry["File"], case .data(let wrappedKey)? = entry["Key"],
                  let group = try? AccessGroup(name) else {
                throw .corrupt(path: where_, reason: "the entry for group '\(name)' is malformed")
            }
            let count = Self.itemCount(bytes)
            var migrated: [(ItemAttributes, SecureBytes)]? = nil
            if !sameDevice {
                guard let key, case .data(let sealed)? = entry["Migratable"] else {
                    let hint = decoded.password != nil ? "; give the backup password to restore its migratable items" : ""
                    notes.append("keychain: \(count) item(s) of access group \(name) for \(app) not restored: the backup was made on another device, and keychain items stay on the device that made them\(hint)")
                    continue
                }
                guard let opened = Sodium.open(sealed, key: key, ad: Self.migratableAD(name)),
                      let items = Self.importMigratable(opened, group: group) else {
                    throw .corrupt(path: where_, reason: "the migratable items of group '\(name)' do not open")
                }
                migrated = items
            }
            guard context.accessGroups.contains(group) else {
                notes.append("keychain: \(count) item(s) of access group \(name) not restored: \(app) no longer lists that group")
                continue
            }
            let restored = try withLock { () throws(KeychainError) -> Int in
                let device = try loadDevice(create: migrated != nil)!
                let path = where_ + " (" + name + ")"
                var incoming: [(ItemAttributes, SecureBytes, id: [UInt8]?, generation: UInt64)] = []
                if let migrated {
                    incoming = migrated.map { ($0.0, $0.1, nil, 0) }
                } else {
                    let akk = GroupKeys(try KeyTable.unwrap(wrappedKey, group: group, deviceID: device.record.deviceID, kek: device.kek, path: path))
                    let source = try GroupFile.decode(bytes, group: group, path: path, deviceID: device.record.deviceID, groupKey: akk, classes: device)
                    for i in source.items.indices {
                        incoming.append((try source.attributes(at: i), try source.secret(at: i), source.items[i].id, source.items[i].generation))
                    }
                }
                let target = try openOrCreateGroup(group, device: device)
                for (a, secret, id, generation) in incoming {
                    let tag = target.tag(itemClass: a.itemClass, primaryKey: a.primaryKeyFields)
                    if let j = target.items.firstIndex(where: { Sodium.equal($0.tag, tag) }) {
                        let gen = max(target.items[j].generation, generation) + 1
                        target.replace(at: j, with: try target.makeItem(a, secret: secret, id: target.items[j].id, generation: gen), attributes: a)
                    } else {
                        target.append(try target.makeItem(a, secret: secret, id: id ?? Sodium.randomBytes(16), generation: generation + 1), attributes: a)
                    }
                }
                try target.write()
                return incoming.count
            }
            if let migrated, count > migrated.count {
                notes.append("keychain: restored \(restored) item(s) of access group \(name) with the backup password; \(count - migrated.count) ThisDeviceOnly item(s) not restored: they never leave the device that made them")
            } else if migrated != nil {
                notes.append("keychain: restored \(restored) item(s) of access group \(name) with the backup password")
            } else {
                notes.append("keychain: restored \(restored) item(s) of access group \(name)")
            }
        }
        return notes
    }

    /// The number of records in a group file (in clear), for messages.
    static func itemCount(_ bytes: [UInt8]) -> Int {
        guard case .array(let items)? = (try? PlistCodec.decode(bytes))?.dictionaryValue?["Items"] else { return 0 }
        return items.count
    }
}
