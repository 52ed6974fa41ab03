#if canImport(Glibc)
import Glibc
#endif

/// Threads of AppHome's own: plain POSIX threads, so that the libraries under
/// the static commands need neither Dispatch nor Foundation for them, and
/// blocking work never holds one of Dispatch's or Swift concurrency's few
/// worker threads. The one place that calls `pthread_create`.
public enum Threads {
    /// The processors online, at least 1.
    public static var processors: Int { max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN))) }

    /// Starts `body` on a new joinable thread with `stackSize` bytes of
    /// stack (the system's default when `nil`).
    ///
    /// - Returns: the thread, for `pthread_join` or `pthread_detach`; `nil`
    ///   when none could be made (then `body` never runs).
    public static func spawn(stackSize: Int? = nil, _ body: @escaping @Sendable () -> Void) -> pthread_t? {
        final class Start {
            let body: @Sendable () -> Void
            init(_ body: @escaping @Sendable () -> Void) { self.body = body }
        }
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        if let stackSize { pthread_attr_setstacksize(&attributes, stackSize) }
        let context = Unmanaged.passRetained(Start(body)).toOpaque()
        var thread = pthread_t()
        let rc = pthread_create(&thread, &attributes, { raw in
            Unmanaged<Start>.fromOpaque(raw!).takeRetainedValue().body()
            return nil
        }, context)
        guard rc == 0 else {
            Unmanaged<Start>.fromOpaque(context).release()
            return nil
        }
        return thread
    }

    /// Calls `body(worker)` for `worker` in `0..<threads`, `0` on the
    /// calling thread and the others on new threads, and returns when all
    /// have returned. A thread that cannot be made is not: its `worker`
    /// number is never called, so bodies should share their work through a
    /// common counter rather than split it by number.
    public static func parallel(_ threads: Int, _ body: @escaping @Sendable (Int) -> Void) {
        var started: [pthread_t] = []
        if threads > 1 {
            for worker in 1..<threads {
                if let thread = spawn({ body(worker) }) { started.append(thread) }
            }
        }
        body(0)
        for thread in started { pthread_join(thread, nil) }
    }
}
