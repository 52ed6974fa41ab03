#if canImport(Glibc)
import Glibc
#endif

/// What `stat` says of one version of a file: which file it is (device,
/// inode) and when its contents or metadata last changed. Every atomic
/// replacement is a rename of a new inode, so a different value means
/// another writer replaced, changed or removed the file; two equal values
/// around a read mean no write happened during it (given a read that began
/// after the modification time).
public struct FileStatus: Equatable, Sendable {
    public var device: UInt64
    public var inode: UInt64
    public var size: Int
    /// Nanoseconds since 1970 of the last change of contents (`st_mtim`).
    public var modificationTime: Int64
    /// Nanoseconds since 1970 of the last change of contents or metadata (`st_ctim`).
    public var changeTime: Int64

    public init(_ st: stat) {
        device = UInt64(st.st_dev)
        inode = UInt64(st.st_ino)
        size = Int(st.st_size)
        modificationTime = Int64(st.st_mtim.tv_sec) * 1_000_000_000 + Int64(st.st_mtim.tv_nsec)
        changeTime = Int64(st.st_ctim.tv_sec) * 1_000_000_000 + Int64(st.st_ctim.tv_nsec)
    }

    /// The status of the file at `path` (following a final link), or `nil` when there is none.
    public static func of(_ path: String) -> FileStatus? {
        var st = stat()
        guard stat(path, &st) == 0 else { return nil }
        return FileStatus(st)
    }
}
