#if canImport(Glibc)
import Glibc
#endif

/// Walks of a directory tree that delete or measure, done on directory
/// file descriptors so that they never cross a symbolic link.
///
/// Every directory is opened with `openat(…, O_NOFOLLOW|O_DIRECTORY)`
/// relative to its parent's descriptor, every entry examined with
/// `fstatat(…, AT_SYMLINK_NOFOLLOW)` and removed with `unlinkat`. An app
/// that swaps a directory inside its home for a link to `~/important`
/// while a walk runs can at worst make the walk fail: the link itself is
/// removed (or refused at the top), never what it points to.
public enum DirectoryTree {
    /// Opens the directory at `path` without following a symbolic link at
    /// or below `base`.
    ///
    /// `base` (a prefix of `path`, e.g. the AppHome root) is opened as
    /// given; every component after it is opened with `openat(…,
    /// O_NOFOLLOW|O_DIRECTORY)`, so a `Library` replaced by a link cannot
    /// lead a walk of `Library/Caches` elsewhere. Without `base`, only the
    /// final component is protected.
    ///
    /// - Returns: the descriptor, or `nil` when nothing exists at `path`.
    /// - Throws: ``SystemError``; a symbolic link gives `ELOOP` and a
    ///   ``SystemError/detail`` naming the link.
    public static func openDirectory(_ path: String, below base: String? = nil) throws(SystemError) -> Int32? {
        let path = Paths.trimmingTrailingSlashes(path)
        if let base = base.map(Paths.trimmingTrailingSlashes), path.hasPrefix(base + "/") {
            let bfd = Syscalls.open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            guard bfd >= 0 else {
                if errno == ENOENT { return nil }
                throw SystemError("open", path: base, errno: errno)
            }
            var fd = bfd
            var walked = base
            for component in path.dropFirst(base.count + 1).split(separator: "/") {
                walked += "/" + component
                let next = openat(fd, String(component), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
                let code = errno
                close(fd)
                guard next >= 0 else {
                    if code == ENOENT { return nil }
                    throw refusal(walked, errno: code)
                }
                fd = next
            }
            return fd
        }
        let fd = Syscalls.open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        if fd >= 0 { return fd }
        let code = errno
        if code == ENOENT { return nil }
        throw refusal(path, errno: code)
    }

    /// Opens the file at `path`, below the directory `base`, with `flags`
    /// (`O_NOFOLLOW` and `O_CLOEXEC` added), following no symbolic link
    /// below `base`: neither a directory on the way nor the file itself
    /// (a tree someone else wrote, such as a restic snapshot, cannot lead
    /// a read outside it).
    ///
    /// - Returns: the descriptor, or `nil` when nothing exists at `path`.
    /// - Throws: ``SystemError``; a symbolic link on the way gives `ELOOP`
    ///   and a ``SystemError/detail`` naming it (``isLinkRefusal(_:)``).
    public static func openFile(_ path: String, below base: String, flags: Int32) throws(SystemError) -> Int32? {
        let path = Paths.trimmingTrailingSlashes(path)
        let parent = FileSystem.parentDirectory(path)
        guard let dfd = try openDirectory(parent, below: parent == Paths.trimmingTrailingSlashes(base) ? nil : base) else { return nil }
        defer { close(dfd) }
        while true {
            let fd = openat(dfd, FileSystem.lastComponent(path), flags | O_NOFOLLOW | O_CLOEXEC)
            if fd >= 0 { return fd }
            if errno == EINTR { continue }
            if errno == ENOENT { return nil }
            throw refusal(path, errno: errno)
        }
    }

    /// Whether `error` is the refusal of a symbolic link where a directory
    /// should be (see ``openDirectory(_:below:)``).
    public static func isLinkRefusal(_ error: SystemError) -> Bool { error.errno == ELOOP && error.detail != nil }

    /// Whether `path` is a symbolic link (not followed).
    public static func isSymbolicLink(_ path: String) -> Bool {
        var st = stat()
        return lstat(path, &st) == 0 && st.st_mode & S_IFMT == S_IFLNK
    }

    /// Whether `path` is a directory itself, not a symbolic link to one.
    public static func isDirectoryNotLink(_ path: String) -> Bool {
        var st = stat()
        return lstat(path, &st) == 0 && st.st_mode & S_IFMT == S_IFDIR
    }

    /// Removes everything inside the directory `path`, leaving it empty.
    ///
    /// A missing directory is empty. Read-only directories inside are made
    /// writable first; links inside are removed, never followed.
    ///
    /// - Returns: the bytes of the regular files removed.
    /// - Throws: ``SystemError``; when `path` itself is a symbolic link
    ///   nothing is removed and the error says so.
    @discardableResult
    public static func removeContents(of path: String, below base: String? = nil) throws(SystemError) -> Int {
        guard let fd = try openDirectory(path, below: base) else { return 0 }
        defer { close(fd) }
        let freed = try removeContents(fd, path: path)
        _ = fsync(fd)
        return freed
    }

    /// Removes `path` and everything below it; a missing path is not an
    /// error, and a symbolic link is removed, never followed.
    public static func remove(_ path: String) throws(SystemError) {
        let trimmed = Paths.trimmingTrailingSlashes(path)
        let parent = FileSystem.parentDirectory(trimmed)
        let name = FileSystem.lastComponent(trimmed)
        let pfd = Syscalls.open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard pfd >= 0 else {
            if errno == ENOENT { return }
            throw SystemError("open", path: parent, errno: errno)
        }
        defer { close(pfd) }
        try removeEntry(pfd, Array(name.utf8), path: trimmed)
    }

    /// The total size of the regular files at or below `path`, links not followed.
    public static func fileBytes(_ path: String) throws(SystemError) -> Int {
        var st = stat()
        guard lstat(path, &st) == 0 else {
            if errno == ENOENT { return 0 }
            throw SystemError("lstat", path: path, errno: errno)
        }
        switch st.st_mode & S_IFMT {
        case S_IFREG: return Int(st.st_size)
        case S_IFDIR:
            guard let fd = try openDirectory(path) else { return 0 }
            defer { close(fd) }
            return try bytes(fd, path: path)
        default: return 0
        }
    }

    /// The newest modification time (seconds since 1970) of anything below
    /// the directory `path`, not counting the directory itself; `nil` when
    /// it is empty or missing. Links are not followed.
    public static func newestModification(inside path: String, below base: String? = nil) throws(SystemError) -> Double? {
        guard let fd = try openDirectory(path, below: base) else { return nil }
        defer { close(fd) }
        return try newest(fd, path: path)
    }

    /// The names in the open directory `fd` (without `.` and `..`).
    public static func entries(_ fd: Int32, path: String) throws(SystemError) -> [String] {
        let copy = dup(fd)
        guard copy >= 0 else { throw SystemError("dup", path: path, errno: errno) }
        guard let dir = fdopendir(copy) else {
            let code = errno
            close(copy)
            throw SystemError("opendir", path: path, errno: code)
        }
        defer { closedir(dir) }
        rewinddir(dir)
        return FileSystem.names(in: dir)
    }

    // MARK: - Walks on descriptors

    private static func refusal(_ path: String, errno code: Int32) -> SystemError {
        if (code == ELOOP || code == ENOTDIR) && isSymbolicLink(path) {
            return SystemError("open", path: path, errno: ELOOP, detail: "is a symbolic link, not a directory; AppHome does not follow it")
        }
        return SystemError("open", path: path, errno: code)
    }

    private static func lstatAt(_ dfd: Int32, _ name: String, path: String) throws(SystemError) -> stat? {
        var st = stat()
        guard fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 else {
            if errno == ENOENT { return nil }
            throw SystemError("lstat", path: path, errno: errno)
        }
        return st
    }

    /// `lstat` of the entry named by the NUL-terminated bytes `name` (any bytes, not only UTF-8).
    private static func lstatAt(_ dfd: Int32, _ name: [CChar], path: String) throws(SystemError) -> stat? {
        var st = stat()
        guard fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 else {
            if errno == ENOENT { return nil }
            throw SystemError("lstat", path: path, errno: errno)
        }
        return st
    }

    private static func openChild(_ dfd: Int32, _ name: String, path: String) throws(SystemError) -> Int32 {
        while true {
            let fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            if fd >= 0 { return fd }
            if errno == EINTR { continue }
            throw SystemError("open", path: path, errno: errno)
        }
    }

    /// Names are taken as bytes: a name that is not UTF-8 is removed like
    /// any other (read as text, it would be repaired into a name that is not there).
    private static func removeContents(_ fd: Int32, path: String) throws(SystemError) -> Int {
        var freed = 0
        for name in try FileNames.rawEntries(directory: fd, path: path) {
            let child = path + "/" + FileNames.escaped(name)
            if let st = try lstatAt(fd, name.map { CChar(bitPattern: $0) } + [0], path: child), st.st_mode & S_IFMT == S_IFREG {
                freed += Int(st.st_size)
            }
            freed += try removeEntry(fd, name, path: child)
        }
        return freed
    }

    /// Removes the entry `name` of the open directory `dfd`.
    ///
    /// - Returns: the bytes of regular files removed *below* it (a
    ///   directory's contents).
    @discardableResult
    private static func removeEntry(_ dfd: Int32, _ raw: [UInt8], path: String) throws(SystemError) -> Int {
        let cName = raw.map { CChar(bitPattern: $0) } + [0]
        guard let st = try lstatAt(dfd, cName, path: path) else { return 0 }
        var freed = 0
        if st.st_mode & S_IFMT == S_IFDIR {
            var fd: Int32
            repeat { fd = openat(dfd, cName, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) } while fd < 0 && errno == EINTR
            guard fd >= 0 else { throw SystemError("open", path: path, errno: errno) }
            do {
                defer { close(fd) }
                if mode_t(st.st_mode) & 0o700 != 0o700 {
                    guard fchmod(fd, 0o700) == 0 else { throw SystemError("chmod", path: path, errno: errno) }
                }
                freed = try removeContents(fd, path: path)
            }
            guard unlinkat(dfd, cName, AT_REMOVEDIR) == 0 || errno == ENOENT else {
                throw SystemError("rmdir", path: path, errno: errno)
            }
        } else {
            if let e = SystemFaults.injected("unlink", path) { throw SystemError("unlink", path: path, errno: e) }
            guard unlinkat(dfd, cName, 0) == 0 || errno == ENOENT else {
                throw SystemError("unlink", path: path, errno: errno)
            }
        }
        return freed
    }

    private static func bytes(_ fd: Int32, path: String) throws(SystemError) -> Int {
        var total = 0
        for name in try entries(fd, path: path) {
            let child = path + "/" + name
            guard let st = try lstatAt(fd, name, path: child) else { continue }
            switch st.st_mode & S_IFMT {
            case S_IFREG: total += Int(st.st_size)
            case S_IFDIR:
                let sub = try openChild(fd, name, path: child)
                defer { close(sub) }
                total += try bytes(sub, path: child)
            default: break
            }
        }
        return total
    }

    private static func newest(_ fd: Int32, path: String) throws(SystemError) -> Double? {
        var newest: Double?
        for name in try entries(fd, path: path) {
            let child = path + "/" + name
            guard let st = try lstatAt(fd, name, path: child) else { continue }
            let time = Double(st.st_mtim.tv_sec) + Double(st.st_mtim.tv_nsec) / 1e9
            newest = max(newest ?? time, time)
            if st.st_mode & S_IFMT == S_IFDIR {
                let sub = try openChild(fd, name, path: child)
                defer { close(sub) }
                if let inner = try self.newest(sub, path: child) { newest = max(newest!, inner) }
            }
        }
        return newest
    }
}
