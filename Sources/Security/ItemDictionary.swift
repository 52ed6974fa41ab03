import Foundation
import Keychain
import PropertyList

/// A refusal: the status and, when AppHome knows more than Apple's message
/// says, why (SecCopyErrorMessageString shows it).
struct SecFailure: Error {
    let status: OSStatus
    let reason: String?
    init(_ status: OSStatus, _ reason: String? = nil) {
        self.status = status
        self.reason = reason
    }
}

/// A query or attribute dictionary of the SecItem API, read key by key: every
/// key is known (or refused), every value has the type Apple gives it.
struct ItemDictionary {
    static let accessibleValues: Set<String> = ["ak", "ck", "dk", "aku", "cku", "dku", "akpu"]

    private var entries: [String: Any] = [:]
    private var used: Set<String> = []

    init(_ dictionary: CFDictionary) throws(SecFailure) {
        for (key, value) in dictionary {
            guard let k = key as? String else { throw SecFailure(errSecParam, "a key of the dictionary is not a string") }
            entries[k] = value
        }
    }

    var keys: Dictionary<String, Any>.Keys { entries.keys }

    func has(_ key: CFString) -> Bool { entries[key as String] != nil }

    func string(_ key: CFString) throws(SecFailure) -> String? {
        guard let v = entries[key as String] else { return nil }
        guard let s = v as? String else { throw SecFailure(errSecParam, "\(key) must be a string") }
        return s
    }

    func bool(_ key: CFString) throws(SecFailure) -> Bool? {
        guard let v = entries[key as String] else { return nil }
        if let b = v as? Bool { return b }
        if let n = v as? NSNumber { return n.intValue != 0 }
        throw SecFailure(errSecParam, "\(key) must be a boolean")
    }

    func int(_ key: CFString) throws(SecFailure) -> Int? {
        guard let v = entries[key as String] else { return nil }
        if type(of: v) == Bool.self { throw SecFailure(errSecParam, "\(key) must be a number") }
        if let i = v as? Int { return i }
        if let n = v as? NSNumber { return n.intValue }
        if let s = v as? String, let i = Int(s) { return i }
        throw SecFailure(errSecParam, "\(key) must be a number")
    }

    func data(_ key: CFString) throws(SecFailure) -> Data? {
        guard let v = entries[key as String] else { return nil }
        if let d = v as? Data { return d }
        if let d = v as? NSData { return Data(d) }
        throw SecFailure(errSecParam, "\(key) must be data")
    }

    // MARK: The parts of a query

    /// The item class; keys, certificates and identities are not kept here.
    func itemClass() throws(SecFailure) -> ItemClass {
        guard let c = try string(kSecClass) else { throw SecFailure(errSecParam, "the dictionary has no kSecClass") }
        switch c {
        case String(kSecClassGenericPassword): return .genericPassword
        case String(kSecClassInternetPassword): return .internetPassword
        case String(kSecClassKey), String(kSecClassCertificate), String(kSecClassIdentity):
            throw SecFailure(errSecUnimplemented, "AppHome's keychain keeps generic and internet passwords; keys, certificates and identities (kSecClass \(c)) are not implemented")
        default: throw SecFailure(errSecNoSuchClass, "'\(c)' is not a kSecClass value")
        }
    }

    func accessGroup() throws(SecFailure) -> AccessGroup? {
        guard let g = try string(kSecAttrAccessGroup) else { return nil }
        do { return try AccessGroup(g) } catch { throw SecFailure(errSecMissingEntitlement, "the app does not hold the keychain access group '\(g)'") }
    }

