/// Which items a call is about (`SecItemCopyMatching`'s query): the class
/// plus attributes to match. An attribute left `nil` matches anything;
/// strings match exactly.
public struct ItemQuery: Sendable {
    /// How many results a search returns (`kSecMatchLimit`).
    public enum MatchLimit: Sendable { case one, all }
    /// Which synchronizable values match (`kSecAttrSynchronizable`): as on
    /// Apple's platforms, a query without it finds only non-synchronizable items.
    public enum Synchronizable: Sendable { case no, yes, any }

    public var itemClass: ItemClass
    /// `nil`: every group of the app.
    public var accessGroup: AccessGroup?
    public var account: String?
    public var service: String?
    public var server: String?
    public var `protocol`: String?
    public var port: Int?
    public var path: String?
    public var authenticationType: String?
    public var securityDomain: String?
    public var synchronizable: Synchronizable = .no
    public var label: String?
    public var description: String?
    public var comment: String?
    public var generic: [UInt8]?
    public var accessibility: Accessibility?
    public var matchLimit: MatchLimit = .one
    /// `kSecReturnData`.
    public var returnData = false
    /// `kSecReturnAttributes`.
    public var returnAttributes = false

    public init(itemClass: ItemClass) { self.itemClass = itemClass }

    /// Whether any return key is set (update and delete refuse them).
    var hasReturnKeys: Bool { returnData || returnAttributes }

    func matches(_ a: ItemAttributes) -> Bool {
        guard a.itemClass == itemClass else { return false }
        if let g = accessGroup, g != a.accessGroup { return false }
        switch synchronizable {
        case .no: if a.synchronizable { return false }
        case .yes: if !a.synchronizable { return false }
        case .any: break
        }
        func same<T: Equatable>(_ q: T?, _ v: T) -> Bool { q.map { $0 == v } ?? true }
        // Text by its exact bytes: canonically equivalent hosts or accounts are two names.
        func same(_ q: String?, _ v: String?) -> Bool {
            guard let q else { return true }
            guard let v else { return false }
            return q.utf8.elementsEqual(v.utf8)
        }
        func same(_ q: String?, _ v: String) -> Bool { same(q, Optional(v)) }
        return same(account, a.account) && same(service, a.service) && same(server, a.server)
            && same(`protocol`, a.protocol) && same(port, a.port) && same(path, a.path)
            && same(authenticationType, a.authenticationType) && same(securityDomain, a.securityDomain)
            && same(label, a.label) && same(description, a.description) && same(comment, a.comment)
            && (generic.map { $0 == a.generic } ?? true) && same(accessibility, a.accessibility)
    }

    /// The primary-key fields when the query pins every one of them (so a
    /// lookup can go by tag), else `nil`.
    var pinnedPrimaryKey: [String]? {
        let sync: String
        switch synchronizable { case .no: sync = "0"; case .yes: sync = "1"; case .any: return nil }
        switch itemClass {
        case .genericPassword:
            guard let account, let service else { return nil }
            return [account, service, sync]
        case .internetPassword:
            guard let account, let server, let p = `protocol`, let port, let path, let at = authenticationType, let sd = securityDomain else { return nil }
            return [account, server, p, String(port), path, at, sd, sync]
        }
    }
}

/// New values for ``Keychain/update(_:with:)`` (`SecItemUpdate`'s second
/// dictionary); `nil` leaves a value as it is.
public struct ItemChanges: Sendable {
    public var accessGroup: AccessGroup?
    public var account: String?
    public var service: String?
    public var server: String?
    public var `protocol`: String?
    public var port: Int?
    public var path: String?
    public var authenticationType: String?
    public var securityDomain: String?
    public var synchronizable: Bool?
    public var accessibility: Accessibility?
    /// `.some(nil)` removes the value.
    public var label: String??
    public var description: String??
    public var comment: String??
    public var generic: [UInt8]??
    /// `kSecValueData`.
    public var data: SecureBytes?

    public init() {}

    var isEmpty: Bool {
        accessGroup == nil && account == nil && service == nil && server == nil && `protocol` == nil && port == nil
            && path == nil && authenticationType == nil && securityDomain == nil && synchronizable == nil
            && accessibility == nil && label == nil && description == nil && comment == nil && generic == nil && data == nil
    }

    /// Sets the attributes these changes name on `a` (not ``data``).
    public func apply(to a: inout ItemAttributes) {
        if let v = accessGroup { a.accessGroup = v }
        if let v = account { a.account = v }
        if let v = service { a.service = v }
        if let v = server { a.server = v }
        if let v = `protocol` { a.protocol = v }
        if let v = port { a.port = v }
        if let v = path { a.path = v }
        if let v = authenticationType { a.authenticationType = v }
        if let v = securityDomain { a.securityDomain = v }
        if let v = synchronizable { a.synchronizable = v }
        if let v = accessibility { a.accessibility = v }
        if let v = label { a.label = v }
        if let v = description { a.description = v }
        if let v = comment { a.comment = v }
        if let v = generic { a.generic = v }
    }
}
