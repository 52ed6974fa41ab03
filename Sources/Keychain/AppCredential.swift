#if canImport(Glibc)
import Glibc
#endif
import AppHomeSystem
import Containers

/// The per-app credential prefsd asks for before it serves an app's
/// keychain items.
///
/// A random 256-bit token in the app's home,
/// `Library/Keychains/apphome-credential` (mode 0600, one line:
/// `apphome-credential 1 <64 hex digits>`). Holding it shows that the
/// caller can read that app's home — what direct keychain access for that
/// app already needs — so the service never hands an app's items to a
/// process that is confined to another app's home and only names the
/// bundle id. The keychain participant issues it when an install or a
/// restore commits a home (an update moves it with the rest of `Library`);
/// a home from before credentials existed gets one the first time a
/// keychain call through prefsd is made for the app, by a process that can
/// write the home. A reinstall makes a new home and so a new credential.
/// Backups leave `Library/Keychains` out, so a restore issues a fresh
/// token instead of bringing an old one back.
public enum AppCredential {
    /// The format version written in the file.
    public static let version = 1
    static let prefix = "apphome-credential \(version) "

    /// Where the credential of the app whose home is `home` lives.
    public static func path(home: ApplicationHome) -> String { home.keychains + "/apphome-credential" }

    /// The token, or `nil` when none was issued.
    ///
    /// - Throws: ``KeychainError/corrupt(path:reason:)`` for a file that is
    ///   not a credential of this version.
    public static func read(home: ApplicationHome) throws(KeychainError) -> String? {
        try read(at: path(home: home))
    }

    /// The token in the credential file `p`, or `nil` when there is none.
    static func read(at p: String) throws(KeychainError) -> String? {
        let bytes: [UInt8]?
        do { bytes = try FileSystem.readFileIfPresent(p) } catch { throw .system(error) }
        guard let bytes else { return nil }
        let text = String(decoding: bytes, as: UTF8.self)
        guard text.hasPrefix(prefix), text.hasSuffix("\n") else { throw .corrupt(path: p, reason: "not an AppHome credential of version \(version)") }
        let token = String(text.dropFirst(prefix.count).dropLast())
        guard token.utf8.count == 64, token.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }) else {
            throw .corrupt(path: p, reason: "the token is not 64 hex digits")
        }
        return token
    }

    /// The app's token, issuing one first when there is none. Two
    /// processes issuing at once agree on one (the file is linked into
    /// place, never replaced).
    public static func issue(home: ApplicationHome) throws(KeychainError) -> String {
        try issue(at: path(home: home))
    }

    /// The token in `p`, issued first when there is none.
    static func issue(at p: String) throws(KeychainError) -> String {
        if let t = try read(at: p) { return t }
        let dir = FileSystem.parentDirectory(p)
        let token = DeviceKey.toHex(SecureBytes.random(count: 32)).withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
        let staging = dir + "/.apphome-credential.\(getpid()).new"
        do {
            try FileSystem.makeDirectories(dir)
            try FileSystem.writeAtomically(Array((prefix + token + "\n").utf8), to: staging)
        } catch { throw .system(error) }
        defer { unlink(staging) }
        if link(staging, p) != 0 && errno != EEXIST { throw .system(SystemError("link", path: p, errno: errno)) }
        guard let t = try read(at: p) else { throw .system(SystemError("read", path: p, errno: ENOENT)) }
        return t
    }

    /// Whether `token` is the app's credential (in constant time; `false`
    /// when none was issued or the file cannot be read). With `cache`, the
    /// token is read again only when the file changed.
    public static func verify(_ token: String, home: ApplicationHome, cache: KeychainReadCache? = nil) -> Bool {
        verify(token, at: path(home: home), cache: cache)
    }

    /// Whether `token` is the credential in `p`.
    static func verify(_ token: String, at p: String, cache: KeychainReadCache? = nil) -> Bool {
        let found = try? StampedFileCache.value(in: cache?.credentials, at: p) { () throws(KeychainError) -> String? in try read(at: p) }
        guard let stored = found ?? nil else { return false }
        return Sodium.equal(Array(stored.utf8), Array(token.utf8))
    }
}
