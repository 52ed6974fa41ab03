import PropertyList

/// The property-list form of queries, attributes, changes and results, as
/// prefsd's keychain operations carry them (`Schemas/prefsd-protocol.md`).
///
/// Absent keys mean "not given"; a key with the wrong type is refused with
/// ``KeychainError/invalidParameter(_:)``, never ignored.
public enum KeychainWire {
    static func string(_ d: [PlistKey: PlistValue], _ key: String) throws(KeychainError) -> String? {
        guard let v = d[key] else { return nil }
        guard case .string(let s) = v else { throw .invalidParameter("\(key) must be a string") }
        return s
    }

    static func integer(_ d: [PlistKey: PlistValue], _ key: String) throws(KeychainError) -> Int? {
        guard let v = d[key] else { return nil }
        guard case .integer(let n) = v, let i = Int(exactly: n) else { throw .invalidParameter("\(key) must be an integer") }
        return i
    }

    static func bool(_ d: [PlistKey: PlistValue], _ key: String) throws(KeychainError) -> Bool? {
        guard let v = d[key] else { return nil }
        guard case .bool(let b) = v else { throw .invalidParameter("\(key) must be a boolean") }
        return b
    }

    static func data(_ d: [PlistKey: PlistValue], _ key: String) throws(KeychainError) -> [UInt8]? {
        guard let v = d[key] else { return nil }
        guard case .data(let b) = v else { throw .invalidParameter("\(key) must be data") }
        return b
    }

    static func itemClass(_ d: [PlistKey: PlistValue]) throws(KeychainError) -> ItemClass {
        guard let raw = try string(d, "class"), let c = ItemClass(rawValue: raw) else { throw .invalidParameter("class must be genp or inet") }
        return c
    }

    static func group(_ d: [PlistKey: PlistValue]) throws(KeychainError) -> AccessGroup? {
        try string(d, "accessGroup").map { (g) throws(KeychainError) in try AccessGroup(g) }
    }

    static func accessibility(_ d: [PlistKey: PlistValue]) throws(KeychainError) -> Accessibility? {
        guard let raw = try string(d, "accessibility") else { return nil }
        guard let a = Accessibility(rawValue: raw) else { throw .invalidParameter("unknown accessibility '\(raw)'") }
        return a
    }

    /// A removable text attribute: a string sets it, `false` removes it.
    static func removable(_ d: [PlistKey: PlistValue], _ key: String) throws(KeychainError) -> String?? {
        switch d[key] {
        case nil: return nil
        case .bool(false)?: return .some(nil)
        case .string(let s)?: return .some(s)
        default: throw .invalidParameter("\(key) must be a string, or false to remove it")
        }
    }

    // MARK: Queries

    public static func encode(_ q: ItemQuery) -> [PlistKey: PlistValue] {
        var d: [PlistKey: PlistValue] = ["class": .string(q.itemClass.rawValue)]
        if let g = q.accessGroup { d["accessGroup"] = .string(g.rawValue) }
        for (k, v) in [("account", q.account), ("service", q.service), ("server", q.server), ("protocol", q.protocol),
                       ("path", q.path), ("authenticationType", q.authenticationType), ("securityDomain", q.securityDomain),
                       ("label", q.label), ("description", q.description), ("comment", q.comment)] {
            if let v { d[k] = .string(v) }
        }
        if let p = q.port { d["port"] = .integer(Int128(p)) }
        if let g = q.generic { d["generic"] = .data(g) }
        if let a = q.accessibility { d["accessibility"] = .string(a.rawValue) }
        switch q.synchronizable { case .no: break; case .yes: d["synchronizable"] = .string("yes"); case .any: d["synchronizable"] = .string("any") }
        if q.matchLimit == .all { d["matchLimit"] = .string("all") }
        if q.returnData { d["returnData"] = .bool(true) }
        if q.returnAttributes { d["returnAttributes"] = .bool(true) }
        return d
    }

    public static func query(_ d: [PlistKey: PlistValue]) throws(KeychainError) -> ItemQuery {
        var q = ItemQuery(itemClass: try itemClass(d))
        q.accessGroup = try group(d)
        q.account = try string(d, "account"); q.service = try string(d, "service"); q.server = try string(d, "server")
        q.protocol = try string(d, "protocol"); q.path = try string(d, "path")
        q.authenticationType = try string(d, "authenticationType"); q.securityDomain = try string(d, "securityDomain")
        q.label = try string(d, "label"); q.description = try string(d, "description"); q.comment = try string(d, "comment")
        q.port = try integer(d, "port")
        q.generic = try data(d, "generic")
        q.accessibility = try accessibility(d)
        switch try string(d, "synchronizable") {
        case nil, "no"?: q.synchronizable = .no
        case "yes"?: q.synchronizable = .yes
        case "any"?: q.synchronizable = .any
        case let other?: throw .invalidParameter("synchronizable must be no, yes or any, not '\(other)'")
        }
        switch try string(d, "matchLimit") {
        case nil, "one"?: q.matchLimit = .one
        case "all"?: q.matchLimit = .all
        case let other?: throw .invalidParameter("matchLimit must be one or all, not '\(other)'")
        }
        q.returnData = try bool(d, "returnData") ?? false
        q.returnAttributes = try bool(d, "returnAttributes") ?? false
        return q
    }

    // MARK: Attributes

