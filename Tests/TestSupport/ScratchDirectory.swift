#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization

/// Temporary directories for tests: the one helper every test target uses
/// instead of its own copy of `mkdtemp` and recursive removal.
public enum ScratchDirectory {
    /// A new, empty directory (0700) under the system's temporary directory,
    /// named `<prefix>-XXXXXX`.
    public static func make(_ prefix: String) -> String {
        var template = Array((NSTemporaryDirectory() as NSString).appendingPathComponent(prefix + "-XXXXXX").utf8CString)
        return template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
    }

    /// Removes `path` and everything below it, read-only entries too (an
    /// installed bundle is read-only), never following a symbolic link out.
    public static func remove(_ path: String) {
        let fm = FileManager.default
        if let entries = fm.enumerator(atPath: path) {
            for case let relative as String in entries {
                var st = stat()
                let full = path + "/" + relative
                if lstat(full, &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR { chmod(full, 0o700) }
            }
        }
        chmod(path, 0o700)
        try? fm.removeItem(atPath: path)
    }

    /// A new directory (``make(_:)``) for a fixture that lives as long as
    /// the test process (a `static let`): removed when the process exits.
    public static func makeForProcess(_ prefix: String) -> String {
        let dir = make(prefix)
        forProcess.withLock { state in
            if !state.registered {
                state.registered = true
                atexit { for dir in ScratchDirectory.forProcess.withLock({ $0.paths }) { ScratchDirectory.remove(dir) } }
            }
            state.paths.append(dir)
        }
        return dir
    }

    private struct ForProcess: Sendable {
        var registered = false
        var paths: [String] = []
    }
    private static let forProcess = Mutex(ForProcess())

    /// Runs `body` with a new directory (``make(_:)``), removed after it.
    public static func with<T>(_ prefix: String, _ body: (String) throws -> T) rethrows -> T {
        let dir = make(prefix)
        defer { remove(dir) }
        return try body(dir)
    }
}
