#if canImport(Glibc)
import Glibc
#endif
import AppHomeSystem
import Preferences

/// A publisher's Ed25519 key pair, as `apphome keygen` writes it and
/// `apphome sign` reads it.
///
/// The secret key file (0600) holds the 32-byte seed; the public key file
/// beside it (`<file>.pub`) holds the public key and the team. Both are
/// short text files whose format is in `Schemas/code-signature.md`. Not
/// `CustomStringConvertible`: the secret never prints.
public final class SigningKey: @unchecked Sendable {
    /// The first line of a secret key file.
    static let secretHeader = "AppHome signing key, format version 1"
    /// The first line of a public key file.
    static let publicHeader = "AppHome public key, format version 1"

    private var secretKey: [UInt8]
    /// The 32 public-key bytes.
    public let publicKey: [UInt8]
    /// The team this key signs as.
    public var team: TeamIdentifier { TeamIdentifier(publicKey: publicKey) }

    init(seed: [UInt8]) {
        let pair = Ed25519.keyPair(seed: seed)
        secretKey = pair.secretKey
        publicKey = pair.publicKey
    }

    deinit { Ed25519.wipe(&secretKey) }

    /// A new random key pair.
    public static func generate() -> SigningKey {
        var seed = Ed25519.randomSeed()
        defer { Ed25519.wipe(&seed) }
        return SigningKey(seed: seed)
    }

    /// A detached Ed25519 signature of `message`.
    func sign(_ message: [UInt8]) -> [UInt8] { Ed25519.sign(message, secretKey: secretKey) }

    /// Writes the secret key to `path` (0600) and the public key to
    /// `path.pub` (0644), refusing to replace either.
    ///
    /// - Throws: ``ContainersError/signingKey(path:reason:)`` when a file
    ///   exists or cannot be written (then neither is left behind).
    public func write(to path: String) throws(ContainersError) {
        let pub = path + ".pub"
        for p in [path, pub] where FileSystem.exists(p) {
            throw .signingKey(path: p, reason: "it already exists; AppHome never replaces a key file")
        }
        var seed = Array(secretKey[0..<Ed25519.seedBytes])
        defer { Ed25519.wipe(&seed) }
        var secretText = Array((Self.secretHeader + "\ned25519-seed ").utf8) + Self.hex(seed) + [0x0A]
        defer { Ed25519.wipe(&secretText) }
        let publicText = Self.publicHeader + "\ned25519 " + String(decoding: Self.hex(publicKey), as: UTF8.self) + "\nteam " + team.rawValue + "\n"
        try Self.create(path, secretText, mode: 0o600)
        do { try Self.create(pub, Array(publicText.utf8), mode: 0o644) } catch {
            unlink(path)
            throw error
        }
    }

    /// Reads a secret key file written by ``write(to:)``.
    ///
    /// - Throws: ``ContainersError/signingKey(path:reason:)`` when it is
    ///   missing, readable by others, or not a key file.
    public static func read(from path: String) throws(ContainersError) -> SigningKey {
        func fail(_ reason: String) -> ContainersError { .signingKey(path: path, reason: reason) }
        var st = stat()
        guard lstat(path, &st) == 0 else { throw fail("cannot read it: \(String(cString: strerror(errno)))") }
        guard (st.st_mode & S_IFMT) == S_IFREG else { throw fail("it is not a regular file") }
        guard st.st_mode & 0o077 == 0 else { throw fail("it is readable by others (mode \(String(st.st_mode & 0o777, radix: 8))); make it 0600") }
        var bytes: [UInt8]
        do { bytes = try FileSystem.readFileIfPresent(path) ?? [] } catch { throw fail(error.reason) }
        defer { Ed25519.wipe(&bytes) }
        let lines = bytes.split(separator: 0x0A, omittingEmptySubsequences: false)
        guard lines.count >= 2, Array(lines[0]) == Array(secretHeader.utf8) else {
            if let first = lines.first, String(decoding: first, as: UTF8.self).hasPrefix("AppHome signing key, format version ") {
                throw fail("its format version is newer than this AppHome reads (1)")
            }
            throw fail("it is not an AppHome signing key")
        }
        let prefix = Array("ed25519-seed ".utf8)
        let line = Array(lines[1])
        guard line.starts(with: prefix), var seed = unhex(Array(line.dropFirst(prefix.count))), seed.count == Ed25519.seedBytes else {
            throw fail("it is not an AppHome signing key")
        }
        defer { Ed25519.wipe(&seed) }
        return SigningKey(seed: seed)
    }

    /// Reads a public key file (`KEYFILE.pub`).
    ///
    /// - Returns: the 32 public-key bytes.
    /// - Throws: ``ContainersError/signingKey(path:reason:)``.
    public static func readPublicKey(from path: String) throws(ContainersError) -> [UInt8] {
        func fail(_ reason: String) -> ContainersError { .signingKey(path: path, reason: reason) }
        let bytes: [UInt8]?
        do { bytes = try FileSystem.readFileIfPresent(path) } catch { throw fail(error.reason) }
        guard let bytes else { throw fail("it does not exist") }
        let lines = bytes.split(separator: 0x0A).map { String(decoding: $0, as: UTF8.self) }
        guard lines.count >= 2, lines[0] == publicHeader, lines[1].hasPrefix("ed25519 "),
              let key = unhex(Array(lines[1].dropFirst(8).utf8)), key.count == Ed25519.publicKeyBytes else {
            throw fail("it is not an AppHome public key")
        }
        return key
    }

    private static func create(_ path: String, _ bytes: [UInt8], mode: mode_t) throws(ContainersError) {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode)
        guard fd >= 0 else {
            let reason = errno == EEXIST ? "it already exists; AppHome never replaces a key file" : String(cString: strerror(errno))
            throw .signingKey(path: path, reason: reason)
        }
        do {
            defer { close(fd) }
            guard fchmod(fd, mode) == 0 else { throw SystemError("chmod", path: path, errno: errno) }
            try FileSystem.writeAll(fd, bytes, path: path)
            guard fsync(fd) == 0 else { throw SystemError("fsync", path: path, errno: errno) }
        } catch {
            unlink(path)
            throw .signingKey(path: path, reason: "\(error)")
        }
        TreeOperations.syncDirectory(FileSystem.parentDirectory(path))
    }

    static func hex(_ bytes: [UInt8]) -> [UInt8] {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for b in bytes { out.append(digits[Int(b >> 4)]); out.append(digits[Int(b & 15)]) }
        return out
    }

    static func unhex(_ text: [UInt8]) -> [UInt8]? {
        guard text.count % 2 == 0 else { return nil }
        func value(_ c: UInt8) -> UInt8? {
            switch c {
            case 0x30...0x39: return c - 0x30
            case 0x61...0x66: return c - 0x61 + 10
            default: return nil
            }
        }
        var out: [UInt8] = []
        var i = 0
        while i < text.count {
            guard let hi = value(text[i]), let lo = value(text[i + 1]) else { return nil }
            out.append(hi << 4 | lo)
            i += 2
        }
        return out
    }
}
