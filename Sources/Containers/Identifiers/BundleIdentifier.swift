/// A reverse-DNS bundle identifier such as `com.example.ScaryBugs`,
/// validated once so that it can be used as a file name anywhere under the
/// root.
///
/// At least two components separated by single dots; each component is
/// made of ASCII letters, digits and `-`; at most 255 bytes. Comparison is
/// case-sensitive, as on iOS's file system.
public struct BundleIdentifier: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The identifier as written.
    public let rawValue: String

    /// The longest identifier accepted, in bytes.
    public static let maximumLength = 255

    /// Validates `rawValue`.
    ///
    /// - Throws: ``ContainersError/invalidBundleIdentifier(_:reason:)``.
    public init(_ rawValue: String) throws(ContainersError) {
        func fail(_ reason: String) -> ContainersError { .invalidBundleIdentifier(rawValue, reason: reason) }
        let bytes = Array(rawValue.utf8)
        if bytes.isEmpty { throw fail("it is empty") }
        if bytes.count > Self.maximumLength { throw fail("it is longer than \(Self.maximumLength) bytes") }
        if bytes.first == UInt8(ascii: ".") || bytes.last == UInt8(ascii: ".") {
            throw fail("it must not start or end with '.'")
        }
        for byte in bytes where !(Self.isComponentByte(byte) || byte == UInt8(ascii: ".")) {
            throw fail("only letters A-Z and a-z, digits, '-' and '.' are allowed")
        }
        let components = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        if components.contains(where: { $0.isEmpty }) { throw fail("it must not contain an empty component ('..')") }
        if components.count < 2 { throw fail("it must be reverse-DNS with at least two components, like com.example.App") }
        self.rawValue = rawValue
    }

    private static func isComponentByte(_ b: UInt8) -> Bool {
        (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || b == UInt8(ascii: "-")
    }

    public var description: String { rawValue }

    public static func < (lhs: BundleIdentifier, rhs: BundleIdentifier) -> Bool {
        Array(lhs.rawValue.utf8).lexicographicallyPrecedes(Array(rhs.rawValue.utf8))
    }
}
