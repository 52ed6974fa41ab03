#if canImport(Glibc)
import Glibc
#endif

/// The few file-system calls the store makes, each wrapped so that a C
/// return code becomes a typed ``SystemError`` right here.
///
/// Every write that replaces a file goes through ``writeAtomically(_:to:)``:
/// a temporary file created 0600 with `O_EXCL|O_NOFOLLOW` in the same
/// directory, written, `fsync`ed, renamed over the target, then the
/// directory `fsync`ed. Foundation's atomic write is not used because it
/// leaves files 0644 on Linux.
public enum FileSystem {
    /// `path` without trailing slashes (see ``Paths/trimmingTrailingSlashes(_:)``).
    public static func trimmingTrailingSlashes(_ path: String) -> String { Paths.trimmingTrailingSlashes(path) }

    /// Whether something exists at `path` (without following a final link).
    public static func exists(_ path: String) -> Bool {
        var st = stat()
        return lstat(path, &st) == 0
    }

    /// Whether `path` is a directory.
    public static func isDirectory(_ path: String) -> Bool {
        var st = stat()
        return stat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR
    }

    /// Creates `path` and its missing parents with mode 0700.
    public static func makeDirectories(_ path: String) throws(SystemError) {
        if isDirectory(path) { return }
        let parent = parentDirectory(path)
        if parent != path && !parent.isEmpty { try makeDirectories(parent) }
        if Syscalls.mkdir(path, 0o700) != 0 && errno != EEXIST {
            throw SystemError("mkdir", path: path, errno: errno)
        }
    }

    /// The directory part of `path` (`/` for a top-level entry, `.` for a bare name).
    public static func parentDirectory(_ path: String) -> String {
        let bytes = path.utf8
        guard let slash = bytes.lastIndex(of: UInt8(ascii: "/")) else { return "." }
        if slash == bytes.startIndex { return "/" }
        return String(Substring(bytes[..<slash]))
    }

    /// The last component of `path`. Both split at the last `/` byte, as the
    /// kernel does: a `/` followed by a combining mark is one `Character`,
    /// which a search of `Character`s would not find.
    public static func lastComponent(_ path: String) -> String {
        let bytes = path.utf8
        guard let slash = bytes.lastIndex(of: UInt8(ascii: "/")) else { return path }
        return String(Substring(bytes[bytes.index(after: slash)...]))
    }

    /// Names in a directory (without `.` and `..`); empty when it does not exist.
    public static func directoryEntries(_ path: String) throws(SystemError) -> [String] {
        guard let dir = opendir(path) else {
            if errno == ENOENT || errno == ENOTDIR { return [] }
            throw SystemError("opendir", path: path, errno: errno)
        }
        defer { closedir(dir) }
        return names(in: dir)
    }

    /// The names `readdir` gives for the open directory stream `dir`,
    /// without `.` and `..`.
    static func names(in dir: OpaquePointer) -> [String] {
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafePointer(to: entry.pointee.d_name) { ptr in
                ptr.withMemoryRebound(to: CChar.self, capacity: 256) { String(cString: $0) }
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// Replaces `path` with `bytes` atomically and durably (mode 0600).
    ///
    /// A crash at any moment leaves either the old file or the new one,
    /// never a partial file; a temporary file may be left behind, named
    /// `.<name>.<random>.tmp` in the same directory.
    public static func writeAtomically(_ bytes: [UInt8], to path: String) throws(SystemError) {
        try writeAtomically(bytes, to: path, mode: nil)
    }

    /// Replaces `path` with `bytes` atomically and durably, keeping the
    /// permission bits of the file it replaces (a new file gets
    /// `0666 & ~umask`, as a text editor would make it): for tools that
    /// edit a user's own files in place, such as `plutil`.
    public static func writeAtomicallyKeepingMode(_ bytes: [UInt8], to path: String) throws(SystemError) {
        var st = stat()
        let mode: mode_t
        if stat(path, &st) == 0 {
            mode = st.st_mode & 0o7777
        } else {
            let mask = umask(0o022)
            umask(mask)
            mode = 0o666 & ~mask
        }
        removeStaleTemporaries(of: path)
        try writeAtomically(bytes, to: path, mode: mode)
    }

    /// How old a temporary must be before ``removeStaleTemporaries(of:)`` may take
    /// it for a dead writer's (a live writer locks it a moment after creating it).
    public static let staleTemporaryAge: Int = 2

    /// Removes the temporaries a killed ``writeAtomically(_:to:)`` of `path` left
    /// beside it (`.<name>.<8 letters or digits>.tmp`): only those whose writer is
    /// dead. A writer holds an exclusive `flock` on its temporary from just after
    /// creating it until it is renamed or removed, and the kernel drops the lock
    /// when the writer dies; so a temporary older than ``staleTemporaryAge``
    /// seconds that can be locked is a dead writer's. Anything else (another
    /// file's temporaries, other names, links, a live writer's) is left alone.
    ///
    /// - Returns: the names removed.
    @discardableResult
    public static func removeStaleTemporaries(of path: String) -> [String] {
        let dir = parentDirectory(path)
        let prefix = Array(("." + lastComponent(path) + ".").utf8), suffix = Array(".tmp".utf8)
        guard let names = try? FileNames.rawEntries(dir) else { return [] }
        var removed: [String] = []
        for raw in names where raw.count == prefix.count + 8 + suffix.count && raw.starts(with: prefix) && raw.suffix(4).elementsEqual(suffix) {
            let middle = raw[prefix.count..<(prefix.count + 8)]
            guard middle.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A) }),
                  let name = FileNames.text(raw) else { continue }
            let candidate = dir + "/" + name
            let fd = Syscalls.open(candidate, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
            guard fd >= 0 else { continue }
            defer { close(fd) }
            var st = stat()
            guard fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG, st.st_uid == geteuid(),
                  Int(time(nil)) - Int(st.st_mtim.tv_sec) >= staleTemporaryAge,
                  Syscalls.lock(fd, LOCK_EX | LOCK_NB, path: candidate) == 0 else { continue }
            if Syscalls.unlink(candidate) == 0 { removed.append(name) }
        }
        return removed
    }