    /// The protection class, from kSecAttrAccessible or kSecAttrAccessControl.
    func accessibility() throws(SecFailure) -> Accessibility? {
        var value = try string(kSecAttrAccessible)
        if let raw = entries[kSecAttrAccessControl as String] {
            guard let control = raw as? SecAccessControl else { throw SecFailure(errSecParam, "kSecAttrAccessControl must be a SecAccessControl") }
            let needs = control.flags.intersection(SecAccessControlCreateFlags.needsAPerson.union(.privateKeyUsage))
            if !needs.isEmpty {
                throw SecFailure(errSecUnimplemented, "kSecAttrAccessControl asks for \(needs.constraintNames.joined(separator: ", ")), which AppHome cannot check: there is no one to ask on this device")
            }
            if let value, value != control.protection {
                throw SecFailure(errSecParam, "kSecAttrAccessible and kSecAttrAccessControl name different protection classes")
            }
            value = control.protection
        }
        guard let value else { return nil }
        switch value {
        // Apple deprecated Always (iOS 12); its items open after the first unlock.
        case "dk": return .afterFirstUnlock
        case "dku": return .afterFirstUnlockThisDeviceOnly
        default:
            guard let a = Accessibility(rawValue: value) else { throw SecFailure(errSecParam, "'\(value)' is not a kSecAttrAccessible value") }
            return a
        }
    }

    /// kSecAttrProtocol and kSecAttrAuthenticationType take a string (the
    /// four-letter code) or, as on older macOS, a number of its bytes.
    func code(_ key: CFString) throws(SecFailure) -> String? {
        guard let v = entries[key as String] else { return nil }
        if let s = v as? String { return s }
        if type(of: v) != Bool.self, let n = v as? NSNumber {
            let u = UInt32(truncatingIfNeeded: n.intValue)
            return String(decoding: [UInt8(u >> 24), UInt8((u >> 16) & 0xff), UInt8((u >> 8) & 0xff), UInt8(u & 0xff)], as: UTF8.self)
        }
        throw SecFailure(errSecParam, "\(key) must be a string")
    }

    func port() throws(SecFailure) -> Int? {
        guard let p = try int(kSecAttrPort) else { return nil }
        guard (0...65535).contains(p) else { throw SecFailure(errSecParam, "kSecAttrPort \(p) is not a port number") }
        return p
    }

    /// Keys AppHome does not keep on a password item: refused, never dropped.
    func refuseUnkept() throws(SecFailure) {
        for key in [kSecAttrCreator, kSecAttrType, kSecAttrIsInvisible, kSecAttrIsNegative, kSecUseAuthenticationContext, kSecValueRef,
                    kSecMatchPolicy, kSecMatchItemList, kSecMatchSearchList, kSecMatchIssuers, kSecMatchEmailAddressIfPresent,
                    kSecMatchSubjectContains, kSecMatchCaseInsensitive, kSecMatchTrustedOnly, kSecMatchValidOnDate, kSecUseItemList]
        where has(key) {
            throw SecFailure(errSecUnimplemented, "\(key) is not implemented by AppHome's keychain (docs/apps.md lists the keys it keeps)")
        }
    }

    /// Every key is one this module reads.
    func refuseUnknown() throws(SecFailure) {
        for key in entries.keys where !Self.known.contains(key) {
            throw SecFailure(errSecParam, "'\(key)' is not a key of the SecItem API")
        }
    }

    static let known: Set<String> = {
        let all: [CFString] = [kSecClass, kSecAttrAccessible, kSecAttrAccessControl, kSecAttrAccessGroup, kSecAttrSynchronizable,
                               kSecAttrCreationDate, kSecAttrModificationDate, kSecAttrDescription, kSecAttrComment, kSecAttrCreator,
                               kSecAttrType, kSecAttrLabel, kSecAttrIsInvisible, kSecAttrIsNegative, kSecAttrAccount, kSecAttrService,
                               kSecAttrGeneric, kSecAttrSecurityDomain, kSecAttrServer, kSecAttrProtocol, kSecAttrAuthenticationType,
                               kSecAttrPort, kSecAttrPath, kSecMatchPolicy, kSecMatchItemList, kSecMatchSearchList, kSecMatchIssuers,
                               kSecMatchEmailAddressIfPresent, kSecMatchSubjectContains, kSecMatchCaseInsensitive, kSecMatchTrustedOnly,
                               kSecMatchValidOnDate, kSecMatchLimit, kSecReturnData, kSecReturnAttributes, kSecReturnRef,
                               kSecReturnPersistentRef, kSecValueData, kSecValueRef, kSecValuePersistentRef, kSecUseItemList,
                               kSecUseOperationPrompt, kSecUseNoAuthenticationUI, kSecUseAuthenticationUI, kSecUseAuthenticationContext,
                               kSecUseDataProtectionKeychain]
        return Set(all.map { $0 as String })
    }()

