#if canImport(Glibc)
import Glibc
#endif
import AppHomeSystem
import Preferences

/// The socket calls prefsd and its clients make, each wrapped so that a C
/// return code becomes a ``SystemError`` right here.
public enum UnixSocket {
    /// The credentials the kernel recorded for the peer of a connected
    /// Unix socket (`SO_PEERCRED`).
    public struct PeerCredentials: Equatable, Sendable {
        public var pid: Int32
        public var uid: UInt32
        public var gid: UInt32
    }

    /// Fills a `sockaddr_un` for `path`, or throws when it does not fit.
    static func withAddress<R>(_ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) -> R) throws(SystemError) -> R {
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        let capacity = MemoryLayout.size(ofValue: addr.sun_path)
        guard !bytes.isEmpty, bytes.count < capacity else { throw SystemError("socket path too long", path: path, errno: ENAMETOOLONG) }
        withUnsafeMutableBytes(of: &addr.sun_path) { raw in
            for (i, b) in bytes.enumerated() { raw[i] = b }
            raw[bytes.count] = 0
        }
        return withUnsafePointer(to: &addr) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
    }

    /// A new listening socket at `path`, made 0600 before it appears there.
    ///
    /// It is bound under a temporary name, made 0600 and renamed into place
    /// once it listens, so a client that sees the path can connect at once.
    /// The umask is left alone (it is per process, and an in-process
    /// service must not change it under other threads); the caller keeps
    /// the directory 0700, so nobody else can reach the temporary name.
    public static func listen(at path: String, backlog: Int32 = 128) throws(SystemError) -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw SystemError("socket", path: path, errno: errno) }
        let temporary = path + ".\(getpid()).tmp"
        unlink(temporary)
        let rc = try withAddress(temporary) { bind(fd, $0, $1) }
        let bindErrno = errno
        guard rc == 0 else { close(fd); throw SystemError("bind", path: path, errno: bindErrno) }
        guard chmod(temporary, 0o600) == 0, Glibc.listen(fd, backlog) == 0, rename(temporary, path) == 0 else {
            let e = errno; unlink(temporary); close(fd); throw SystemError("listen", path: path, errno: e)
        }
        try setNonBlocking(fd, path: path)
        return fd
    }

    /// A connected socket to `path`, blocking, with send and receive
    /// timeouts of `timeout` seconds.
    public static func connect(to path: String, timeout: Double) throws(SystemError) -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw SystemError("socket", path: path, errno: errno) }
        var tv = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - Double(Int(timeout))) * 1_000_000))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        while true {
            let rc = try withAddress(path) { Glibc.connect(fd, $0, $1) }
            if rc == 0 { return fd }
            if errno == EINTR { continue }
            let e = errno
            close(fd)
            throw SystemError("connect", path: path, errno: e)
        }
    }

    /// Accepts one pending connection as a non-blocking descriptor, or
    /// returns `nil` when none is pending.
    public static func accept(_ listener: Int32) -> Int32? {
        while true {
            let fd = Glibc.accept(listener, nil, nil)
            if fd >= 0 {
                _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
                _ = try? setNonBlocking(fd, path: "")
                return fd
            }
            if errno == EINTR || errno == ECONNABORTED { continue }
            return nil
        }
    }

    /// Puts `fd` in non-blocking mode.
    public static func setNonBlocking(_ fd: Int32, path: String) throws(SystemError) {
        let flags = fcntl(fd, F_GETFL)
        guard flags >= 0, fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0 else { throw SystemError("fcntl", path: path, errno: errno) }
    }

    /// The peer's pid, uid and gid as the kernel recorded them at connect time.
    public static func peerCredentials(_ fd: Int32) -> PeerCredentials? {
        var raw: (Int32, UInt32, UInt32) = (0, 0, 0)
        var len = socklen_t(MemoryLayout.size(ofValue: raw))
        guard getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &raw, &len) == 0, len >= 12 else { return nil }
        return PeerCredentials(pid: raw.0, uid: raw.1, gid: raw.2)
    }

    /// Writes all of `bytes` to a blocking descriptor.
    public static func sendAll(_ fd: Int32, _ bytes: [UInt8]) throws(SystemError) {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
            if n < 0 {
                if errno == EINTR { continue }
                throw SystemError("send", path: "prefsd socket", errno: errno)
            }
            offset += n
        }
    }

    /// The monotonic clock in seconds.
    public static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}