    private static func writeAtomically(_ bytes: [UInt8], to path: String, mode: mode_t?) throws(SystemError) {
        let dir = parentDirectory(path)
        let name = lastComponent(path)
        var fd: Int32 = -1
        var tempPath = ""
        for _ in 0..<16 {
            tempPath = dir + "/." + name + "." + Random.alphanumeric(8) + ".tmp"
            fd = Syscalls.open(tempPath, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
            if fd >= 0 || errno != EEXIST { break }
        }
        guard fd >= 0 else { throw SystemError("create", path: tempPath, errno: errno) }
        // Held until the rename: a temporary nobody holds is a dead writer's (removeStaleTemporaries).
        _ = flock(fd, LOCK_EX | LOCK_NB)
        var ok = false
        defer {
            if !ok { _ = Syscalls.unlink(tempPath) }
            close(fd)
        }
        try writeAll(fd, bytes, path: tempPath)
        if let mode, fchmod(fd, mode) != 0 { throw SystemError("chmod", path: tempPath, errno: errno) }
        guard Syscalls.fsync(fd, path: tempPath) == 0 else { throw SystemError("fsync", path: tempPath, errno: errno) }
        guard Syscalls.rename(tempPath, path) == 0 else { throw SystemError("rename", path: path, errno: errno) }
        ok = true
        syncDirectory(dir)
    }

    /// Writes all of `bytes` to `fd`, retrying short writes and `EINTR`;
    /// `path` names the file in errors.
    public static func writeAll(_ fd: Int32, _ bytes: [UInt8], path: String) throws(SystemError) {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { Syscalls.write(fd, $0.baseAddress! + offset, $0.count - offset, path: path) }
            if n < 0 {
                if errno == EINTR { continue }
                throw SystemError("write", path: path, errno: errno)
            }
            offset += n
        }
    }

    /// Creates the new file `path` (`O_EXCL|O_NOFOLLOW`, 0600) holding
    /// `bytes`, `fsync`ed; a file left half-written by a failure is removed.
    public static func writeNewFile(_ bytes: [UInt8], to path: String) throws(SystemError) {
        let fd = Syscalls.open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw SystemError("create", path: path, errno: errno) }
        var ok = false
        defer {
            close(fd)
            if !ok { _ = Syscalls.unlink(path) }
        }
        try writeAll(fd, bytes, path: path)
        guard Syscalls.fsync(fd, path: path) == 0 else { throw SystemError("fsync", path: path, errno: errno) }
        ok = true
    }

    /// Removes `path` durably; a missing file is not an error.
    public static func removeFile(_ path: String) throws(SystemError) {
        if Syscalls.unlink(path) != 0 && errno != ENOENT { throw SystemError("unlink", path: path, errno: errno) }
        syncDirectory(parentDirectory(path))
    }

    /// Renames durably.
    public static func move(_ from: String, to: String) throws(SystemError) {
        guard Syscalls.rename(from, to) == 0 else { throw SystemError("rename", path: from, errno: errno) }
        syncDirectory(parentDirectory(to))
    }

    public static func syncDirectory(_ dir: String) {
        let dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if dfd >= 0 { _ = fsync(dfd); close(dfd) }
    }

    /// Random bytes from the system generator (the kernel's `getrandom`).
    public static func randomBytes(_ count: Int) -> [UInt8] { Random.bytes(count) }
}

