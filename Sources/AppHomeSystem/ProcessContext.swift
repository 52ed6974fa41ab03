#if canImport(Glibc)
import Glibc
#endif

/// Which app's context another process was started in, for the services that
/// must keep the user's own secrets (the login keychain) away from apps.
public enum ProcessContext {
    /// The variables `apphome run` and `launch` set, as `NAME=` bytes.
    static let contextVariables: [[UInt8]] = [Array("APPHOME_BUNDLE_ID=".utf8), Array("APPHOME_HOME=".utf8)]
    /// The most environment read: far above what `execve` accepts (a
    /// quarter of an 8 MiB stack limit, 32 pages per string).
    static let maximumEnvironment = 64 << 20

    /// The app the process `pid` acts for, or `nil` for the user.
    ///
    /// Its sandbox decides first (``PeerIdentity``): a process in an app's
    /// sandbox is that app whatever its environment, and one whose sandbox
    /// cannot be told is an app too (fail closed). Only a process outside
    /// any sandbox is then looked at by its environment, which can only
    /// narrow it to an app (``appContext(ofUnconfinedProcess:)``), never widen it.
    public static func appContext(ofProcess pid: Int32) -> String? {
        guard pid > 0 else { return nil }
        return appContext(pid: pid, sandbox: PeerIdentity.sandbox(ofProcess: pid))
    }

    /// ``appContext(ofProcess:)`` for the peer of the connected Unix socket
    /// `fd`, pinned by `SO_PEERPIDFD`.
    public static func appContext(ofSocketPeer fd: Int32, pid: Int32) -> String? {
        appContext(pid: pid, sandbox: PeerIdentity.sandbox(ofSocketPeer: fd))
    }

    /// The app of a peer whose sandbox is known: the sandbox's, else the
    /// narrowing its environment gives.
    public static func appContext(pid: Int32, sandbox: PeerSandbox) -> String? {
        if let app = sandbox.confinedApp { return app }
        return appContext(ofUnconfinedProcess: pid)
    }

    /// The value of `APPHOME_BUNDLE_ID` or `APPHOME_HOME` in the
    /// environment of the process `pid` (outside any sandbox), read from
    /// `/proc/<pid>/environ`; `nil` for none, or when `pid` is unknown or gone.
    ///
    /// A cooperative narrowing, not isolation: it keeps an app's ordinary
    /// calls made outside a sandbox (`apphome run --no-sandbox`) from the
    /// user's secrets. The whole environment is read; one larger than the
    /// kernel lets a process start with (or unreadable) counts as an app's.
    public static func appContext(ofUnconfinedProcess pid: Int32) -> String? {
        guard pid > 0 else { return nil }
        let fd = open("/proc/\(pid)/environ", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n < 0 { return "an app (its environment cannot be read)" }
            if n == 0 { break }
            bytes += chunk[0..<n]
            if bytes.count > maximumEnvironment { return "an app (its environment is larger than \(maximumEnvironment >> 20) MiB)" }
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
