#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// The failure-injection seam under every file-system call AppHome makes.
///
/// Each wrapper in ``FileSystem`` and ``FileLock`` asks ``SystemFaults``
/// first whether the call should fail. Tests make a chosen call fail with
/// a chosen `errno` (a full disk at `write`, a failed `rename`) without
/// touching the real file system:
///
/// ```swift
/// try SystemFaults.injecting({ call, path in call == "rename" ? EXDEV : nil }) {
///     try FileSystem.writeAtomically(bytes, to: path)
/// }
/// ```
///
/// In production nothing is injected and the check is one relaxed atomic
/// load. The injector itself lives in a thread-specific slot, read only
/// while some ``injecting(_:_:)`` body runs: not in a task-local, whose
/// first read in a process (the concurrency runtime's task-local set-up)
/// cost a `defaults read` a tenth of its instructions.
public enum SystemFaults {
    /// Decides, for a call (`"open"`, `"write"`, `"fsync"`, `"rename"`,
    /// `"exchange"` (a swap of two names, which a `"rename"` fault also
    /// fails), `"unlink"`, `"mkdir"`, `"flock"`) on a path, the `errno` it fails
    /// with, or `nil` to make the real call.
    public typealias Injector = @Sendable (_ call: String, _ path: String) -> Int32?

    /// How many ``injecting(_:_:)`` bodies are running now, on every thread
    /// together. While it is 0 no call looks for an injector.
    static let activeInjections = Atomic<Int>(0)

    /// The thread-specific slot holding the running body's injector (a
    /// retained ``Box``), created by the first ``injecting(_:_:)``.
    private static let slot: pthread_key_t = {
        var key = pthread_key_t()
        precondition(pthread_key_create(&key, nil) == 0, "SystemFaults: no thread-specific key left")
        return key
    }()

    private final class Box {
        let injector: Injector
        init(_ injector: @escaping Injector) { self.injector = injector }
    }

    /// Runs `body` with `injector` deciding which calls fail.
    ///
    /// The injector applies to the calls `body` makes on the thread that
    /// runs it (`body` is synchronous: it cannot move to another one).
    /// Other threads, and the tests that run on them in parallel, keep
    /// making the real calls; an inner `injecting` replaces the injector
    /// until it returns.
    public static func injecting<R>(_ injector: @escaping Injector, _ body: () throws -> R) rethrows -> R {
        let previous = pthread_getspecific(slot)
        let box = Unmanaged.passRetained(Box(injector))
        pthread_setspecific(slot, box.toOpaque())
        activeInjections.wrappingAdd(1, ordering: .sequentiallyConsistent)
        defer {
            activeInjections.wrappingSubtract(1, ordering: .sequentiallyConsistent)
            pthread_setspecific(slot, previous)
            box.release()
        }
        return try body()
    }

    /// The `errno` an injected failure of `call` on `path` gives, if any.
    @inline(__always)
    static func injected(_ call: String, _ path: String) -> Int32? {
        // A body of `injecting` runs after its own increment, on the same
        // thread: a relaxed load sees it.
        guard activeInjections.load(ordering: .relaxed) > 0 else { return nil }
        return injectedSlow(call, path)
    }

    @inline(never)
    private static func injectedSlow(_ call: String, _ path: String) -> Int32? {
        guard let raw = pthread_getspecific(slot) else { return nil }
        return Unmanaged<Box>.fromOpaque(raw).takeUnretainedValue().injector(call, path)
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

    /// Swaps the names `a` and `b` atomically (`renameat2` with
    /// `RENAME_EXCHANGE`; both must exist). -1 with `ENOSYS` where the C
    /// library has no `renameat2`, `EINVAL` where the file system cannot.
    static func exchange(_ a: String, _ b: String) -> Int32 {
        if let e = SystemFaults.injected("exchange", b) ?? SystemFaults.injected("rename", b) { errno = e; return -1 }
        guard let renameat2 = Self.renameat2 else { errno = ENOSYS; return -1 }
        return renameat2(AT_FDCWD, a, AT_FDCWD, b, 2 /* RENAME_EXCHANGE */)
    }

    /// glibc's `renameat2` (2.28), which the Swift Glibc module does not
    /// declare (it needs `_GNU_SOURCE`): looked up at run time.
    private static let renameat2 = CLibrary.function("renameat2", as: (@convention(c) (Int32, UnsafePointer<CChar>, Int32, UnsafePointer<CChar>, UInt32) -> Int32).self)

    static func lock(_ fd: Int32, _ operation: Int32, path: String) -> Int32 {
        if let e = SystemFaults.injected("flock", path) { errno = e; return -1 }
        return flock(fd, operation)
    }
}

/// `poll` with a timeout finer than `poll`'s whole milliseconds.
public enum Polling {
    /// Waits until one of `fds` is ready or `seconds` have passed (`ppoll`);
    /// returns what `poll` returns. Where the C library has no `ppoll`, it
    /// looks once and, if nothing is ready, sleeps `seconds` and looks again.
    public static func wait(_ fds: inout [pollfd], seconds: Double) -> Int32 {
        let whole = max(0, seconds)
        var timeout = timespec(tv_sec: Int(whole), tv_nsec: Int((whole - Double(Int(whole))) * 1e9))
        guard let ppoll else {
            let n = poll(&fds, nfds_t(fds.count), 0)
            if n != 0 { return n }
            nanosleep(&timeout, nil)
            return poll(&fds, nfds_t(fds.count), 0)
        }
        return fds.withUnsafeMutableBufferPointer { ppoll($0.baseAddress, nfds_t($0.count), &timeout, nil) }
    }

    /// glibc's `ppoll`, which the Swift Glibc module does not declare (it
    /// needs `_GNU_SOURCE`): looked up at run time.
    private static let ppoll = CLibrary.function("ppoll", as: (@convention(c) (UnsafeMutablePointer<pollfd>?, nfds_t, UnsafePointer<timespec>?, UnsafeRawPointer?) -> Int32).self)
}
