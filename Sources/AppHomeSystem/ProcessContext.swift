#if canImport(Glibc)
import Glibc
#endif

/// Which app's context another process was started in, for the services that
/// must keep the user's own secrets (the login keychain) away from apps.
public enum ProcessContext {
    /// The variables `apphome run` and `launch` set, as `NAME=` bytes.
    static let contextVariables: [[UInt8]] = [Array("APPHOME_BUNDLE_ID=".utf8), Array("APPHOME_HOME=".utf8)]

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
        // Entry by entry (NUL-separated), without splitting the whole block.
        var start = 0
        while start < bytes.count {
            var end = start
            while end < bytes.count && bytes[end] != 0 { end += 1 }
            if bytes[start] == UInt8(ascii: "A") {
                let entry = bytes[start..<end]
                for name in Self.contextVariables where entry.starts(with: name) && entry.count > name.count {
                    return FileNames.escaped(entry.dropFirst(name.count))
                }
            }
            start = end + 1
        }
        return nil
    }
}
