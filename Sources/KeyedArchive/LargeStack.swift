#if canImport(Glibc)
import Glibc
#endif

/// Runs work that recurses once per object of an archive on a thread of its own
/// with a stack large enough for ``KeyedArchive/maximumDepth`` levels in any
/// build, so that the depth bound (not the caller's stack: 512 KiB on a
/// Swift concurrency thread, 8 MiB on a main thread) decides.
enum LargeStack {
    static let size = 256 << 20

    private final class Box {
        let body: () -> Void
        init(_ body: @escaping () -> Void) { self.body = body }
    }

    static func run<T>(_ body: () -> T) -> T {
        withoutActuallyEscaping(body) { escapable in
            var result: T?
            let box = Box { result = escapable() }
            var attributes = pthread_attr_t()
            pthread_attr_init(&attributes)
            defer { pthread_attr_destroy(&attributes) }
            pthread_attr_setstacksize(&attributes, size)
            var thread = pthread_t()
            let context = Unmanaged.passRetained(box).toOpaque()
            let created = pthread_create(&thread, &attributes, { raw in
                let box = Unmanaged<Box>.fromOpaque(raw!).takeRetainedValue()
                box.body()
                return nil
            }, context)
            if created != 0 {
                // No thread (resources exhausted): run here; the depth bound still holds on a main thread.
                Unmanaged<Box>.fromOpaque(context).release()
                return escapable()
            }
            pthread_join(thread, nil)
            return result!
        }
    }

    /// `body`'s result or typed error, computed on a large stack.
    static func run<T>(_ body: () throws(KeyedArchiveError) -> T) throws(KeyedArchiveError) -> T {
        let result: Result<T, KeyedArchiveError> = run { () -> Result<T, KeyedArchiveError> in
            do throws(KeyedArchiveError) { return .success(try body()) } catch { return .failure(error) }
        }
        return try result.get()
    }
}
