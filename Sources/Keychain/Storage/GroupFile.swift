import AppHomeSystem
import PropertyList

/// One item as stored: only the id, the generation and the keyed lookup
/// tag are in clear; `meta` (every attribute), `key` (the item key) and
/// `secret` are XChaCha20-Poly1305 boxes (`nonce ‖ ciphertext ‖ tag`).
struct StoredItem: Equatable, Sendable {
    var id: [UInt8]
    var generation: UInt64
    var tag: [UInt8]
    var meta: [UInt8]
    var key: [UInt8]
    var secret: [UInt8]
    /// How `key` is wrapped: 1, by the group key only (format 1); 2, by the
    /// group key and then the item's class key.
    var wrap: Int = 2
}

/// An access group's key (AKK) and its subkeys, derived once per key; an
/// open keychain keeps them while the wrapped key in `keys.plist` is the
/// same, so repeated look-ups do not unwrap and derive again.
final class GroupKeys {
    let groupKey: SecureBytes
    let indexKey: SecureBytes
    let metaKey: SecureBytes
    let sealKey: SecureBytes
    /// A group KeyCheck value already opened with this key.
    var verifiedKeyCheck: [UInt8]?

    init(_ akk: SecureBytes) {
        groupKey = akk
        indexKey = Sodium.deriveKey(akk, id: 1, context: "kcIndex_")
        metaKey = Sodium.deriveKey(akk, id: 2, context: "kcMeta__")
        sealKey = Sodium.deriveKey(akk, id: 3, context: "kcSeal__")
    }
}

/// An access group's file `<root>/Keychains/<group>.keychain`, opened with
/// its group key (kept apart, wrapped, in `keys.plist`, so that destroying
/// the key makes every copy of this file unreadable): the key checked, the
/// file seal verified. See
/// `Schemas/keychain.md` for the format and the associated data.
final class GroupFile {
    /// 3: an item's attributes may carry a Secret Service attribute map and
    /// content type (format 2 files are read as they are: their items have none).
    static let formatVersion = 3
    static let keyCheckConstant: [UInt8] = Array("AppHome keychain group key check".utf8)

    let group: AccessGroup
    let path: String
    let deviceID: String
    /// The group key (AKK) and its subkeys.
    let keys: GroupKeys
    var groupKey: SecureBytes { keys.groupKey }
    var indexKey: SecureBytes { keys.indexKey }
    var metaKey: SecureBytes { keys.metaKey }
    var sealKey: SecureBytes { keys.sealKey }
    let keyCheck: [UInt8]
    var items: [StoredItem]
    /// The class keys of this call.
    let classes: ClassKeys
    /// The version the file was read as (a new file: the current one).
    private(set) var version: Int
    private var cache: [Int: ItemAttributes] = [:]

    private init(group: AccessGroup, path: String, deviceID: String, keys: GroupKeys, keyCheck: [UInt8], items: [StoredItem],
                 classes: ClassKeys, version: Int) {
        self.group = group; self.path = path; self.deviceID = deviceID; self.keys = keys
        self.keyCheck = keyCheck; self.items = items; self.classes = classes; self.version = version
    }

    // MARK: Associated data

    static func keyCheckAD(group: AccessGroup) -> [UInt8] {
        var e = CanonicalEncoder()
        e.append("AHKC/1"); e.append("group-key-check"); e.append(group.rawValue)
        return e.bytes
    }

    func metaAD(id: [UInt8], generation: UInt64, tag: [UInt8]) -> [UInt8] {
        var e = CanonicalEncoder()
        e.append("AHKC/1"); e.append("meta"); e.append(group.rawValue); e.append(id); e.append(generation); e.append(tag)
        return e.bytes
    }

