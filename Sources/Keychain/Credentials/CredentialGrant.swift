import PropertyList

/// A systemd unit name as a credential grant and the service manager's
/// peer address carry it: 1 to 255 bytes of `A-Z a-z 0-9 : _ . - @ \`, a
/// dot somewhere (`foo.service`), not starting with a dot, no `..`
/// (systemd's own rule, unit_name_is_valid(), is at least this strict).
public struct SystemdUnitName: Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String

    /// - Throws: ``KeychainError/invalidParameter(_:)`` naming what is wrong.
    public init(_ text: String) throws(KeychainError) {
        let bytes = Array(text.utf8)
        guard !bytes.isEmpty, bytes.count <= 255 else {
            throw .invalidParameter("a unit name has 1 to 255 characters, not \(bytes.count)")
        }
        let allowed = bytes.allSatisfy { b in
            (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || b == 0x3A || b == 0x5F
                || b == 0x2E || b == 0x2D || b == 0x40 || b == 0x5C
        }
        guard allowed else { throw .invalidParameter("the unit name '\(Self.printable(text))' has a character a unit name cannot have") }
        guard bytes.first != 0x2E, !text.contains(".."), bytes.contains(0x2E) else {
            throw .invalidParameter("'\(Self.printable(text))' is not a unit name (such as foo.service)")
        }
        rawValue = text
    }

    public var description: String { rawValue }

    /// `text` with control characters escaped, at most 80 of its characters:
    /// what a peer sent is logged, never echoed raw.
    static func printable(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars.prefix(80) {
            out += scalar.value < 0x20 || scalar.value == 0x7F ? "\\x" + String(scalar.value, radix: 16) : String(scalar)
        }
        return text.unicodeScalars.count > 80 ? out + "…" : out
    }
}

/// A credential's id as `LoadCredential=ID:…` names it: 1 to 255 bytes of
/// printable ASCII, no `/`, not `.` or `..` (it becomes a file name in
/// `$CREDENTIALS_DIRECTORY`).
public struct CredentialID: Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String

    /// - Throws: ``KeychainError/invalidParameter(_:)`` naming what is wrong.
    public init(_ text: String) throws(KeychainError) {
        let bytes = Array(text.utf8)
        guard !bytes.isEmpty, bytes.count <= 255 else {
            throw .invalidParameter("a credential id has 1 to 255 characters, not \(bytes.count)")
        }
        guard bytes.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != 0x2F }), text != ".", text != ".." else {
            throw .invalidParameter("'\(SystemdUnitName.printable(text))' is not a credential id (printable ASCII, no spaces or '/', not '.' or '..')")
        }
        rawValue = text
    }

    public var description: String { rawValue }
}

/// A grant: the unit `unit` gets, under the credential id `id`, either a
/// secret kept with the grant or the secret of an existing generic password
/// of the login keychain.
///
/// Grants are items of the login keychain (the `login` access group, which
/// no app can hold), so they are encrypted, bound to this device and locked
/// with it: a generic password whose service is `apphome-credential:<unit>`
/// and account the id. Its data is the secret (``Source/secret``), or empty
/// with the item's service and account in its encrypted generic attribute
/// (``Source/item(service:account:)``). Schemas/credential-grants.md has
/// the layout.
public struct CredentialGrant: Equatable, Sendable {
    /// Where the credential's bytes come from.
    public enum Source: Equatable, Sendable {
        /// Kept with the grant (the grant item's data).
        case secret
        /// The generic password with this service and account in the login keychain.
        case item(service: String, account: String)
    }

    public var unit: SystemdUnitName
    public var id: CredentialID
    public var source: Source
    /// The class of the grant item: when the credential can be served.
    public var accessibility: Accessibility

    /// The largest credential systemd takes (`CREDENTIAL_SIZE_MAX`, 1 MiB).
    public static let maximumSize = 1 << 20
    /// The service prefix of grant items.
    public static let servicePrefix = "apphome-credential:"
    static let formatVersion = 1

    public init(unit: SystemdUnitName, id: CredentialID, source: Source, accessibility: Accessibility = .afterFirstUnlock) {
        self.unit = unit; self.id = id; self.source = source; self.accessibility = accessibility
    }

    /// The grant item's attributes (to add it).
    public var attributes: ItemAttributes {
        var a = ItemAttributes(itemClass: .genericPassword, accessGroup: KeychainContext.loginGroup)
        a.service = Self.servicePrefix + unit.rawValue
        a.account = id.rawValue
        a.label = "systemd credential \(id.rawValue) for \(unit.rawValue)"
        a.description = "systemd credential"
        a.accessibility = accessibility
        a.generic = Self.encodeSource(source)
        return a
    }

    /// The query for this unit's grant `id` (or, with `id` nil, all its grants;
    /// with `unit` nil too, every grant: filter with ``init(attributes:)``).
    public static func query(unit: SystemdUnitName?, id: CredentialID?) -> ItemQuery {
        var q = ItemQuery(itemClass: .genericPassword)
        q.accessGroup = KeychainContext.loginGroup
        q.service = unit.map { servicePrefix + $0.rawValue }
        q.account = id?.rawValue
        q.description = "systemd credential"
        return q
    }

    /// The grant an item's attributes describe, or `nil` when the item is
    /// not a grant.
    public init?(attributes a: ItemAttributes) {
        guard a.itemClass == .genericPassword, a.accessGroup == KeychainContext.loginGroup,
              a.service.hasPrefix(Self.servicePrefix), a.description == "systemd credential",
              let unit = try? SystemdUnitName(String(a.service.dropFirst(Self.servicePrefix.count))),
              let id = try? CredentialID(a.account), let generic = a.generic, let source = Self.decodeSource(generic) else { return nil }
        self.init(unit: unit, id: id, source: source, accessibility: a.accessibility)
    }

    static func encodeSource(_ source: Source) -> [UInt8] {
        var d: [PlistKey: PlistValue] = ["Version": .integer(Int128(formatVersion))]
        switch source {
        case .secret: d["Source"] = .string("secret")
        case .item(let service, let account):
            d["Source"] = .string("item"); d["Service"] = .string(service); d["Account"] = .string(account)
        }
        // Strings and an integer always encode.
        return (try? PlistCodec.encode(.dictionary(d), format: .binary)) ?? []
    }

    static func decodeSource(_ bytes: [UInt8]) -> Source? {
        guard let d = (try? PlistCodec.decode(bytes))?.dictionaryValue, d["Version"] == .integer(Int128(formatVersion)) else { return nil }
        switch d["Source"] {
        case .string("secret")?: return .secret
        case .string("item")?:
            guard case .string(let s)? = d["Service"], case .string(let a)? = d["Account"] else { return nil }
            return .item(service: s, account: a)
        default: return nil
        }
    }
}
