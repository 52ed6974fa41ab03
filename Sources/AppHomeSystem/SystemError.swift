#if canImport(Glibc)
import Glibc
#endif

/// An operating-system failure: the call that failed, the path it was
/// about, and `errno`.
public struct SystemError: Error, Equatable, Sendable, CustomStringConvertible {
    public var operation: String
    public var path: String
    public var errno: Int32
    /// AppHome's own reason, when the C library's text for `errno` would not
    /// say what is wrong (a FIFO where a file should be, a file over its
    /// size limit, a symbolic link where a directory should be).
    public var detail: String?

    public init(_ operation: String, path: String, errno: Int32, detail: String? = nil) {
        self.operation = operation; self.path = path; self.errno = errno; self.detail = detail
    }

    /// Why the call failed: ``detail`` when set, else the C library's text
    /// for the error number, e.g. "Permission denied".
    public var reason: String { detail ?? String(cString: strerror(errno)) }

    public var description: String { "\(operation) \(path): \(reason)" }
}
