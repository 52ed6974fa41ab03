#if canImport(Glibc)
import Glibc
#endif
import AppHomeSystem

/// Reading the keychain's own files: opened with `O_NOFOLLOW|O_NONBLOCK` (a
/// symbolic link is refused, a FIFO cannot block), and refused when another user owns them or may read
/// or write them, since AppHome writes them 0600.
enum PrivateFile {
    /// The file's bytes, or `nil` when it does not exist.
    static func read(_ path: String) throws(KeychainError) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        if fd < 0 {
            if errno == ENOENT { return nil }
            if errno == ELOOP { throw .corrupt(path: path, reason: "it is a symbolic link") }
            throw .system(SystemError("open", path: path, errno: errno))
        }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw .system(SystemError("stat", path: path, errno: errno)) }
        if st.st_mode & S_IFMT != S_IFREG { throw .corrupt(path: path, reason: "it is not a regular file") }
        if st.st_uid != getuid() { throw .corrupt(path: path, reason: "it belongs to another user") }
        if st.st_mode & 0o077 != 0 {
            throw .corrupt(path: path, reason: "other users may access it (mode \(String(st.st_mode & 0o777, radix: 8)), must be 600)")
        }
        // Read from the descriptor that was checked, never the path again.
        var result: [UInt8] = []
        result.reserveCapacity(Int(st.st_size))
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw .system(SystemError("read", path: path, errno: errno))
            }
            if n == 0 { break }
            result.append(contentsOf: chunk[0..<n])
        }
        return result
    }
}
