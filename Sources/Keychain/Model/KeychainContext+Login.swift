extension KeychainContext {
    /// `login`: the access group of the user's login keychain.
    ///
    /// No app can hold it: an app's own group is its bundle id (reverse-DNS,
    /// two components at least), a signed app's keychain groups are
    /// `<team>.<name>`, and app groups start with `group.`; none of them can
    /// be `login`. Uninstall never removes it (it belongs to no app).
    public static let loginGroupName = "login"

    /// The context of the user's login keychain: the `login` group only,
    /// what `security` uses when no app is named and none runs.
    public static let login: KeychainContext = {
        do { return try KeychainContext(bundleIdentifier: loginGroupName) } catch { fatalError("'login' is a valid group name") }
    }()

    /// The `login` group.
    public static var loginGroup: AccessGroup { login.accessGroups[0] }

    /// Whether this is the login keychain's context.
    public var isLogin: Bool { self == Self.login }
}
