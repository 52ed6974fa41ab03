#if canImport(Glibc)
import Glibc
#endif
import AppHomeSystem
import PrefsProtocol

/// The socket prefsd listens on.
enum ListeningSocket {
    /// Creates the socket's directory (0700) and binds the socket (0600),
    /// replacing a stale socket file but never a live service.
    static func bind(_ path: String) throws(ServiceError) -> Int32 {
        let dir = FileSystem.parentDirectory(path)
        do { try FileSystem.makeDirectories(dir) } catch { throw .system(error) }
        var st = stat()
        guard stat(dir, &st) == 0 else { throw .system(SystemError("stat", path: dir, errno: errno)) }
        if st.st_uid != getuid() { throw .unsafeDirectory(dir, reason: "it belongs to another user") }
        if st.st_mode & 0o077 != 0 && chmod(dir, 0o700) != 0 {
            throw .unsafeDirectory(dir, reason: "it is open to other users and cannot be made 0700")
        }
        if FileSystem.exists(path) {
            if let fd = try? UnixSocket.connect(to: path, timeout: 1) {
                close(fd)
                throw .alreadyRunning(path)
            }
            // Only a dead service's socket is replaced, never another kind of file.
            var old = stat()
            guard lstat(path, &old) == 0, old.st_mode & S_IFMT == S_IFSOCK else {
                throw .unsafeDirectory(dir, reason: "\(path) exists and is not a socket")
            }
            unlink(path)
        }
        do { return try UnixSocket.listen(at: path) } catch { throw .system(error) }
    }
}

/// Why the service cannot start.
public enum ServiceError: Error, Equatable, Sendable, CustomStringConvertible {
    case alreadyRunning(String)
    case unsafeDirectory(String, reason: String)
    case system(SystemError)

    public var description: String {
        switch self {
        case .alreadyRunning(let p): return "another prefsd is already serving \(p)"
        case .unsafeDirectory(let d, let reason): return "refusing the socket directory \(d): \(reason)"
        case .system(let e): return e.description
        }
    }
}
