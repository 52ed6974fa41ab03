import Foundation
import AppHomeSystem
import Keychain
import KeychainClient
import PropertyList

// Apple's four keychain-item functions, as Swift sees them, on the keychain of
// the app this process runs as (KeychainClient's CurrentApp): through prefsd
// when one answers (inside the app's sandbox, always), else on the files.

/// Adds an item; with return keys, `result` receives it as SecItemCopyMatching would.
public func SecItemAdd(_ attributes: CFDictionary, _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus {
    SecItemSession.run { keychain throws(SecFailure) in
        let input = try ItemDictionary(attributes)
        let (item, data) = try input.newItem()
        let returns = try input.returns()
        try SecItemSession.call { () throws(KeychainError) in try keychain.add(item, data: data.withUnsafeBytes { SecureBytes(copying: $0) }) }
        guard let result else { return }
        result.pointee = nil
        guard returns.count > 0 else { return }
        var query = ItemQuery(itemClass: item.itemClass)
        query.accessGroup = item.accessGroup
        PersistentRef.pin(&query, to: item)
        let found = try SecItemSession.copy(keychain, query, returns)
        result.pointee = SecItemSession.value(of: found.first!, returns)
    }
}

/// Finds the items `query` matches; `result` receives what its return keys ask
/// for (one value, a dictionary when more than one is asked, an array of them
/// for kSecMatchLimitAll). Nothing found is errSecItemNotFound.
public func SecItemCopyMatching(_ query: CFDictionary, _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus {
    SecItemSession.run { keychain throws(SecFailure) in
        let input = try ItemDictionary(query)
        let q = try input.query()
        let returns = try input.returns()
        result?.pointee = nil
        var found = try SecItemSession.copy(keychain, q, returns)
        if let n = input.limitCount(), found.count > n { found.removeLast(found.count - n) }
        guard let result, returns.count > 0 else { return }
        if q.matchLimit == .all {
            result.pointee = NSArray(array: found.map { SecItemSession.value(of: $0, returns) })
        } else {
            result.pointee = SecItemSession.value(of: found[0], returns)
        }
    }
}

/// Changes every item `query` matches.
public func SecItemUpdate(_ query: CFDictionary, _ attributesToUpdate: CFDictionary) -> OSStatus {
    SecItemSession.run { keychain throws(SecFailure) in
        let input = try ItemDictionary(query)
        if try input.returns().count > 0 { throw SecFailure(errSecParam, "a query of SecItemUpdate has no return keys") }
        var q = try input.query()
        q.matchLimit = .all
        let changes = try ItemDictionary(attributesToUpdate).changes()
        try SecItemSession.call { () throws(KeychainError) in try keychain.update(q, with: changes) }
    }
}

/// Deletes every item `query` matches.
public func SecItemDelete(_ query: CFDictionary) -> OSStatus {
    SecItemSession.run { keychain throws(SecFailure) in
        let input = try ItemDictionary(query)
        if try input.returns().count > 0 { throw SecFailure(errSecParam, "a query of SecItemDelete has no return keys") }
        var q = try input.query()
        q.matchLimit = .all
        try SecItemSession.call { () throws(KeychainError) in try keychain.delete(q) }
    }
}

/// The process's app keychain, opened on the first call and kept (with its
/// prefsd connection); calls are one at a time.
enum SecItemSession {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var opened: AppKeychain?
    nonisolated(unsafe) private static var toldNotAnApp = false

    /// Runs `body` on the keychain; its failure becomes the status (and the
    /// reason SecCopyErrorMessageString adds).
    static func run(_ body: (AppKeychain) throws(SecFailure) -> Void) -> OSStatus {
        lock.lock(); defer { lock.unlock() }
        do throws(SecFailure) {
            try body(try keychain())
            return errSecSuccess
        } catch {
            LastFailure.record(error.status, error.reason)
            return error.status
        }
    }

    private static func keychain() throws(SecFailure) -> AppKeychain {
        if let opened { return opened }
        let configuration = Configuration(variable: { name in getenv(name).map { String(cString: $0) } })
        do throws(CurrentAppError) {
            let k = try CurrentApp.keychain(configuration: configuration)
            opened = k
            return k
        } catch {
            switch error {
            case .notAnApp:
                // As Apple's Security logs it: once, on the process's stderr.
                if !toldNotAnApp {
                    toldNotAnApp = true
                    FileHandle.standardError.write(Data("Security: errSecMissingEntitlement: \(error.description)\n".utf8))
                }
                throw SecFailure(errSecMissingEntitlement, error.description)
            case .keychain(let e):
                switch e {
                case .keychain(let k): throw SecFailure(k.status, k.description)
                default: throw SecFailure(errSecNotAvailable, e.description)
                }
            }
        }
    }

    /// A keychain call; its KeychainError as a status.
    static func call<T>(_ body: () throws(KeychainError) -> T) throws(SecFailure) -> T {
        do throws(KeychainError) { return try body() } catch {
            switch error {
            case .itemNotFound, .duplicateItem: throw SecFailure(error.status)
            case .missingEntitlement(let group): throw SecFailure(error.status, "the app does not hold the keychain access group '\(group)'")
            case .interactionNotAllowed(let why): throw SecFailure(error.status, why)
            default: throw SecFailure(error.status, error.description)
            }
        }
    }

    static func copy(_ keychain: AppKeychain, _ query: ItemQuery, _ returns: Returns) throws(SecFailure) -> [ItemResult] {
        var q = query
        q.returnData = returns.data
        // Attributes make the persistent ref; without return keys the
        // attributes still say whether something matched.
        q.returnAttributes = returns.attributes || returns.persistentRef || returns.ref || !returns.data
        return try call { () throws(KeychainError) in try keychain.copyMatching(q) }
    }

    /// What one found item gives for `returns`: one value, or a dictionary.
    static func value(of item: ItemResult, _ returns: Returns) -> CFTypeRef {
        let data = item.data.map { secret in secret.withUnsafeBytes { NSData(bytes: $0.baseAddress, length: $0.count) } }
        let ref = item.attributes.map { NSData(data: PersistentRef.make($0)) }
        if returns.count == 1 && !returns.attributes && !returns.ref {
            if returns.data { return data ?? NSData() }
            if returns.persistentRef { return ref ?? NSData() }
        }
        let out = NSMutableDictionary()
        if returns.attributes, let a = item.attributes { attributeDictionary(a, into: out) }
        if returns.data, let data { out[kSecValueData] = data }
        if returns.persistentRef, let ref { out[kSecValuePersistentRef] = ref }
        // Passwords have no reference (as on iOS): kSecReturnRef adds nothing.
        return out
    }

    static func attributeDictionary(_ a: ItemAttributes, into out: NSMutableDictionary) {
        func date(_ d: PlistDate) -> NSDate { NSDate(timeIntervalSinceReferenceDate: d.secondsSinceReferenceDate) }
        out[kSecClass] = (a.itemClass == .genericPassword ? kSecClassGenericPassword : kSecClassInternetPassword)
        if let g = a.accessGroup { out[kSecAttrAccessGroup] = g.rawValue as NSString }
        out[kSecAttrAccessible] = a.accessibility.rawValue as NSString
        out[kSecAttrSynchronizable] = NSNumber(value: a.synchronizable)
        out[kSecAttrAccount] = a.account as NSString
        out[kSecAttrCreationDate] = date(a.creationDate)
        out[kSecAttrModificationDate] = date(a.modificationDate)
        if let v = a.label { out[kSecAttrLabel] = v as NSString }
        if let v = a.description { out[kSecAttrDescription] = v as NSString }
        if let v = a.comment { out[kSecAttrComment] = v as NSString }
        switch a.itemClass {
        case .genericPassword:
            out[kSecAttrService] = a.service as NSString
            if let v = a.generic { out[kSecAttrGeneric] = NSData(data: Data(v)) }
        case .internetPassword:
            out[kSecAttrServer] = a.server as NSString
            out[kSecAttrProtocol] = a.protocol as NSString
            out[kSecAttrPort] = NSNumber(value: a.port)
            out[kSecAttrPath] = a.path as NSString
            out[kSecAttrAuthenticationType] = a.authenticationType as NSString
            out[kSecAttrSecurityDomain] = a.securityDomain as NSString
        }
    }
}

/// A persistent reference: the item's class, group and primary key, which a
/// later kSecValuePersistentRef in a query finds it by. Opaque to the app.
enum PersistentRef {
    static let magic = Array("AppHome-ref1\n".utf8)

    static func fields(_ a: ItemAttributes) -> [String] {
        var f = [a.itemClass.rawValue, a.accessGroup?.rawValue ?? "", a.synchronizable ? "1" : "0", a.account]
        switch a.itemClass {
        case .genericPassword: f += [a.service]
        case .internetPassword: f += [a.server, a.protocol, String(a.port), a.path, a.authenticationType, a.securityDomain]
        }
        return f
    }

    static func make(_ a: ItemAttributes) -> Data {
        var out = magic
        for f in fields(a) {
            out += Array(String(f.utf8.count).utf8) + [UInt8(ascii: ":")] + Array(f.utf8)
        }
        return Data(out)
    }

    /// Narrows `query` to the item `ref` names.
    static func apply(_ ref: Data, to query: inout ItemQuery) throws(SecFailure) {
        let bad = SecFailure(errSecParam, "kSecValuePersistentRef is not a persistent reference this keychain made")
        let bytes = Array(ref)
        guard bytes.starts(with: magic) else { throw bad }
        var fields: [String] = []
        var i = magic.count
        while i < bytes.count {
            guard let colon = bytes[i...].firstIndex(of: UInt8(ascii: ":")), colon - i <= 6,
                  let n = Int(String(decoding: bytes[i..<colon], as: UTF8.self)), n >= 0, colon + 1 + n <= bytes.count else { throw bad }
            fields.append(String(decoding: bytes[(colon + 1)..<(colon + 1 + n)], as: UTF8.self))
            i = colon + 1 + n
        }
        guard fields.count >= 5, let itemClass = ItemClass(rawValue: fields[0]), itemClass == query.itemClass,
              fields.count == (itemClass == .genericPassword ? 5 : 10) else { throw bad }
        if !fields[1].isEmpty {
            do { query.accessGroup = try AccessGroup(fields[1]) } catch { throw bad }
        }
        query.synchronizable = fields[2] == "1" ? .yes : .no
        query.account = fields[3]
        switch itemClass {
        case .genericPassword: query.service = fields[4]
        case .internetPassword:
            guard let port = Int(fields[6]) else { throw bad }
            query.server = fields[4]; query.protocol = fields[5]; query.port = port
            query.path = fields[7]; query.authenticationType = fields[8]; query.securityDomain = fields[9]
        }
    }

    /// Narrows `query` to the primary key of `a`.
    static func pin(_ query: inout ItemQuery, to a: ItemAttributes) {
        query.synchronizable = a.synchronizable ? .yes : .no
        query.account = a.account
        switch a.itemClass {
        case .genericPassword: query.service = a.service
        case .internetPassword:
            query.server = a.server; query.protocol = a.protocol; query.port = a.port
            query.path = a.path; query.authenticationType = a.authenticationType; query.securityDomain = a.securityDomain
        }
    }
}
