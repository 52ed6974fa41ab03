#if canImport(Glibc)
import Glibc
#endif
import AppHomeSystem
import Preferences

/// Whole-tree file operations: copying a bundle in, removing a home.
/// Every C call's failure becomes a ``SystemError`` right where it happens.
public enum TreeOperations {
    /// Copies the tree at `source` to `destination` (which must not exist)
    /// and makes the copy read-only.
    ///
    /// Regular files are copied byte for byte, directories recreated,
    /// symbolic links recreated as links with the same target. Permission
    /// bits are kept except the write bits (and set-id and sticky bits,
    /// which a bundle has no use for). Anything else (devices, FIFOs,
    /// sockets) is refused.
    ///
    /// - Returns: the number of file bytes copied.
    public static func copyReadOnly(_ source: String, to destination: String) throws -> Int {
        var st = stat()
        guard lstat(source, &st) == 0 else { throw SystemError("lstat", path: source, errno: errno) }
        let mode = mode_t(st.st_mode) & 0o555
        switch st.st_mode & S_IFMT {
        case S_IFDIR:
            try makeNewDirectory(destination)
            var total = 0
            // Names as bytes: one that is not UTF-8 is refused, shown escaped (never repaired).
            for name in try FileNames.entries(source).sorted() {
                total += try copyReadOnly(source + "/" + name, to: destination + "/" + name)
            }
            guard chmod(destination, mode) == 0 else { throw SystemError("chmod", path: destination, errno: errno) }
            return total
        case S_IFLNK:
            let target = try linkTarget(source)
            guard symlink(target, destination) == 0 else { throw SystemError("symlink", path: destination, errno: errno) }
            return 0
        case S_IFREG:
            return try copyFile(source, to: destination, mode: mode)
        default:
            throw ContainersError.unsupportedFileType(path: source)
        }
    }

    /// Copies the regular file `source` to the new file `destination`
    /// (created 0600 with `O_EXCL|O_NOFOLLOW`), passing every chunk to
    /// `observe`; then sets `mode` and, if given, the modification time,
    /// and `fsync`s it.
    ///
    /// - Returns: the number of bytes copied.
    public static func copyFile(_ source: String, to destination: String, mode: mode_t, modificationTime: timespec? = nil,
                         observe: ([UInt8]) -> Void = { _ in }) throws -> Int {
        // Opened so that it cannot block, and refused unless a regular file.
        guard let (input, _) = try FileSystem.openRegularFile(source, limit: Int.max, followLinks: false) else {
            throw SystemError("open", path: source, errno: ENOENT)
        }
        defer { close(input) }
        let output = open(destination, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard output >= 0 else { throw SystemError("create", path: destination, errno: errno) }
        defer { close(output) }
        var total = 0
        try readAll(input, path: source) { chunk in
            observe(chunk)
            try FileSystem.writeAll(output, chunk, path: destination)
            total += chunk.count
        }
        guard fchmod(output, mode) == 0 else { throw SystemError("chmod", path: destination, errno: errno) }
        if let modificationTime {
            // `UTIME_OMIT` (a macro Swift does not import) leaves the access time alone.
            var times = [timespec(tv_sec: 0, tv_nsec: (1 << 30) - 2), modificationTime]
            guard futimens(output, &times) == 0 else { throw SystemError("utimens", path: destination, errno: errno) }
        }
        guard fsync(output) == 0 else { throw SystemError("fsync", path: destination, errno: errno) }
        return total
    }

    /// Reads `fd` to its end in 1 MiB chunks.
    public static func readAll(_ fd: Int32, path: String, _ body: ([UInt8]) throws -> Void) throws {
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw SystemError("read", path: path, errno: errno)
            }
            if n == 0 { return }
            try body(n == buffer.count ? buffer : Array(buffer[0..<n]))
        }
    }

    /// Removes `path` and everything below it; a missing path is not an
    /// error. Read-only directories (an installed bundle) are made writable
    /// first. Symbolic links are removed, never followed, and no walk
    /// crosses one (see ``DirectoryTree``).
    public static func remove(_ path: String) throws {
        // Walked on directory descriptors, in AppHomeSystem.
        try DirectoryTree.remove(path)
    }

    /// Creates one directory with mode 0700 that must not exist yet (a new
    /// home, a new container): `EEXIST` is an error.
    public static func makeNewDirectory(_ path: String) throws {
        guard mkdir(path, 0o700) == 0 else { throw SystemError("mkdir", path: path, errno: errno) }
    }

    /// The target of the symbolic link at `path`, as written.
    public static func linkTarget(_ path: String) throws -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let n = readlink(path, &buffer, buffer.count - 1)
        guard n >= 0 else { throw SystemError("readlink", path: path, errno: errno) }
        return String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Creates one directory with mode 0700; an existing directory is fine.
    public static func makeDirectory(_ path: String) throws {
        if mkdir(path, 0o700) != 0 {
            if errno == EEXIST && FileSystem.isDirectory(path) { return }
            throw SystemError("mkdir", path: path, errno: errno)
        }
    }

    /// `rename(2)`, never a copy: fails with `EXDEV` rather than copying.
    public static func rename(_ from: String, to: String) throws {
        guard Glibc.rename(from, to) == 0 else { throw SystemError("rename", path: from, errno: errno) }
    }

    /// `fsync` of a directory, so renames and creations in it survive a crash.
    public static func syncDirectory(_ path: String) {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if fd >= 0 { _ = fsync(fd); close(fd) }
    }
}
