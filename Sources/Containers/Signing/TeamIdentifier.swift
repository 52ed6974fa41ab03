import CSodium

/// A publisher's team identifier: ten characters of RFC 4648 base32
/// (`A`–`Z`, `2`–`7`) derived from the publisher's Ed25519 public key.
///
/// The identifier is the first 10 characters of the unpadded base32
/// encoding of BLAKE2b-256 (libsodium `crypto_generichash`, no key) of
/// the 32 public-key bytes, i.e. its first 50 bits. The same key always
/// gives the same team; see `Schemas/code-signature.md`.
public struct TeamIdentifier: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The number of characters.
    public static let length = 10
    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567".utf8)

    /// The ten characters.
    public let rawValue: String

    /// Checks a stored or typed identifier.
    ///
    /// - Returns: `nil` unless `rawValue` is exactly ten base32 characters.
    public init?(_ rawValue: String) {
        let bytes = Array(rawValue.utf8)
        guard bytes.count == Self.length, bytes.allSatisfy({ Self.alphabet.contains($0) }) else { return nil }
        self.rawValue = rawValue
    }

    /// The team of the Ed25519 public key `publicKey` (32 bytes).
    public init(publicKey: [UInt8]) {
        let digest = ContentHash(of: publicKey).bytes
        // 10 characters of 5 bits each: the first 50 bits of the digest.
        var out: [UInt8] = []
        var buffer: UInt64 = 0
        var bits = 0
        var index = 0
        while out.count < Self.length {
            buffer = (buffer << 8) | UInt64(digest[index])
            index += 1
            bits += 8
            while bits >= 5 && out.count < Self.length {
                bits -= 5
                out.append(Self.alphabet[Int((buffer >> UInt64(bits)) & 31)])
            }
        }
        rawValue = String(decoding: out, as: UTF8.self)
    }

    /// `<team>.`, what `$(AppIdentifierPrefix)` and `$(TeamIdentifierPrefix)` expand to.
    public var prefix: String { rawValue + "." }

    public var description: String { rawValue }

    public static func < (lhs: TeamIdentifier, rhs: TeamIdentifier) -> Bool { lhs.rawValue < rhs.rawValue }
}
