#if canImport(Glibc)
import Glibc
#endif
import AppHomeSystem

/// A non-blocking pipe that wakes the loop's `poll`: a signal handler or a
/// worker thread writes a byte, the loop drains them all.
struct WakePipe {
    let read: Int32
    let write: Int32

    /// Makes the pipe, both ends non-blocking and closed on exec.
    static func make() throws(ServiceError) -> WakePipe {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw .system(SystemError("pipe", path: "", errno: errno)) }
        for fd in fds {
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        }
        return WakePipe(read: fds[0], write: fds[1])
    }

    /// Wakes the loop through the pipe's writing end `fd` (safe from any thread).
    static func poke(_ fd: Int32) {
        var b: UInt8 = 1
        _ = Glibc.write(fd, &b, 1)
    }

    /// Reads every byte waiting.
    func drain() {
        var b = [UInt8](repeating: 0, count: 64)
        while Glibc.read(read, &b, 64) > 0 {}
    }

    func close() {
        for fd in [read, write] where fd >= 0 { _ = Glibc.close(fd) }
    }
}
