import AppHomeSystem
import Containers
import PropertyList

/// The app a keychain call acts for, and the access groups it may use.
///
/// The groups, in order: the bundle id (the default for adds), then the
/// `Info.plist` entries `keychain-access-groups` and
/// `com.apple.security.application-groups`. An app sees only items of
/// these groups.
public struct KeychainContext: Sendable, Equatable {
    public let bundleIdentifier: String
    /// Never empty; the first is the default for adds.
    public let accessGroups: [AccessGroup]

    /// - Throws: ``KeychainError/invalidAccessGroup(_:reason:)`` for a bad name.
    public init(bundleIdentifier: String, additionalGroups: [String] = []) throws(KeychainError) {
        var groups = [try AccessGroup(bundleIdentifier)]
        for g in additionalGroups {
            let group = try AccessGroup(g)
            if !groups.contains(group) { groups.append(group) }
        }
        self.bundleIdentifier = bundleIdentifier
        self.accessGroups = groups
    }

    /// The `Info.plist` keys that add access groups.
    public static let groupKeys = ["keychain-access-groups", "com.apple.security.application-groups"]

    /// The context of the installed app `entry`, from its bundle's `Info.plist`.
    ///
    /// - Throws: ``KeychainError/invalidParameter(_:)`` when the `Info.plist`
    ///   cannot be read or its group lists are not arrays of strings.
    public init(installed entry: RegistryEntry, layout: ContainerLayout) throws(KeychainError) {
        let home = layout.home(uuid: entry.homeUUID, bundleName: entry.bundleName)
        try self.init(infoPlistAt: home.app + "/Info.plist", bundleIdentifier: entry.bundleIdentifier.rawValue)
    }

    /// The context described by the `Info.plist` at `path`.
    public init(infoPlistAt path: String, bundleIdentifier: String) throws(KeychainError) {
        let bytes: [UInt8]?
        do { bytes = try FileSystem.readFileIfPresent(path) } catch { throw .system(error) }
        guard let bytes, let info = (try? PlistCodec.decode(bytes))?.dictionaryValue else {
            throw .invalidParameter("cannot read the app's Info.plist at \(path)")
        }
        var extra: [String] = []
        for key in Self.groupKeys {
            guard let value = info[key] else { continue }
            guard let items = value.arrayValue else { throw .invalidParameter("\(key) in \(path) is not an array") }
            for item in items {
                guard case .string(let s) = item else { throw .invalidParameter("\(key) in \(path) holds a \(item.typeName), not a string") }
                extra.append(s)
            }
        }
        try self.init(bundleIdentifier: bundleIdentifier, additionalGroups: extra)
    }
}
