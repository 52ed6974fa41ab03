import PropertyList

/// The item classes AppHome keeps (`kSecClass…`).
public enum ItemClass: String, Sendable, CaseIterable {
    /// `kSecClassGenericPassword` (`genp`).
    case genericPassword = "genp"
    /// `kSecClassInternetPassword` (`inet`).
    case internetPassword = "inet"
}

/// When an item may be read, and whether it may leave this device
/// (`kSecAttrAccessible…`; raw values are Apple's `pdmn` codes).
///
/// Each class has its own class key (see `Schemas/keychain.md`), and the
/// class decides when that key is open: `whenUnlocked…` while the store
/// holding the device root key is unlocked, `afterFirstUnlock…` from the
/// first unlock since boot, `whenPasscodeSetThisDeviceOnly` like
/// `whenUnlockedThisDeviceOnly` but only when the device root key is
/// protected (never with a plain key file). ThisDeviceOnly items never
/// migrate to another device.
public enum Accessibility: String, Sendable, CaseIterable {
    case whenUnlocked = "ak"
    case afterFirstUnlock = "ck"
    case whenUnlockedThisDeviceOnly = "aku"
    case afterFirstUnlockThisDeviceOnly = "cku"
    case whenPasscodeSetThisDeviceOnly = "akpu"

    /// Whether the item stays on the device that made it.
    public var isThisDeviceOnly: Bool { self != .whenUnlocked && self != .afterFirstUnlock }

    /// Whether the class stays open after the first unlock since boot,
    /// while the store is locked again.
    public var opensAfterFirstUnlock: Bool { self == .afterFirstUnlock || self == .afterFirstUnlockThisDeviceOnly }

    /// Apple's name without the `kSecAttrAccessible` prefix, first letter
    /// lower case (`afterFirstUnlockThisDeviceOnly`).
    public var name: String {
        switch self {
        case .whenUnlocked: return "whenUnlocked"
        case .afterFirstUnlock: return "afterFirstUnlock"
        case .whenUnlockedThisDeviceOnly: return "whenUnlockedThisDeviceOnly"
        case .afterFirstUnlockThisDeviceOnly: return "afterFirstUnlockThisDeviceOnly"
        case .whenPasscodeSetThisDeviceOnly: return "whenPasscodeSetThisDeviceOnly"
        }
    }

    /// The class called `name` (as ``name`` gives it; the first letter's
    /// case and a `kSecAttrAccessible` prefix are ignored).
    public init?(name: String) {
        var n = Substring(name)
        if n.hasPrefix("kSecAttrAccessible") { n = n.dropFirst(18) }
        guard let first = n.first else { return nil }
        let normalized = first.lowercased() + n.dropFirst()
        guard let found = Self.allCases.first(where: { $0.name == normalized }) else { return nil }
        self = found
    }

    /// The class key's number under the device root key (`crypto_kdf` id).
    var classKeyID: UInt64 {
        switch self {
        case .whenUnlocked: return 1
        case .afterFirstUnlock: return 2
        case .whenUnlockedThisDeviceOnly: return 3
        case .afterFirstUnlockThisDeviceOnly: return 4
        case .whenPasscodeSetThisDeviceOnly: return 5
        }
    }
}

/// Everything about one item but its secret.
///
/// The primary key (what makes two items duplicates) is access group,
/// class, account, service (generic) or server, protocol, port, path,
/// authentication type and security domain (internet), and synchronizable.
/// Label, description, comment and generic data are not part of it.
public struct ItemAttributes: Equatable, Sendable {
    public var itemClass: ItemClass
    /// `nil` when adding: the app's default (first) group. Always set on
    /// what the keychain returns.
    public var accessGroup: AccessGroup?
    public var account: String = ""
    /// Generic passwords only.
    public var service: String = ""
    /// Internet passwords only.
    public var server: String = ""
    /// A four-character protocol code (`htps`, `http`, `ftp `), internet only.
    public var `protocol`: String = ""
    public var port: Int = 0
    public var path: String = ""
    /// A four-character authentication type code (`dflt`), internet only.
    public var authenticationType: String = ""
    public var securityDomain: String = ""
    public var synchronizable: Bool = false
    public var accessibility: Accessibility = .whenUnlocked
    public var label: String?
    public var description: String?
    public var comment: String?
    public var generic: [UInt8]?
    /// The item's Secret Service attributes (`xdg:schema` included), as a
    /// Secret Service client gave them; `nil` for an item made otherwise.
    /// A generic password with no service and no account is keyed by them
    /// (see ``isKeyedBySecretServiceAttributes``).
    public var secretServiceAttributes: [PlistKey: String]?
    /// The secret's content type as a Secret Service client gave it (`text/plain`).
    public var contentType: String?
    /// Set by the keychain.
    public var creationDate: PlistDate
    /// Set by the keychain.
    public var modificationDate: PlistDate

    public init(itemClass: ItemClass, accessGroup: AccessGroup? = nil, creationDate: PlistDate = PlistDate(secondsSinceReferenceDate: 0),
                modificationDate: PlistDate = PlistDate(secondsSinceReferenceDate: 0)) {
        self.itemClass = itemClass
        self.accessGroup = accessGroup
        self.creationDate = creationDate
        self.modificationDate = modificationDate
    }

    /// Whether the item's identity is its whole Secret Service attribute
    /// map: a generic password with neither service nor account that has one
    /// (what `secret-tool store --label=L key value` makes). Items with a
    /// service and account, and internet passwords, keep their usual key, so
    /// `security` and Secret Service clients find the same one item.
    public var isKeyedBySecretServiceAttributes: Bool {
        itemClass == .genericPassword && service.isEmpty && account.isEmpty && secretServiceAttributes != nil
    }

    /// The Secret Service attribute map in one canonical text: pairs sorted
    /// by key (code-point order), each part length-prefixed.
    static func canonical(_ map: [PlistKey: String]) -> String {
        var out = ""
        for (k, v) in map.sorted(by: { $0.key < $1.key }) {
            out += "\(k.string.utf8.count):\(k.string)\(v.utf8.count):\(v);"
        }
        return out
    }

    /// The primary-key fields in a fixed order, without the group.
    var primaryKeyFields: [String] {
        switch itemClass {
        case .genericPassword:
            if isKeyedBySecretServiceAttributes, let map = secretServiceAttributes {
                return [account, service, synchronizable ? "1" : "0", "ss", Self.canonical(map)]
            }
            return [account, service, synchronizable ? "1" : "0"]
        case .internetPassword:
            return [account, server, `protocol`, String(port), path, authenticationType, securityDomain, synchronizable ? "1" : "0"]
        }
    }
}

/// An item as a search returns it: attributes, secret or both, as asked.
public struct ItemResult: Sendable {
    public var attributes: ItemAttributes?
    public var data: SecureBytes?

    public init(attributes: ItemAttributes? = nil, data: SecureBytes? = nil) {
        self.attributes = attributes
        self.data = data
    }
}
