#if canImport(Glibc)
import Glibc
#endif

/// Runs one body on several threads at once and waits for them all: plain
/// POSIX threads, so the libraries under the static commands need neither
/// Dispatch nor Foundation for it.
public enum ParallelWork {
    /// The processors online, at least 1.
    public static var processors: Int { max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN))) }

    /// Calls `body(worker)` for `worker` in `0..<threads`, `0` on the
    /// calling thread and the others on new threads, and returns when all
    /// have returned. A thread that cannot be made is not: its `worker`
    /// number is never called, so bodies should share their work through a
    /// common counter rather than split it by number.
    public static func run(threads: Int, _ body: @escaping @Sendable (Int) -> Void) {
        final class Start: @unchecked Sendable {
            let worker: Int
            let body: @Sendable (Int) -> Void
            init(_ worker: Int, _ body: @escaping @Sendable (Int) -> Void) { self.worker = worker; self.body = body }
        }
        var started: [pthread_t] = []
        if threads > 1 {
            for worker in 1..<threads {
                let context = Unmanaged.passRetained(Start(worker, body)).toOpaque()
                var thread = pthread_t()
                let rc = pthread_create(&thread, nil, { raw in
                    let start = Unmanaged<Start>.fromOpaque(raw!).takeRetainedValue()
                    start.body(start.worker)
                    return nil
                }, context)
                if rc == 0 { started.append(thread) } else { Unmanaged<Start>.fromOpaque(context).release() }
            }
        }
        body(0)
        for thread in started { pthread_join(thread, nil) }
    }
}