    /// format version ‖ purpose ‖ group ‖ class ‖ primary key ‖ accessibility ‖ synchronizable ‖ item id ‖ generation.
    func itemAD(_ purpose: String, _ a: ItemAttributes, id: [UInt8], generation: UInt64, format: String = "AHKC/1") -> [UInt8] {
        var e = CanonicalEncoder()
        e.append(format); e.append(purpose); e.append(group.rawValue); e.append(a.itemClass.rawValue)
        for f in a.primaryKeyFields { e.append(f) }
        e.append(a.accessibility.rawValue); e.append(a.synchronizable ? "1" : "0"); e.append(id); e.append(generation)
        return e.bytes
    }

    /// The keyed lookup tag of a primary key in this group.
    func tag(itemClass: ItemClass, primaryKey: [String]) -> [UInt8] {
        var e = CanonicalEncoder()
        e.append(itemClass.rawValue)
        for f in primaryKey { e.append(f) }
        return Sodium.keyedHash(e.bytes, key: indexKey)
    }

    // MARK: Create, read, write

    /// A new, empty group file for the group key `keys`.
    static func create(group: AccessGroup, path: String, deviceID: String, groupKey keys: GroupKeys, classes: ClassKeys) -> GroupFile {
        let check = Sodium.seal(keyCheckConstant, key: keys.groupKey, ad: keyCheckAD(group: group))
        return GroupFile(group: group, path: path, deviceID: deviceID, keys: keys, keyCheck: check, items: [],
                         classes: classes, version: formatVersion)
    }

    /// Verifies and opens a group file's bytes (also those carried in a backup).
    static func decode(_ bytes: [UInt8], group: AccessGroup, path: String, deviceID: String, groupKey keys: GroupKeys,
                       classes: ClassKeys) throws(KeychainError) -> GroupFile {
        try open(try Records(parsing: bytes, path: path), group: group, path: path, deviceID: deviceID, groupKey: keys, classes: classes)
    }

    /// A group file's records as read, before any key touches them: what a
    /// long-running reader keeps while the file is unchanged
    /// (``KeychainReadCache``). Nothing in it is secret in clear.
    struct Records: Sendable {
        var version: Int
        var group: String
        var deviceID: String
        var keyCheck: [UInt8]
        var seal: [UInt8]
        var items: [StoredItem]

        /// The records of a group file's bytes; checks only their form.
        init(parsing bytes: [UInt8], path: String) throws(KeychainError) {
            func corrupt(_ why: String) -> KeychainError { .corrupt(path: path, reason: why) }
            guard let top = (try? PlistCodec.decode(bytes))?.dictionaryValue else { throw corrupt("it is not a readable property list (truncated?)") }
            guard case .integer(let v)? = top["FormatVersion"] else { throw corrupt("FormatVersion is missing") }
            if v > Int128(formatVersion) { throw .versionTooNew(path: path, found: Int(clamping: v), supported: formatVersion) }
            guard v >= 1 && v <= 3 else { throw corrupt("FormatVersion \(v) is not valid") }
            guard case .string(let g)? = top["AccessGroup"] else { throw corrupt("AccessGroup is missing") }
            guard case .string(let dev)? = top["DeviceID"] else { throw corrupt("DeviceID is missing") }
            guard case .data(let check)? = top["KeyCheck"], case .data(let seal)? = top["Seal"], case .array(let list)? = top["Items"] else {
                throw corrupt("KeyCheck, Seal or Items is missing")
            }
            var items: [StoredItem] = []
            for (i, entry) in list.enumerated() {
                guard let d = entry.dictionaryValue, case .data(let id)? = d["ID"], id.count == 16,
                      case .integer(let gen)? = d["Generation"], gen >= 0, gen <= Int128(UInt64.max),
                      case .data(let tag)? = d["Tag"], case .data(let meta)? = d["Meta"],
                      case .data(let key)? = d["Key"], case .data(let secret)? = d["Secret"] else {
                    throw corrupt("item \(i) is malformed")
                }
                items.append(StoredItem(id: id, generation: UInt64(gen), tag: tag, meta: meta, key: key, secret: secret, wrap: v == 1 ? 1 : 2))
            }
            version = Int(v); group = g; deviceID = dev; keyCheck = check; self.seal = seal; self.items = items
        }
    }

