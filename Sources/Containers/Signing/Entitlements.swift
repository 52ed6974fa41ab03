import PropertyList
/// The groups a bundle claims: keychain access groups (`keychain-access-groups`,
/// in the order written) and app groups (`com.apple.security.application-groups`,
/// sorted).
///
/// In a signed bundle they are the signed ones, with `$(AppIdentifierPrefix)`
/// and `$(TeamIdentifierPrefix)` expanded to `<team>.`; in the registry they
/// are what the install granted.
public struct Entitlements: Equatable, Sendable {
    /// The `Info.plist` key for keychain access groups, as on Apple platforms.
    public static let keychainAccessGroupsKey = "keychain-access-groups"
    /// The placeholders that expand to `<team>.`.
    public static let prefixPlaceholders = ["$(AppIdentifierPrefix)", "$(TeamIdentifierPrefix)"]

    /// Keychain access groups, in order, without duplicates.
    public var keychainAccessGroups: [String]
    /// The `Info.plist` key naming the app's synced key-value store, as on Apple platforms.
    public static let ubiquityKeyValueStoreKey = "com.apple.developer.ubiquity-kvstore-identifier"

    /// App groups, sorted, without duplicates.
    public var applicationGroups: [AppGroupIdentifier]
    /// The identifier of the synced key-value store the app may use
    /// (`com.apple.developer.ubiquity-kvstore-identifier`), or `nil`.
    public var ubiquityKeyValueStore: String?

    public init(keychainAccessGroups: [String] = [], applicationGroups: [AppGroupIdentifier] = [], ubiquityKeyValueStore: String? = nil) {
        var seen: Set<PlistKey> = [] // exact scalars: equivalent spellings are two groups
        self.keychainAccessGroups = keychainAccessGroups.filter { seen.insert(PlistKey($0)).inserted }
        self.applicationGroups = Array(Set(applicationGroups)).sorted()
        self.ubiquityKeyValueStore = ubiquityKeyValueStore
    }

    /// Whether nothing is claimed.
    public var isEmpty: Bool { keychainAccessGroups.isEmpty && applicationGroups.isEmpty && ubiquityKeyValueStore == nil }

    /// The declared entitlements with the team placeholders expanded.
    public func expanded(team: TeamIdentifier) -> Entitlements {
        func expand(_ group: String) -> String {
            for placeholder in Self.prefixPlaceholders where group.hasPrefix(placeholder) {
                return team.prefix + group.dropFirst(placeholder.count)
            }
            return group
        }
        return Entitlements(keychainAccessGroups: keychainAccessGroups.map(expand), applicationGroups: applicationGroups,
                            ubiquityKeyValueStore: ubiquityKeyValueStore.map(expand))
    }

    /// Why `identifier` cannot be a key-value store identifier of `team`,
    /// or `nil`: like a keychain access group, it is `<team>.<name>`, so
    /// two apps of one team may share a store and no other team can name it.
    public static func ubiquityStoreProblem(_ identifier: String, team: TeamIdentifier) -> String? {
        nameProblem(identifier, team: team, noun: "a key-value store identifier")
    }

    /// Why `group` cannot be a keychain access group of `team`, or `nil`.
    ///
    /// A team's group is `<team>.<name>`; the whole name follows the
    /// keychain's rule for group names (1 to 200 bytes of letters, digits,
    /// `.`, `-` and `_`, no `..`).
    static func keychainGroupProblem(_ group: String, team: TeamIdentifier) -> String? {
        nameProblem(group, team: team, noun: "a keychain access group")
    }

    private static func nameProblem(_ group: String, team: TeamIdentifier, noun: String) -> String? {
        guard group.hasPrefix(team.prefix), group.utf8.count > team.prefix.utf8.count else {
            return "\(noun) of team \(team) must be written '\(team).<name>' (or '$(AppIdentifierPrefix)<name>')"
        }
        let bytes = Array(group.utf8)
        if bytes.count > 200 { return "\(noun) is at most 200 bytes" }
        if group.contains("..") { return "\(noun) may not contain '..'" }
        for b in bytes {
            let ok = (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A)
                || b == UInt8(ascii: ".") || b == UInt8(ascii: "-") || b == UInt8(ascii: "_")
            if !ok { return "\(noun) holds only letters, digits, '.', '-' and '_'" }
        }
        return nil
    }
}
