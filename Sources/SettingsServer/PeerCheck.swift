#if canImport(Glibc)
import Glibc
#endif
import AppHomeSystem

/// Whether a peer process may use the Settings app: not one started in an
/// app's context (`APPHOME_BUNDLE_ID`/`APPHOME_HOME` in its environment,
/// as prefsd's keychain jobs check), nor one in an app's sandbox (whose
/// root holds `/.apphome-info`).
enum PeerCheck {
    /// Why the process `pid` is refused, or `nil`. An unknown pid (-1) is let
    /// through: on a Unix socket the kernel always gives one.
    static func refusal(pid: Int32) -> String? {
        guard pid > 0 else { return nil }
        if let app = ProcessContext.appContext(ofProcess: pid) {
            return "process \(pid) runs in the context of the app \(app)"
        }
        var st = stat()
        if stat("/proc/\(pid)/root/.apphome-info", &st) == 0 {
            return "process \(pid) runs in an app's sandbox"
        }
        return nil
    }
}