    /// Opens parsed records with the group key: the group, device, key
    /// check and file seal verified.
    static func open(_ r: Records, group: AccessGroup, path: String, deviceID: String, groupKey keys: GroupKeys,
                     classes: ClassKeys) throws(KeychainError) -> GroupFile {
        func corrupt(_ why: String) -> KeychainError { .corrupt(path: path, reason: why) }
        guard r.group == group.rawValue else { throw corrupt("it belongs to the access group '\(r.group)', not '\(group.rawValue)'") }
        guard r.deviceID == deviceID else { throw .wrongKey("\(path) was made on another device (\(r.deviceID))") }
        if keys.verifiedKeyCheck != r.keyCheck {
            guard Sodium.open(r.keyCheck, key: keys.groupKey, ad: keyCheckAD(group: group)) != nil else {
                throw corrupt("the group key check failed (the file does not belong to this group's key)")
            }
            keys.verifiedKeyCheck = r.keyCheck
        }
        let file = GroupFile(group: group, path: path, deviceID: deviceID, keys: keys, keyCheck: r.keyCheck, items: r.items,
                             classes: classes, version: r.version)
        guard Sodium.equal(file.computeSeal(), r.seal) else {
            throw corrupt("the file seal does not match (records changed, removed, added or reordered)")
        }
        return file
    }

    /// The keyed hash over the header and every record, in order.
    func computeSeal() -> [UInt8] {
        var e = CanonicalEncoder()
        // The purpose names the format (format 3 read as 2 would lose nothing, but
        // a changed number is a changed file).
        e.append("AHKC/1"); e.append(version == 1 ? "seal" : version == 2 ? "seal/2" : "seal/3"); e.append(group.rawValue); e.append(deviceID)
        e.append(keyCheck); e.append(UInt64(items.count))
        for item in items {
            e.append(item.id); e.append(item.generation); e.append(item.tag); e.append(item.meta); e.append(item.key); e.append(item.secret)
        }
        return Sodium.keyedHash(e.bytes, key: sealKey)
    }

    func encoded() throws(KeychainError) -> [UInt8] {
        try upgrade()
        let list: [PlistValue] = items.map {
            .dictionary(["ID": .data($0.id), "Generation": .integer(Int128($0.generation)), "Tag": .data($0.tag),
                         "Meta": .data($0.meta), "Key": .data($0.key), "Secret": .data($0.secret)])
        }
        let top: [PlistKey: PlistValue] = [
            "FormatVersion": .integer(Int128(Self.formatVersion)),
            "AccessGroup": .string(group.rawValue),
            "DeviceID": .string(deviceID),
            "KeyCheck": .data(keyCheck),
            "Items": .array(list),
            "Seal": .data(computeSeal()),
        ]
        return try KeychainError.binaryPlist(top)
    }

    /// Moves a format-1 file to format 2: every item key wrapped by the group
    /// key alone is wrapped again, under the group key and then its class key
    /// (the secret boxes stay as they are). Needs the class key of every such
    /// item: ``KeychainError/interactionNotAllowed(_:)`` otherwise.
    func upgrade() throws(KeychainError) {
        for i in items.indices where items[i].wrap == 1 {
            let a = try attributes(at: i)
            let item = items[i]
            guard let idk = Sodium.open(item.key, key: groupKey, ad: itemAD("item-key", a, id: item.id, generation: item.generation)) else {
                throw .corrupt(path: path, reason: "an item's key does not open")
            }
            items[i].key = try wrapItemKey(idk, a, id: item.id, generation: item.generation)
            items[i].wrap = 2
        }
        version = Self.formatVersion
    }

