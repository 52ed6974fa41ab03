import AppHomeSystem

/// The user's credential for the login keychain through prefsd:
/// `<root>/Keychains/login.credential`, outside every app home, in the
/// format of ``AppCredential`` (mode 0600, `apphome-credential 1 <hex>`).
///
/// Holding it shows that the caller can read the keychain directory
/// itself, which direct access to the login keychain needs anyway; a
/// process confined to an app's home cannot present it, so prefsd never
/// serves the login keychain to an app (nor with an app's credential:
/// the caller `login` is checked against this file only).
public enum LoginCredential {
    /// Where the credential lives under `root`.
    public static func path(root: String) -> String { Paths.trimmingTrailingSlashes(root) + "/Keychains/login.credential" }

    /// The token, issued first when there is none.
    public static func issue(root: String) throws(KeychainError) -> String { try AppCredential.issue(at: path(root: root)) }

    /// Whether `token` is the user's credential (constant time).
    public static func verify(_ token: String, root: String) -> Bool { AppCredential.verify(token, at: path(root: root)) }
}