    public static func encode(_ a: ItemAttributes) -> [PlistKey: PlistValue] {
        var d: [PlistKey: PlistValue] = [
            "class": .string(a.itemClass.rawValue), "account": .string(a.account), "service": .string(a.service),
            "server": .string(a.server), "protocol": .string(a.protocol), "port": .integer(Int128(a.port)), "path": .string(a.path),
            "authenticationType": .string(a.authenticationType), "securityDomain": .string(a.securityDomain),
            "synchronizable": .bool(a.synchronizable), "accessibility": .string(a.accessibility.rawValue),
            "creationDate": .date(a.creationDate), "modificationDate": .date(a.modificationDate),
        ]
        if let g = a.accessGroup { d["accessGroup"] = .string(g.rawValue) }
        if let v = a.label { d["label"] = .string(v) }
        if let v = a.description { d["description"] = .string(v) }
        if let v = a.comment { d["comment"] = .string(v) }
        if let v = a.generic { d["generic"] = .data(v) }
        if let m = a.secretServiceAttributes { d["secretServiceAttributes"] = .dictionary(m.mapValues { .string($0) }) }
        if let v = a.contentType { d["contentType"] = .string(v) }
        return d
    }

    public static func attributes(_ d: [PlistKey: PlistValue]) throws(KeychainError) -> ItemAttributes {
        var a = ItemAttributes(itemClass: try itemClass(d))
        a.accessGroup = try group(d)
        a.account = try string(d, "account") ?? ""; a.service = try string(d, "service") ?? ""
        a.server = try string(d, "server") ?? ""; a.protocol = try string(d, "protocol") ?? ""
        a.port = try integer(d, "port") ?? 0; a.path = try string(d, "path") ?? ""
        a.authenticationType = try string(d, "authenticationType") ?? ""; a.securityDomain = try string(d, "securityDomain") ?? ""
        a.synchronizable = try bool(d, "synchronizable") ?? false
        a.accessibility = try accessibility(d) ?? .whenUnlocked
        a.label = try string(d, "label"); a.description = try string(d, "description"); a.comment = try string(d, "comment")
        a.generic = try data(d, "generic")
        if case .date(let t)? = d["creationDate"] { a.creationDate = t }
        if case .date(let t)? = d["modificationDate"] { a.modificationDate = t }
        if let v = d["secretServiceAttributes"] {
            guard case .dictionary(let m) = v else { throw .invalidParameter("secretServiceAttributes must be a dictionary") }
            var map: [PlistKey: String] = [:]
            for (k, e) in m {
                guard case .string(let s) = e else { throw .invalidParameter("secretServiceAttributes values must be strings") }
                map[k] = s
            }
            a.secretServiceAttributes = map
        }
        a.contentType = try string(d, "contentType")
        return a
    }

    // MARK: Changes

    /// The changes without the secret (which travels as its own field).
    public static func encode(_ c: ItemChanges) -> [PlistKey: PlistValue] {
        var d: [PlistKey: PlistValue] = [:]
        if let g = c.accessGroup { d["accessGroup"] = .string(g.rawValue) }
        for (k, v) in [("account", c.account), ("service", c.service), ("server", c.server), ("protocol", c.protocol),
                       ("path", c.path), ("authenticationType", c.authenticationType), ("securityDomain", c.securityDomain)] {
            if let v { d[k] = .string(v) }
        }
        if let p = c.port { d["port"] = .integer(Int128(p)) }
        if let s = c.synchronizable { d["synchronizable"] = .bool(s) }
        if let a = c.accessibility { d["accessibility"] = .string(a.rawValue) }
        for (k, v) in [("label", c.label), ("description", c.description), ("comment", c.comment)] {
            if let v { d[k] = v.map { .string($0) } ?? .bool(false) }
        }
        if let g = c.generic { d["generic"] = g.map { .data($0) } ?? .bool(false) }
        return d
    }

    public static func changes(_ d: [PlistKey: PlistValue]) throws(KeychainError) -> ItemChanges {
        var c = ItemChanges()
        c.accessGroup = try group(d)
        c.account = try string(d, "account"); c.service = try string(d, "service"); c.server = try string(d, "server")
        c.protocol = try string(d, "protocol"); c.path = try string(d, "path")
        c.authenticationType = try string(d, "authenticationType"); c.securityDomain = try string(d, "securityDomain")
        c.port = try integer(d, "port")
        c.synchronizable = try bool(d, "synchronizable")
        c.accessibility = try accessibility(d)
        c.label = try removable(d, "label"); c.description = try removable(d, "description"); c.comment = try removable(d, "comment")
        switch d["generic"] {
        case nil: break
        case .bool(false)?: c.generic = .some(nil)
        case .data(let g)?: c.generic = .some(g)
        default: throw .invalidParameter("generic must be data, or false to remove it")
        }
        return c
    }

    // MARK: Results

    public static func encode(_ r: ItemResult) -> [PlistKey: PlistValue] {
        var d: [PlistKey: PlistValue] = [:]
        if let a = r.attributes { d["attributes"] = .dictionary(encode(a)) }
        if let s = r.data { d["data"] = .data(s.exposedCopy()) }
        return d
    }

    public static func result(_ d: [PlistKey: PlistValue]) throws(KeychainError) -> ItemResult {
        var r = ItemResult()
        if let v = d["attributes"] {
            guard case .dictionary(let a) = v else { throw .invalidParameter("attributes must be a dictionary") }
            r.attributes = try attributes(a)
        }
        // The bytes also live in the reply's plist, which the caller owns.
        if let bytes = try data(d, "data") { r.data = SecureBytes(bytes) }
        return r
    }
}
