#if canImport(Glibc)
import Glibc
#endif

/// A thread of its own for work that blocks (a poll loop, a read that
/// waits for notifications), so that it never holds one of Dispatch's or
/// Swift concurrency's few worker threads.
public enum DetachedThread {
    /// Runs `body` on a new detached thread.
    ///
    /// - Returns: `false` when no thread could be made (`body` never runs).
    @discardableResult
    public static func start(_ body: @escaping @Sendable () -> Void) -> Bool {
        final class Work { let body: @Sendable () -> Void; init(_ b: @escaping @Sendable () -> Void) { body = b } }
        let context = Unmanaged.passRetained(Work(body)).toOpaque()
        var thread = pthread_t()
        // 16 MiB: the plist codec recurses once per nesting level, up to
        // PlistValue.maximumDepth, which is tested on an 8 MiB main thread.
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setstacksize(&attributes, 16 << 20)
        let rc = pthread_create(&thread, &attributes, { raw in
            let work = Unmanaged<AnyObject>.fromOpaque(raw!).takeRetainedValue() as! Work
            work.body()
            return nil
        }, context)
        guard rc == 0 else {
            Unmanaged<AnyObject>.fromOpaque(context).release()
            return false
        }
        pthread_detach(thread)
        return true
    }
}
