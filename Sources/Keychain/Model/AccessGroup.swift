/// A keychain access group name, checked once here: 1 to 200 bytes of
/// letters, digits, `.`, `-` and `_`, not starting with `.`, without `..`.
/// Group names become file names under `<root>/Keychains/`, so no name can
/// lead outside it.
public struct AccessGroup: Hashable, Comparable, Sendable, CustomStringConvertible {
    public let rawValue: String

    /// - Throws: ``KeychainError/invalidAccessGroup(_:reason:)``.
    public init(_ text: String) throws(KeychainError) {
        let bytes = Array(text.utf8)
        func fail(_ reason: String) -> KeychainError { .invalidAccessGroup(text, reason: reason) }
        if bytes.isEmpty { throw fail("it is empty") }
        if bytes.count > 200 { throw fail("it is longer than 200 bytes") }
        if bytes[0] == UInt8(ascii: ".") { throw fail("it starts with '.'") }
        if text.contains("..") { throw fail("it contains '..'") }
        for b in bytes {
            let ok = (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A)
                || b == UInt8(ascii: ".") || b == UInt8(ascii: "-") || b == UInt8(ascii: "_")
            if !ok { throw fail("only letters, digits, '.', '-' and '_' are allowed") }
        }
        rawValue = text
    }

    public var description: String { rawValue }
    public static func < (a: AccessGroup, b: AccessGroup) -> Bool {
        Array(a.rawValue.utf8).lexicographicallyPrecedes(Array(b.rawValue.utf8))
    }
}