    /// The keys every call accepts without effect here: AppHome shows no UI,
    /// and every item is in the data-protection keychain.
    func checkUseKeys() throws(SecFailure) {
        _ = try string(kSecUseOperationPrompt)
        _ = try bool(kSecUseNoAuthenticationUI)
        _ = try bool(kSecUseDataProtectionKeychain)
        if let ui = try string(kSecUseAuthenticationUI),
           ![kSecUseAuthenticationUIAllow as String, kSecUseAuthenticationUIFail as String, kSecUseAuthenticationUISkip as String].contains(ui) {
            throw SecFailure(errSecParam, "'\(ui)' is not a kSecUseAuthenticationUI value")
        }
    }

    /// The search part of a query (attributes to match, synchronizable,
    /// persistent ref), for copy, update and delete.
    func query() throws(SecFailure) -> ItemQuery {
        try refuseUnknown()
        try refuseUnkept()
        try checkUseKeys()
        var q = ItemQuery(itemClass: try itemClass())
        if let ref = try data(kSecValuePersistentRef) {
            try PersistentRef.apply(ref, to: &q)
        }
        if let g = try accessGroup() { q.accessGroup = g }
        if let v = try string(kSecAttrAccount) { q.account = v }
        if let v = try string(kSecAttrService) { q.service = v }
        if let v = try string(kSecAttrServer) { q.server = v }
        if let v = try code(kSecAttrProtocol) { q.protocol = v }
        if let v = try port() { q.port = v }
        if let v = try string(kSecAttrPath) { q.path = v }
        if let v = try code(kSecAttrAuthenticationType) { q.authenticationType = v }
        if let v = try string(kSecAttrSecurityDomain) { q.securityDomain = v }
        if let v = try string(kSecAttrLabel) { q.label = v }
        if let v = try string(kSecAttrDescription) { q.description = v }
        if let v = try string(kSecAttrComment) { q.comment = v }
        if let v = try data(kSecAttrGeneric) { q.generic = Array(v) }
        if let v = try accessibility() { q.accessibility = v }
        if has(kSecAttrCreationDate) || has(kSecAttrModificationDate) {
            throw SecFailure(errSecUnimplemented, "matching by kSecAttrCreationDate or kSecAttrModificationDate is not implemented")
        }
        if let v = entries[kSecAttrSynchronizable as String] {
            if let s = v as? String {
                guard s == kSecAttrSynchronizableAny as String else { throw SecFailure(errSecParam, "'\(s)' is not a kSecAttrSynchronizable value") }
                q.synchronizable = .any
            } else {
                q.synchronizable = try bool(kSecAttrSynchronizable)! ? .yes : .no
            }
        }
        switch entries[kSecMatchLimit as String] {
        case nil: break
        case let s as String where s == kSecMatchLimitOne as String: q.matchLimit = .one
        case let s as String where s == kSecMatchLimitAll as String: q.matchLimit = .all
        default:
            guard let n = try int(kSecMatchLimit), n >= 1 else { throw SecFailure(errSecParam, "kSecMatchLimit must be kSecMatchLimitOne, kSecMatchLimitAll or a positive number") }
            q.matchLimit = n == 1 ? .one : .all
        }
        return q
    }

    /// How many items a copy returns at most (`kSecMatchLimit` as a number).
    func limitCount() -> Int? {
        guard let v = entries[kSecMatchLimit as String], type(of: v) != String.self, !(v is NSString), let n = try? int(kSecMatchLimit), n > 1 else { return nil }
        return n
    }