    /// The item key sealed under the group key, then under the class key.
    func wrapItemKey(_ idk: SecureBytes, _ a: ItemAttributes, id: [UInt8], generation: UInt64) throws(KeychainError) -> [UInt8] {
        let ck = try classes.classKey(a.accessibility)
        let inner = Sodium.seal(idk, key: groupKey, ad: itemAD("item-key", a, id: id, generation: generation, format: "AHKC/2"))
        return Sodium.seal(inner, key: ck, ad: itemAD("item-key-class", a, id: id, generation: generation, format: "AHKC/2"))
    }

    /// Writes the file atomically and durably (0600); an empty group's file is removed.
    func write() throws(KeychainError) {
        if items.isEmpty {
            do { try FileSystem.removeFile(path) } catch { throw .system(error) }
            return
        }
        let bytes = try encoded()
        do { try FileSystem.writeAtomically(bytes, to: path) } catch { throw .system(error) }
    }

    // MARK: Items

    /// The attributes of item `index`, decrypted and checked against its tag.
    func attributes(at index: Int) throws(KeychainError) -> ItemAttributes {
        if let a = cache[index] { return a }
        let item = items[index]
        guard let plain = Sodium.open(item.meta, key: metaKey, ad: metaAD(id: item.id, generation: item.generation, tag: item.tag)) else {
            throw .corrupt(path: path, reason: "the attributes of an item do not open")
        }
        var bytes = plain.exposedCopy()
        defer { Sodium.wipe(&bytes) }
        guard let a = Self.decodeAttributes(bytes, group: group) else { throw .corrupt(path: path, reason: "the attributes of an item are malformed") }
        guard Sodium.equal(tag(itemClass: a.itemClass, primaryKey: a.primaryKeyFields), item.tag) else {
            throw .corrupt(path: path, reason: "an item's lookup tag does not match its attributes")
        }
        cache[index] = a
        return a
    }

    /// The secret of item `index`.
    func secret(at index: Int) throws(KeychainError) -> SecureBytes {
        let a = try attributes(at: index)
        let item = items[index]
        let idk: SecureBytes?
        if item.wrap == 1 {
            _ = try classes.classKey(a.accessibility) // the class rules hold for an old item too
            idk = Sodium.open(item.key, key: groupKey, ad: itemAD("item-key", a, id: item.id, generation: item.generation))
        } else {
            let ck = try classes.classKey(a.accessibility)
            idk = Sodium.open(item.key, key: ck, ad: itemAD("item-key-class", a, id: item.id, generation: item.generation, format: "AHKC/2"))
                .flatMap { inner in
                    Sodium.open(inner.exposedCopy(), key: groupKey, ad: itemAD("item-key", a, id: item.id, generation: item.generation, format: "AHKC/2"))
                }
        }
        guard let idk,
              let secret = Sodium.open(item.secret, key: idk, ad: itemAD("secret", a, id: item.id, generation: item.generation)) else {
            throw .corrupt(path: path, reason: "an item's secret does not open")
        }
        return secret
    }

    /// Seals `attributes` (group set to this group) and `secret` as a record
    /// with a fresh item key and fresh nonces.
    func makeItem(_ attributes: ItemAttributes, secret: SecureBytes, id: [UInt8], generation: UInt64) throws(KeychainError) -> StoredItem {
        var a = attributes
        a.accessGroup = group
        let t = tag(itemClass: a.itemClass, primaryKey: a.primaryKeyFields)
        var plain = try Self.encodeAttributes(a)
        defer { Sodium.wipe(&plain) }
        let meta = Sodium.seal(plain, key: metaKey, ad: metaAD(id: id, generation: generation, tag: t))
        let idk = SecureBytes.random(count: Sodium.keyBytes)
        let key = try wrapItemKey(idk, a, id: id, generation: generation)
        let sealed = Sodium.seal(secret, key: idk, ad: itemAD("secret", a, id: id, generation: generation))
        return StoredItem(id: id, generation: generation, tag: t, meta: meta, key: key, secret: sealed)
    }

