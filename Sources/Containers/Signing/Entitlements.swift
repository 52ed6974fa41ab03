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
    /// App groups, sorted, without duplicates.
    public var applicationGroups: [AppGroupIdentifier]

    public init(keychainAccessGroups: [String] = [], applicationGroups: [AppGroupIdentifier] = []) {
        var seen: Set<PlistKey> = [] // exact scalars: equivalent spellings are two groups
        self.keychainAccessGroups = keychainAccessGroups.filter { seen.insert(PlistKey($0)).inserted }
        self.applicationGroups = Array(Set(applicationGroups)).sorted()
    }

    /// Whether nothing is claimed.
    public var isEmpty: Bool { keychainAccessGroups.isEmpty && applicationGroups.isEmpty }

    /// The declared entitlements with the team placeholders expanded.
    public func expanded(team: TeamIdentifier) -> Entitlements {
        Entitlements(keychainAccessGroups: keychainAccessGroups.map { group in
            for placeholder in Self.prefixPlaceholders where group.hasPrefix(placeholder) {
                return team.prefix + group.dropFirst(placeholder.count)
            }
            return group
        }, applicationGroups: applicationGroups)
    }

    /// Why `group` cannot be a keychain access group of `team`, or `nil`.
    ///
    /// A team's group is `<team>.<name>`; the whole name follows the
    /// keychain's rule for group names (1 to 200 bytes of letters, digits,
    /// `.`, `-` and `_`, no `..`).
    static func keychainGroupProblem(_ group: String, team: TeamIdentifier) -> String? {
        guard group.hasPrefix(team.prefix), group.utf8.count > team.prefix.utf8.count else {
            return "a keychain access group of team \(team) must be written '\(team).<name>' (or '$(AppIdentifierPrefix)<name>')"
        }
        let bytes = Array(group.utf8)
        if bytes.count > 200 { return "a keychain access group is at most 200 bytes" }
        if group.contains("..") { return "a keychain access group may not contain '..'" }
        for b in bytes {
            let ok = (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A)
                || b == UInt8(ascii: ".") || b == UInt8(ascii: "-") || b == UInt8(ascii: "_")
            if !ok { return "a keychain access group holds only letters, digits, '.', '-' and '_'" }
        }
        return nil
    }
}
