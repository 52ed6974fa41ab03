#if canImport(Glibc)
import Glibc
#endif

/// The failure-injection seam under every file-system call AppHome makes.
///
/// Each wrapper in ``FileSystem`` and ``FileLock`` asks ``SystemFaults``
/// first whether the call should fail; in production nothing is injected
/// and the check is one task-local read. Tests make a chosen call fail with
/// a chosen `errno` (a full disk at `write`, a failed `rename`) without
/// touching the real file system:
///
/// ```swift
/// try SystemFaults.injecting({ call, path in call == "rename" ? EXDEV : nil }) {
///     try FileSystem.writeAtomically(bytes, to: path)
/// }
/// ```
public enum SystemFaults {
    /// Decides, for a call (`"open"`, `"write"`, `"fsync"`, `"rename"`,
    /// `"unlink"`, `"mkdir"`, `"flock"`) on a path, the `errno` it fails
    /// with, or `nil` to make the real call.
    public typealias Injector = @Sendable (_ call: String, _ path: String) -> Int32?

    @TaskLocal static var injector: Injector?

    /// Runs `body` with `injector` deciding which calls fail.
    public static func injecting<R>(_ injector: @escaping Injector, _ body: () throws -> R) rethrows -> R {
        try $injector.withValue(injector) { try body() }
    }

    /// The `errno` an injected failure of `call` on `path` gives, if any.
    @inline(__always)
    static func injected(_ call: String, _ path: String) -> Int32? {
        guard let injector else { return nil }
        return injector(call, path)
    }
}

/// Thin wrappers over the C calls: each consults ``SystemFaults`` and
/// retries `EINTR` where the call may be retried.
enum Syscalls {
    static func open(_ path: String, _ flags: Int32, _ mode: mode_t = 0) -> Int32 {
        if let e = SystemFaults.injected("open", path) { errno = e; return -1 }
        while true {
            let fd = Glibc.open(path, flags, mode)
            if fd < 0 && errno == EINTR { continue }
            return fd
        }
    }

    static func write(_ fd: Int32, _ buffer: UnsafeRawPointer, _ count: Int, path: String) -> Int {
        if let e = SystemFaults.injected("write", path) { errno = e; return -1 }
        return Glibc.write(fd, buffer, count)
    }

    static func fsync(_ fd: Int32, path: String) -> Int32 {
        if let e = SystemFaults.injected("fsync", path) { errno = e; return -1 }
        return Glibc.fsync(fd)
    }

    static func rename(_ from: String, _ to: String) -> Int32 {
        if let e = SystemFaults.injected("rename", to) { errno = e; return -1 }
        return Glibc.rename(from, to)
    }

    static func unlink(_ path: String) -> Int32 {
        if let e = SystemFaults.injected("unlink", path) { errno = e; return -1 }
        return Glibc.unlink(path)
    }

    static func mkdir(_ path: String, _ mode: mode_t) -> Int32 {
        if let e = SystemFaults.injected("mkdir", path) { errno = e; return -1 }
        return Glibc.mkdir(path, mode)
    }

    static func lock(_ fd: Int32, _ operation: Int32, path: String) -> Int32 {
        if let e = SystemFaults.injected("flock", path) { errno = e; return -1 }
        return flock(fd, operation)
    }
}