    func append(_ item: StoredItem, attributes: ItemAttributes) {
        var a = attributes
        a.accessGroup = group
        cache[items.count] = a
        items.append(item)
    }

    func replace(at index: Int, with item: StoredItem, attributes: ItemAttributes) {
        var a = attributes
        a.accessGroup = group
        items[index] = item
        cache[index] = a
    }

    func remove(indices: Set<Int>) {
        var kept: [StoredItem] = []
        var newCache: [Int: ItemAttributes] = [:]
        for (i, item) in items.enumerated() where !indices.contains(i) {
            if let a = cache[i] { newCache[kept.count] = a }
            kept.append(item)
        }
        items = kept
        cache = newCache
    }

    // MARK: Attribute encoding (inside the `meta` box)

    static func encodeAttributes(_ a: ItemAttributes) throws(KeychainError) -> [UInt8] {
        var d: [PlistKey: PlistValue] = [
            "Class": .string(a.itemClass.rawValue),
            "Account": .string(a.account),
            "Sync": .bool(a.synchronizable),
            "Accessible": .string(a.accessibility.rawValue),
            "Created": .date(a.creationDate),
            "Modified": .date(a.modificationDate),
        ]
        switch a.itemClass {
        case .genericPassword:
            d["Service"] = .string(a.service)
        case .internetPassword:
            d["Server"] = .string(a.server); d["Protocol"] = .string(a.protocol); d["Port"] = .integer(Int128(a.port))
            d["Path"] = .string(a.path); d["AuthType"] = .string(a.authenticationType); d["SecurityDomain"] = .string(a.securityDomain)
        }
        if let v = a.label { d["Label"] = .string(v) }
        if let v = a.description { d["Description"] = .string(v) }
        if let v = a.comment { d["Comment"] = .string(v) }
        if let v = a.generic { d["Generic"] = .data(v) }
        if let map = a.secretServiceAttributes { d["SSAttributes"] = .dictionary(map.mapValues { .string($0) }) }
        if let v = a.contentType { d["ContentType"] = .string(v) }
        return try KeychainError.binaryPlist(d)
    }

    static func decodeAttributes(_ bytes: [UInt8], group: AccessGroup) -> ItemAttributes? {
        guard let d = (try? PlistCodec.decode(bytes, format: .binary))?.dictionaryValue else { return nil }
        func s(_ k: String) -> String? { if case .string(let v)? = d[k] { return v }; return nil }
        guard let c = s("Class"), let cls = ItemClass(rawValue: c), let account = s("Account"),
              case .bool(let sync)? = d["Sync"], let acc = s("Accessible").flatMap(Accessibility.init(rawValue:)),
              case .date(let created)? = d["Created"], case .date(let modified)? = d["Modified"] else { return nil }
        var a = ItemAttributes(itemClass: cls, accessGroup: group, creationDate: created, modificationDate: modified)
        a.account = account; a.synchronizable = sync; a.accessibility = acc
        switch cls {
        case .genericPassword:
            guard let service = s("Service") else { return nil }
            a.service = service
        case .internetPassword:
            guard let server = s("Server"), let p = s("Protocol"), case .integer(let port)? = d["Port"], let path = s("Path"),
                  let at = s("AuthType"), let sd = s("SecurityDomain") else { return nil }
            a.server = server; a.protocol = p; a.port = Int(clamping: port); a.path = path; a.authenticationType = at; a.securityDomain = sd
        }
        a.label = s("Label"); a.description = s("Description"); a.comment = s("Comment")
        if case .data(let g)? = d["Generic"] { a.generic = g }
        if let v = d["SSAttributes"] {
            guard case .dictionary(let map) = v else { return nil }
            var out: [PlistKey: String] = [:]
            for (k, e) in map {
                guard case .string(let s) = e else { return nil }
                out[k] = s
            }
            a.secretServiceAttributes = out
        }
        if let v = d["ContentType"] {
            guard case .string(let s) = v else { return nil }
            a.contentType = s
        }
        return a
    }
}
