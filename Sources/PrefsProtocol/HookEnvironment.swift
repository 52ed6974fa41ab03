/// The variables an uninstall hook run by prefsd is given from its
/// caller: only those on ``allowed``, never the caller's whole
/// environment (which may hold tokens, session addresses and the rest).
///
/// The hooks also get `APPHOME_BUNDLE_ID`, `APPHOME_HOME`,
/// `APPHOME_VERSION` and `APPHOME_ROOT` from the uninstall itself.
/// A request that names other variables has them dropped when it is
/// decoded, so the service never sees them.
public struct HookEnvironment: Sendable, Equatable {
    /// The variables a hook may get from its caller: where to find
    /// programs, the user's home, the language and time zone, and the
    /// temporary directory.
    public static let allowed: [String] = ["PATH", "HOME", "LANG", "LC_ALL", "TZ", "TMPDIR"]

    /// The allowed variables that were set, by name.
    public let variables: [String: String]

    /// The allowed variables of `environment`; the others are left out.
    public init(from environment: [String: String]) {
        var kept: [String: String] = [:]
        for name in Self.allowed { if let value = environment[name] { kept[name] = value } }
        variables = kept
    }
}
