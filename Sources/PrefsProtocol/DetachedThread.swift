#if canImport(Glibc)
import Glibc
#endif
import AppHomeSystem

/// A thread of its own for work that blocks (a poll loop, a read that
/// waits for notifications), so that it never holds one of Dispatch's or
/// Swift concurrency's few worker threads.
public enum DetachedThread {
    /// Runs `body` on a new detached thread.
    ///
    /// - Returns: `false` when no thread could be made (`body` never runs).
    @discardableResult
    public static func start(_ body: @escaping @Sendable () -> Void) -> Bool {
        // 16 MiB: the plist codec recurses once per nesting level, up to
        // PlistValue.maximumDepth, which is tested on an 8 MiB main thread.
        guard let thread = Threads.spawn(stackSize: 16 << 20, body) else { return false }
        pthread_detach(thread)
        return true
    }
}
