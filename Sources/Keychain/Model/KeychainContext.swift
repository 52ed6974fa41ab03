import AppHomeSystem
import Containers
import PropertyList

/// The app a keychain call acts for, and the access groups it may use.
///
/// The groups, in order (Apple's rule): the signed `keychain-access-groups`
/// entries, then the app's own group (its bundle id), then its app groups.
/// The first is the default for adds; a search without a group covers them
/// all. An app sees only items of these groups.
public struct KeychainContext: Sendable, Equatable {
    public let bundleIdentifier: String
    /// Never empty; the first is the default for adds.
    public let accessGroups: [AccessGroup]

    /// A context whose groups are `leading`, then the bundle id, then `trailing`.
    ///
    /// - Throws: ``KeychainError/invalidAccessGroup(_:reason:)`` for a bad name.
    public init(bundleIdentifier: String, leadingGroups: [String] = [], additionalGroups: [String] = []) throws(KeychainError) {
        var groups: [AccessGroup] = []
        for g in leadingGroups + [bundleIdentifier] + additionalGroups {
            let group = try AccessGroup(g)
            if !groups.contains(group) { groups.append(group) }
        }
        self.bundleIdentifier = bundleIdentifier
        self.accessGroups = groups
    }

    /// The context of the installed app `entry`: the groups its install
    /// recorded in the registry (from the verified signature), never what
    /// the bundle's `Info.plist` says now.
    ///
    /// - Throws: ``KeychainError/invalidAccessGroup(_:reason:)`` for a bad name.
    public init(installed entry: RegistryEntry) throws(KeychainError) {
        try self.init(bundleIdentifier: entry.bundleIdentifier.rawValue, leadingGroups: entry.keychainGroups,
                      additionalGroups: entry.groups.map(\.rawValue))
    }
}
