import AppHomeSystem
import Keychain

/// How `security` prints a secret: never altered. A secret that is valid
/// UTF-8 is printed as it is (line ends, tabs and NULs included); any other
/// secret as the lowercase hex of its exact bytes, since a terminal or a
/// pipe expecting text would otherwise mangle it (macOS prints hex too, for
/// any byte outside printable ASCII).
enum SecretText {
    /// Calls `body` with the secret as text when it is valid UTF-8, else
    /// with `nil`; the plain copy of the bytes is wiped afterwards.
    static func withText<R>(_ data: SecureBytes, _ body: (String?) -> R) -> R {
        var bytes = data.exposedCopy()
        defer { SecureBytes.wipe(&bytes) }
        return body(String(validating: bytes, as: UTF8.self))
    }

    /// The lowercase hex of the secret's bytes.
    static func hex(_ data: SecureBytes) -> String {
        data.withUnsafeBytes { Hex.encode($0) }
    }

    /// What `find-*-password -w` prints: the secret as text when it is
    /// valid UTF-8, else its lowercase hex; then a line end.
    static func plain(_ data: SecureBytes) -> String {
        (withText(data) { $0 } ?? hex(data)) + "\n"
    }
}
