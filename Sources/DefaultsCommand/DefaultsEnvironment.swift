import AppHomeSystem
import Preferences

/// What the `defaults` command needs from the process environment, read
/// once by `main` and passed in (libraries never call `getenv`).
public struct DefaultsEnvironment: Sendable {
    /// `APPHOME_ROOT`.
    public var apphomeRoot: String?
    /// `XDG_DATA_HOME`.
    public var xdgDataHome: String?
    /// `HOME`.
    public var home: String?

    /// `APPHOME_PREFSD`: `off`, `auto` (the default) or `require`.
    public var prefsdMode: String?
    /// `APPHOME_SOCKET`.
    public var socket: String?
    /// `XDG_RUNTIME_DIR`.
    public var runtimeDirectory: String?

    public init(apphomeRoot: String? = nil, xdgDataHome: String? = nil, home: String? = nil,
                prefsdMode: String? = nil, socket: String? = nil, runtimeDirectory: String? = nil) {
        self.apphomeRoot = apphomeRoot
        self.xdgDataHome = xdgDataHome
        self.home = home
        self.prefsdMode = prefsdMode
        self.socket = socket
        self.runtimeDirectory = runtimeDirectory
    }

    /// The variables prefsd's client settings are read from.
    var prefsdVariables: [String: String] {
        var v: [String: String] = [:]
        v["APPHOME_PREFSD"] = prefsdMode
        v["APPHOME_SOCKET"] = socket
        v["XDG_RUNTIME_DIR"] = runtimeDirectory
        return v
    }

    /// The root to use when no `--root` is given: `APPHOME_ROOT`, else
    /// `$XDG_DATA_HOME/apphome`, else `$HOME/.local/share/apphome`.
    public func defaultRoot() -> String? {
        DomainResolver.defaultRoot(apphomeRoot: apphomeRoot, xdgDataHome: xdgDataHome, home: home)
    }
}
