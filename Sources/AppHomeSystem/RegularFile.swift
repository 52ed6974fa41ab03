#if canImport(Glibc)
import Glibc
#endif

extension FileSystem {
    /// The largest file ``readFileIfPresent(_:)`` reads: 64 MiB.
    ///
    /// Every file a user or an app can place (domain files, settings
    /// bundles, the registry, backup manifests, keychain files) is read
    /// through it, so a link to `/dev/zero` or a runaway writer cannot make
    /// a reader (or prefsd) grow without bound. A real domain is far
    /// smaller: macOS's own `cfprefsd` refuses domains of a few MiB.
    public static let defaultReadLimit = 64 << 20

    /// The file's bytes, or `nil` when it does not exist.
    ///
    /// The same as ``readRegularFile(_:limit:followLinks:)`` with
    /// ``defaultReadLimit``, following a final symbolic link.
    public static func readFileIfPresent(_ path: String) throws(SystemError) -> [UInt8]? {
        try readRegularFile(path, limit: defaultReadLimit, followLinks: true)
    }

    /// Opens `path` for reading so that the open cannot block, and checks
    /// what it is before reading a byte.
    ///
    /// The open is `O_NONBLOCK|O_CLOEXEC` (plus `O_NOFOLLOW` when
    /// `followLinks` is false), so a FIFO or a device node returns at once;
    /// `fstat` then refuses anything that is not a regular file, and a file
    /// larger than `limit`, with an error naming the path. The non-blocking
    /// flag is cleared once the file is known to be regular.
    ///
    /// - Returns: the open descriptor (the caller closes it) and its
    ///   `stat`, or `nil` when nothing exists at `path`.
    /// - Throws: ``SystemError`` with a ``SystemError/detail`` saying what
    ///   the path is when it is not a regular file or is too large.
    public static func openRegularFile(_ path: String, limit: Int, followLinks: Bool) throws(SystemError) -> (fd: Int32, stat: stat)? {
        var flags = O_RDONLY | O_NONBLOCK | O_CLOEXEC
        if !followLinks { flags |= O_NOFOLLOW }
        let fd = Syscalls.open(path, flags)
        if fd < 0 {
            let code = errno
            if code == ENOENT { return nil }
            if code == ELOOP && !followLinks {
                throw SystemError("open", path: path, errno: code, detail: "is a symbolic link, which AppHome does not follow here")
            }
            throw SystemError("open", path: path, errno: code)
        }
        var st = stat()
        guard fstat(fd, &st) == 0 else {
            let code = errno
            close(fd)
            throw SystemError("stat", path: path, errno: code)
        }
        if st.st_mode & S_IFMT == S_IFDIR {
            close(fd)
            throw SystemError("read", path: path, errno: EISDIR)
        }
        guard st.st_mode & S_IFMT == S_IFREG else {
            close(fd)
            throw SystemError("open", path: path, errno: EINVAL, detail: "is \(kindDescription(st.st_mode)), not a regular file")
        }
        guard Int(st.st_size) <= limit else {
            close(fd)
            throw SystemError("read", path: path, errno: EFBIG, detail: "is \(st.st_size) bytes, over the limit of \(limit) bytes")
        }
        let current = fcntl(fd, F_GETFL)
        if current >= 0 { _ = fcntl(fd, F_SETFL, current & ~O_NONBLOCK) }
        return (fd, st)
    }

    /// The bytes of the regular file at `path`, or `nil` when it does not exist.
    ///
    /// Refuses, without blocking and before reading, anything that is not a
    /// regular file (a FIFO, a device such as `/dev/zero`, a socket, a
    /// directory) and a file larger than `limit`; a file that grows past
    /// `limit` while being read is refused too.
    ///
    /// - Parameters:
    ///   - path: the file.
    ///   - limit: the most bytes accepted.
    ///   - followLinks: whether a final symbolic link is followed (`false`
    ///     opens with `O_NOFOLLOW` and refuses the link).
    /// - Throws: ``SystemError`` naming `path`.
    public static func readRegularFile(_ path: String, limit: Int, followLinks: Bool) throws(SystemError) -> [UInt8]? {
        guard let (fd, st) = try openRegularFile(path, limit: limit, followLinks: followLinks) else { return nil }
        defer { close(fd) }
        return try readAll(fd, path: path, limit: limit, sizeHint: Int(st.st_size))
    }

    /// Everything left to read from `fd`, refusing more than `limit` bytes;
    /// `path` names the file in errors, `sizeHint` sizes the buffer.
    public static func readAll(_ fd: Int32, path: String, limit: Int, sizeHint: Int) throws(SystemError) -> [UInt8] {
        var result: [UInt8] = []
        result.reserveCapacity(min(sizeHint, limit))
        var buffer = [UInt8](repeating: 0, count: min(max(sizeHint + 1, 4096), 1 << 20))
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw SystemError("read", path: path, errno: errno)
            }
            if n == 0 { break }
            guard result.count + n <= limit else {
                throw SystemError("read", path: path, errno: EFBIG, detail: "grew over the limit of \(limit) bytes while being read")
            }
            result.append(contentsOf: buffer[0..<n])
        }
        return result
    }

    /// "a FIFO", "a character device", … for the file type bits of `mode`.
    public static func kindDescription(_ mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFREG: return "a regular file"
        case S_IFDIR: return "a directory"
        case S_IFLNK: return "a symbolic link"
        case S_IFIFO: return "a FIFO"
        case S_IFCHR: return "a character device"
        case S_IFBLK: return "a block device"
        case S_IFSOCK: return "a socket"
        default: return "an unknown kind of file"
        }
    }
}
