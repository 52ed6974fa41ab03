import PropertyList

/// How a Secret Service item (an attribute map, a label, a content type) is
/// a login-keychain item, and how a keychain item looks to Secret Service
/// clients. `docs/secret-service.md` has the table.
///
/// - `service` and `username` (python `keyring`): a generic password with
///   that service and account, the item `security find-generic-password -s
///   SERVICE -a USERNAME` finds;
/// - the network schemas (`org.gnome.keyring.NetworkPassword`, git's
///   `org.git.Password`), or `server` with `protocol` and no schema: an
///   internet password (`server`, `user` → account, `protocol` → its
///   four-character code, `port`, `object` or `path`, `domain`);
/// - anything else: a generic password with neither service nor account,
///   keyed by its whole attribute map.
///
/// Every item made through the Secret Service keeps the map it was given,
/// which is what clients see and search; an item made otherwise shows the
/// map derived from its fields.
public enum SecretServiceMapping {
    /// The schemas whose items are internet passwords.
    public static let networkSchemas: Set<String> = ["org.gnome.keyring.NetworkPassword", "org.git.Password"]

    /// A new keychain item for a client's attribute map.
    public static func itemAttributes(for map: [PlistKey: String], label: String, contentType: String?) -> ItemAttributes {
        let schema = map["xdg:schema"]
        var a: ItemAttributes
        if let server = map["server"], schema.map(networkSchemas.contains) ?? (map["protocol"] != nil) {
            a = ItemAttributes(itemClass: .internetPassword)
            a.server = server
            a.account = map["user"] ?? ""
            a.protocol = map["protocol"].map(protocolCode) ?? ""
            if let p = map["port"], let n = Int(p), (0...65535).contains(n) { a.port = n }
            a.path = map["object"] ?? map["path"] ?? ""
            a.securityDomain = map["domain"] ?? ""
        } else if let service = map["service"], let user = map["username"] {
            a = ItemAttributes(itemClass: .genericPassword)
            a.service = service
            a.account = user
        } else {
            a = ItemAttributes(itemClass: .genericPassword)
        }
        a.label = label
        a.contentType = contentType
        a.secretServiceAttributes = map
        a.accessibility = .whenUnlocked
        return a
    }

    /// `a` with a new attribute map: the map is replaced, and the fields it
    /// maps to follow it when it maps to the same class.
    public static func changing(_ a: ItemAttributes, to map: [PlistKey: String]) -> ItemAttributes {
        let derived = itemAttributes(for: map, label: a.label ?? "", contentType: a.contentType)
        var out = a
        if derived.itemClass == a.itemClass {
            out.account = derived.account; out.service = derived.service; out.server = derived.server
            out.protocol = derived.protocol; out.port = derived.port; out.path = derived.path
            out.securityDomain = derived.securityDomain
        }
        out.secretServiceAttributes = map
        return out
    }

    /// The attribute map clients see: the one stored, else one derived from
    /// the item's fields.
    public static func attributeMap(of a: ItemAttributes) -> [PlistKey: String] {
        if let m = a.secretServiceAttributes { return m }
        var m: [PlistKey: String] = [:]
        switch a.itemClass {
        case .genericPassword:
            m["service"] = a.service
            m["username"] = a.account
        case .internetPassword:
            m["server"] = a.server
            m["protocol"] = protocolName(a.protocol)
            if !a.account.isEmpty { m["user"] = a.account }
            if a.port != 0 { m["port"] = String(a.port) }
            if !a.path.isEmpty { m["object"] = a.path }
            if !a.securityDomain.isEmpty { m["domain"] = a.securityDomain }
        }
        return m
    }

    /// Whether every pair of `query` is in the item's attribute map. Names
    /// and values compare as bytes, as gnome-keyring compares them (Swift's
    /// `==` on `String` would take NFC and NFD "café" for one value).
    public static func matches(_ a: ItemAttributes, _ query: [PlistKey: String]) -> Bool {
        if query.isEmpty { return true }
        let m = attributeMap(of: a)
        for (k, v) in query where !sameBytes(m[k], v) {
            // An item made without the Secret Service has no schema of its
            // own: it answers to its class's (git's helper searches with one).
            if k == "xdg:schema", a.secretServiceAttributes == nil, impliedSchemas(of: a).contains(where: { sameBytes($0, v) }) { continue }
            return false
        }
        return true
    }

    /// Whether two attribute maps hold the same names and values, byte for byte.
    public static func sameMap(_ a: [PlistKey: String]?, _ b: [PlistKey: String]) -> Bool {
        guard let a, a.count == b.count else { return false }
        return b.allSatisfy { sameBytes(a[$0.key], $0.value) }
    }

    /// Whether `a` is `b` byte for byte.
    static func sameBytes(_ a: String?, _ b: String) -> Bool {
        guard let a else { return false }
        return a.utf8.elementsEqual(b.utf8)
    }

    /// The schemas an item made without the Secret Service answers to.
    public static func impliedSchemas(of a: ItemAttributes) -> Set<String> {
        a.itemClass == .internetPassword ? networkSchemas : ["org.freedesktop.Secret.Generic"]
    }

    /// A protocol name as a four-character code: `https` is `htps` (as
    /// `security -r htps`), a name of four characters or fewer is padded
    /// with spaces (`ssh` is `ssh `), a longer one kept.
    public static func protocolCode(_ name: String) -> String {
        if name == "https" { return "htps" }
        return name + String(repeating: " ", count: max(0, 4 - name.utf8.count))
    }

    /// The inverse of ``protocolCode(_:)``.
    public static func protocolName(_ code: String) -> String {
        if code == "htps" { return "https" }
        var s = Substring(code)
        while s.last == " " { s = s.dropLast() }
        return String(s)
    }
}
