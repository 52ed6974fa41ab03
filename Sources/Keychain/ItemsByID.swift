import AppHomeSystem
import PropertyList

/// One item of an access group with its stable id (the 16 random bytes
/// recorded with it; an update keeps them): what a Secret Service object path
/// names.
public struct IdentifiedItem: Sendable {
    public var id: [UInt8]
    public var attributes: ItemAttributes
}

/// Items of one access group by id, for the Secret Service provider, which
/// names each item by a D-Bus object path and searches on attribute maps the
/// `SecItem` queries do not have. The same files, keys, classes and lock as
/// every other call.
extension Keychain {
    /// Every item of `group` with its attributes, in file order (empty
    /// before the first write or when the group has no file).
    ///
    /// - Throws: ``KeychainError/interactionNotAllowed(_:)`` when the keychain
    ///   cannot be opened now (a passphrase keychain never unlocked since boot).
    public func identifiedItems(in group: AccessGroup) throws(KeychainError) -> [IdentifiedItem] {
        try call { () throws(KeychainError) -> [IdentifiedItem] in
            guard let device = try loadDevice(create: false), let file = try openGroup(group, device: device) else { return [] }
            var out: [IdentifiedItem] = []
            out.reserveCapacity(file.items.count)
            for i in file.items.indices { out.append(IdentifiedItem(id: file.items[i].id, attributes: try file.attributes(at: i))) }
            return out
        }
    }

    /// The secret of the item `id` of `group`.
    ///
    /// - Throws: ``KeychainError/itemNotFound`` when there is no such item;
    ///   ``KeychainError/interactionNotAllowed(_:)`` when its class is closed.
    public func secret(ofItem id: [UInt8], in group: AccessGroup) throws(KeychainError) -> SecureBytes {
        try call { () throws(KeychainError) -> SecureBytes in
            guard let device = try loadDevice(create: false), let file = try openGroup(group, device: device),
                  let i = file.items.firstIndex(where: { $0.id == id }) else { throw .itemNotFound }
            return try file.secret(at: i)
        }
    }

    /// Adds an item to `group`, or with `replace` replaces the item with
    /// the same primary key (keeping its id and creation date). Returns the
    /// item's id and whether it replaced one.
    ///
    /// - Throws: ``KeychainError/duplicateItem`` when the key exists and
    ///   `replace` is false; ``KeychainError/invalidParameter(_:)`` past `maxItems`.
    public func addOrReplace(_ attributes: ItemAttributes, data: SecureBytes, in group: AccessGroup, replace: Bool,
                             maxItems: Int) throws(KeychainError) -> (id: [UInt8], replaced: Bool) {
        var a = attributes
        a.accessGroup = group
        try Self.validate(a)
        let date = now()
        a.modificationDate = date
        return try call { () throws(KeychainError) -> ([UInt8], Bool) in try withLock { () throws(KeychainError) -> ([UInt8], Bool) in
            let device = try loadDevice(create: true)!
            let file = try openOrCreateGroup(group, device: device)
            let tag = file.tag(itemClass: a.itemClass, primaryKey: a.primaryKeyFields)
            if let i = file.items.firstIndex(where: { Sodium.equal($0.tag, tag) }) {
                guard replace else { throw .duplicateItem }
                let old = try file.attributes(at: i)
                // The old item's class must be open to replace it.
                _ = try device.classKey(old.accessibility)
                a.creationDate = old.creationDate
                let id = file.items[i].id
                file.replace(at: i, with: try file.makeItem(a, secret: data, id: id, generation: file.items[i].generation + 1), attributes: a)
                try file.write()
                return (id, true)
            }
            if file.items.count >= maxItems {
                throw .invalidParameter("the access group holds \(file.items.count) items, the most this service adds")
            }
            a.creationDate = date
            let id = Sodium.randomBytes(16)
            file.append(try file.makeItem(a, secret: data, id: id, generation: 1), attributes: a)
            try file.write()
            return (id, false)
        } }
    }

    /// Changes the item `id` of `group`: `change` edits its attributes (not
    /// its class or group), `data` replaces its secret. Sealed again under a
    /// fresh item key; the modification date is now.
    ///
    /// - Throws: ``KeychainError/itemNotFound``; ``KeychainError/duplicateItem``
    ///   when the new attributes are another item's primary key.
    public func updateItem(_ id: [UInt8], in group: AccessGroup, data: SecureBytes?,
                           change: (inout ItemAttributes) -> Void) throws(KeychainError) {
        try call { () throws(KeychainError) in try withLock { () throws(KeychainError) in
            guard let device = try loadDevice(create: false), let file = try openGroup(group, device: device),
                  let i = file.items.firstIndex(where: { $0.id == id }) else { throw .itemNotFound }
            var a = try file.attributes(at: i)
            let itemClass = a.itemClass
            change(&a)
            a.itemClass = itemClass
            a.accessGroup = group
            a.modificationDate = now()
            try Self.validate(a)
            let tag = file.tag(itemClass: a.itemClass, primaryKey: a.primaryKeyFields)
            for (j, item) in file.items.enumerated() where j != i && Sodium.equal(item.tag, tag) { throw .duplicateItem }
            let secret: SecureBytes
            if let data { secret = data } else { secret = try file.secret(at: i) }
            file.replace(at: i, with: try file.makeItem(a, secret: secret, id: id, generation: file.items[i].generation + 1), attributes: a)
            try file.write()
        } }
    }

    /// Deletes the item `id` of `group`.
    ///
    /// - Throws: ``KeychainError/itemNotFound``; ``KeychainError/interactionNotAllowed(_:)``
    ///   when its class is closed.
    public func deleteItem(_ id: [UInt8], in group: AccessGroup) throws(KeychainError) {
        try call { () throws(KeychainError) in try withLock { () throws(KeychainError) in
            guard let device = try loadDevice(create: false), let file = try openGroup(group, device: device),
                  let i = file.items.firstIndex(where: { $0.id == id }) else { throw .itemNotFound }
            _ = try device.classKey(try file.attributes(at: i).accessibility)
            file.remove(indices: [i])
            try file.write()
        } }
    }

    /// Makes the keychain with its device key in the key file, if there is
    /// none yet (the Secret Service provider's start with the file key).
    public func createIfAbsent() throws(KeychainError) {
        try call { () throws(KeychainError) in try withLock { () throws(KeychainError) in _ = try loadDevice(create: true) } }
    }
}
