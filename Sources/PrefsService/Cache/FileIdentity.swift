#if canImport(Glibc)
import Glibc
#endif

/// What identifies one version of a file: every replacement is a rename of
/// a new inode, so a different inode, size or change time means another
/// writer replaced (or removed) the file.
struct FileIdentity: Equatable {
    var device: UInt64
    var inode: UInt64
    var size: Int64
    var changeSeconds: Int
    var changeNanoseconds: Int

    /// The identity of the file at `path`, or `nil` when there is none.
    static func of(_ path: String) -> FileIdentity? {
        var st = stat()
        guard stat(path, &st) == 0 else { return nil }
        return FileIdentity(device: UInt64(st.st_dev), inode: UInt64(st.st_ino), size: Int64(st.st_size),
                            changeSeconds: st.st_ctim.tv_sec, changeNanoseconds: st.st_ctim.tv_nsec)
    }
}
