#if canImport(Glibc)
import Glibc
#endif

/// A thread of its own for work that blocks (a poll loop, a read that
/// waits for notifications), so that it never holds one of Dispatch's or
/// Swift concurrency's few worker threads.
public enum DetachedThread {
    /// Runs `body` on a new detached thread.
    public static func start(_ body: @escaping @Sendable () -> Void) {
        final class Work { let body: @Sendable () -> Void; init(_ b: @escaping @Sendable () -> Void) { body = b } }
        let context = Unmanaged.passRetained(Work(body)).toOpaque()
        var thread = pthread_t()
        let rc = pthread_create(&thread, nil, { raw in
            let work = Unmanaged<AnyObject>.fromOpaque(raw!).takeRetainedValue() as! Work
            work.body()
            return nil
        }, context)
        if rc == 0 { pthread_detach(thread) } else { body() }
    }
}
