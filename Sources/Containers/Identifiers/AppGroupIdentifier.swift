/// An app-group identifier such as `group.com.example.Bugs`, validated
/// once so it can be used as a preferences domain and a key anywhere.
///
/// `group.` followed by a reverse-DNS name that is valid as a bundle
/// identifier (see ``BundleIdentifier``). Comparison is case-sensitive.
public struct AppGroupIdentifier: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The identifier as written.
    public let rawValue: String

    /// The `Info.plist` key that lists an app's groups, as on Apple platforms.
    public static let infoPlistKey = "com.apple.security.application-groups"

    /// Validates `rawValue`.
    ///
    /// - Throws: ``ContainersError/invalidAppGroupIdentifier(_:reason:)``.
    public init(_ rawValue: String) throws(ContainersError) {
        guard rawValue.hasPrefix("group.") else {
            throw .invalidAppGroupIdentifier(rawValue, reason: "it must start with 'group.'")
        }
        do { _ = try BundleIdentifier(String(rawValue.dropFirst(6))) } catch {
            guard case .invalidBundleIdentifier(_, let reason) = error else { throw error }
            throw .invalidAppGroupIdentifier(rawValue, reason: "after 'group.', \(reason)")
        }
        self.rawValue = rawValue
    }

    public var description: String { rawValue }

    public static func < (lhs: AppGroupIdentifier, rhs: AppGroupIdentifier) -> Bool {
        Array(lhs.rawValue.utf8).lexicographicallyPrecedes(Array(rhs.rawValue.utf8))
    }
}
