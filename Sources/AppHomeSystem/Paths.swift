/// Path text helpers shared by every layer (no file-system access).
public enum Paths {
    /// `path` without trailing slashes (`/` stays `/`).
    public static func trimmingTrailingSlashes(_ path: String) -> String {
        var p = Substring(path)
        while p.count > 1 && p.hasSuffix("/") { p.removeLast() }
        return String(p)
    }

    /// The AppHome root when no `--root` is given: `APPHOME_ROOT`, else
    /// `$XDG_DATA_HOME/apphome` (an absolute `XDG_DATA_HOME` only), else
    /// `$HOME/.local/share/apphome`; `nil` when none is set. The mains pass
    /// the three variables in; nothing here reads the environment.
    public static func defaultRoot(apphomeRoot: String?, xdgDataHome: String?, home: String?) -> String? {
        if let r = apphomeRoot, !r.isEmpty { return r }
        if let x = xdgDataHome, x.hasPrefix("/") { return x + "/apphome" }
        if let h = home, !h.isEmpty { return h + "/.local/share/apphome" }
        return nil
    }
}