    /// What a copy (or an add) returns.
    func returns() throws(SecFailure) -> Returns {
        Returns(data: try bool(kSecReturnData) ?? false, attributes: try bool(kSecReturnAttributes) ?? false,
                ref: try bool(kSecReturnRef) ?? false, persistentRef: try bool(kSecReturnPersistentRef) ?? false)
    }

    /// The attributes of a new item, for SecItemAdd.
    func newItem() throws(SecFailure) -> (ItemAttributes, Data) {
        try refuseUnknown()
        try refuseUnkept()
        try checkUseKeys()
        if has(kSecValuePersistentRef) { throw SecFailure(errSecParam, "kSecValuePersistentRef names an item that exists; SecItemAdd makes one") }
        if has(kSecMatchLimit) { throw SecFailure(errSecParam, "kSecMatchLimit is a search key; SecItemAdd does not search") }
        if has(kSecAttrCreationDate) || has(kSecAttrModificationDate) {
            throw SecFailure(errSecReadOnlyAttr, "kSecAttrCreationDate and kSecAttrModificationDate are set by the keychain")
        }
        var a = ItemAttributes(itemClass: try itemClass())
        try attributeChanges(synchronizableAny: "kSecAttrSynchronizableAny is for queries; a new item is synchronizable or not").apply(to: &a)
        return (a, try data(kSecValueData) ?? Data())
    }

    /// The changes of SecItemUpdate's attributesToUpdate.
    func changes() throws(SecFailure) -> ItemChanges {
        try refuseUnknown()
        try refuseUnkept()
        for key in [kSecClass, kSecMatchLimit, kSecReturnData, kSecReturnAttributes, kSecReturnRef, kSecReturnPersistentRef, kSecValuePersistentRef] where has(key) {
            throw SecFailure(errSecParam, "\(key) cannot be in the attributes to update")
        }
        if has(kSecAttrCreationDate) || has(kSecAttrModificationDate) {
            throw SecFailure(errSecReadOnlyAttr, "kSecAttrCreationDate and kSecAttrModificationDate are set by the keychain")
        }
        var c = try attributeChanges(synchronizableAny: "kSecAttrSynchronizableAny is for queries")
        if let d = try data(kSecValueData) { c.data = d.withUnsafeBytes { SecureBytes(copying: $0) } }
        return c
    }

    /// The attributes the dictionary sets, read alike for a new item (applied
    /// to a fresh one) and for SecItemUpdate: each `nil` when not named.
    ///
    /// - Parameter refusal: the message refusing `kSecAttrSynchronizableAny`,
    ///   which only a query takes.
    private func attributeChanges(synchronizableAny refusal: String) throws(SecFailure) -> ItemChanges {
        var c = ItemChanges()
        c.accessGroup = try accessGroup()
        c.account = try string(kSecAttrAccount)
        c.service = try string(kSecAttrService)
        c.server = try string(kSecAttrServer)
        c.protocol = try code(kSecAttrProtocol)
        c.port = try port()
        c.path = try string(kSecAttrPath)
        c.authenticationType = try code(kSecAttrAuthenticationType)
        c.securityDomain = try string(kSecAttrSecurityDomain)
        if has(kSecAttrLabel) { c.label = .some(try string(kSecAttrLabel)) }
        if has(kSecAttrDescription) { c.description = .some(try string(kSecAttrDescription)) }
        if has(kSecAttrComment) { c.comment = .some(try string(kSecAttrComment)) }
        if has(kSecAttrGeneric) { c.generic = .some(try data(kSecAttrGeneric).map { Array($0) }) }
        c.accessibility = try accessibility()
        if let v = entries[kSecAttrSynchronizable as String] {
            if v is String { throw SecFailure(errSecParam, refusal) }
            c.synchronizable = try bool(kSecAttrSynchronizable)!
        }
        return c
    }
}

/// The return keys of a copy.
struct Returns {
    var data: Bool
    var attributes: Bool
    var ref: Bool
    var persistentRef: Bool

    var count: Int { [data, attributes, ref, persistentRef].filter { $0 }.count }
}
