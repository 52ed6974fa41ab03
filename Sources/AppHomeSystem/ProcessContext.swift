#if canImport(Glibc)
import Glibc
#endif

/// Which app's context another process was started in, for the services that
/// must keep the user's own secrets (the login keychain) away from apps.
public enum ProcessContext {
    /// The app whose context the process `pid` was started in (the value of
    /// its `APPHOME_BUNDLE_ID` or `APPHOME_HOME`, which `apphome run` and
    /// `apphome launch` set), read from `/proc/<pid>/environ`; `nil` for none,
    /// or when `pid` is unknown or gone.
    ///
    /// A safeguard, not isolation: a same-user process can start a child with
    /// a clean environment. It keeps an app's ordinary calls (git, keyring,
    /// secret-tool inside `apphome run`) from reaching the user's secrets.
    public static func appContext(ofProcess pid: Int32) -> String? {
        guard pid > 0 else { return nil }
        let fd = open("/proc/\(pid)/environ", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        // A /proc file has no size: read to the end (at most 1 MiB).
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16_384)
        while bytes.count < 1 << 20 {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            bytes += chunk[0..<n]
        }
        for entry in bytes.split(separator: 0) {
            for name in ["APPHOME_BUNDLE_ID=", "APPHOME_HOME="] where entry.starts(with: name.utf8) && entry.count > name.utf8.count {
                return FileNames.escaped(entry.dropFirst(name.utf8.count))
            }
        }
        return nil
    }
}
