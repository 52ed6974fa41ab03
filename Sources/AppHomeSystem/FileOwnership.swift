#if canImport(Glibc)
import Glibc
#endif

/// Who owns a file and who may write it: what a reader of an
/// administrator's files checks before trusting them.
public struct FileOwnership: Sendable, Equatable {
    /// The owner's uid.
    public var owner: UInt32
    /// The permission bits (`st_mode & 0o7777`).
    public var permissions: UInt32

    public init(owner: UInt32, permissions: UInt32) {
        self.owner = owner
        self.permissions = permissions
    }

    /// Whether root owns it and neither its group nor others may write it.
    public var isRootControlled: Bool { owner == 0 && permissions & 0o022 == 0 }
}

extension FileSystem {
    /// The ownership of the directory at `path` (a link is followed), or
    /// `nil` when nothing is there.
    ///
    /// - Throws: ``SystemError`` when it cannot be examined or is not a directory.
    public static func directoryOwnership(_ path: String) throws(SystemError) -> FileOwnership? {
        var st = stat()
        if stat(path, &st) != 0 {
            if errno == ENOENT { return nil }
            throw SystemError("stat", path: path, errno: errno)
        }
        guard (st.st_mode & S_IFMT) == S_IFDIR else { throw SystemError("stat", path: path, errno: ENOTDIR) }
        return FileOwnership(owner: st.st_uid, permissions: st.st_mode & 0o7777)
    }

    /// The bytes of the regular file at `path` with its ownership, read from
    /// one descriptor (so the two belong to the same file), or `nil` when it
    /// does not exist. A final symbolic link is not followed.
    ///
    /// - Throws: ``SystemError`` when it cannot be opened or read, is a link
    ///   (`ELOOP`) or is not a regular file.
    public static func readFileWithOwnership(_ path: String) throws(SystemError) -> (bytes: [UInt8], ownership: FileOwnership)? {
        let fd = Syscalls.open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        if fd < 0 {
            if errno == ENOENT { return nil }
            throw SystemError("open", path: path, errno: errno)
        }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw SystemError("stat", path: path, errno: errno) }
        guard (st.st_mode & S_IFMT) == S_IFREG else {
            throw SystemError("read", path: path, errno: EINVAL, detail: "is \(FileSystem.kindDescription(st.st_mode)), not a regular file")
        }
        let bytes = try FileSystem.readAll(fd, path: path, limit: FileSystem.defaultReadLimit, sizeHint: Int(st.st_size))
        return (bytes, FileOwnership(owner: st.st_uid, permissions: st.st_mode & 0o7777))
    }
}
