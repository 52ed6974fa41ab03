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
/// AppHome has no device lock: "when unlocked" means the device root key is
/// loaded. What matters is the ThisDeviceOnly dimension: those items never
/// migrate to another device.
public enum Accessibility: String, Sendable, CaseIterable {
    case whenUnlocked = "ak"
    case afterFirstUnlock = "ck"
    case whenUnlockedThisDeviceOnly = "aku"
    case afterFirstUnlockThisDeviceOnly = "cku"

    /// Whether the item stays on the device that made it.
    public var isThisDeviceOnly: Bool { self == .whenUnlockedThisDeviceOnly || self == .afterFirstUnlockThisDeviceOnly }
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

    /// The primary-key fields in a fixed order, without the group.
    var primaryKeyFields: [String] {
        switch itemClass {
        case .genericPassword: return [account, service, synchronizable ? "1" : "0"]
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
