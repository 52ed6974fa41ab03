#if canImport(Glibc)
import Glibc
#endif

/// An operating-system failure: the call that failed, the path it was
/// about, and `errno`.
public struct SystemError: Error, Equatable, Sendable, CustomStringConvertible {
    public var operation: String
    public var path: String
    public var errno: Int32

    public init(_ operation: String, path: String, errno: Int32) {
        self.operation = operation; self.path = path; self.errno = errno
    }

    /// The C library's text for the error number, e.g. "Permission denied".
    public var reason: String { String(cString: strerror(errno)) }

    public var description: String { "\(operation) \(path): \(reason)" }
}
