#if canImport(Glibc)
import Glibc
#endif

/// Atomic, durable replacement of files that one long-running writer
/// replaces again and again (prefsd's domains), re-using the inode each
/// replacement frees instead of making a new one each time.
///
/// ``FileSystem/writeAtomically(_:to:)`` creates a temporary file for each
/// write and renames it over the target, which frees the target's inode. On
/// ext4 that costs more than the write itself in a storm: a new inode's
/// creation skips every inode freed in the last minutes (`recently_deleted`
/// when the file system has no journal), so each replacement is slower than
/// the last, and a new file's first `fsync` also writes its inode and its
/// directory. Here the target's old inode is kept under a hidden name,
/// `.<name>.spare`, and the next write of that target goes into it:
///
/// 1. the spare is used only if its name still is the inode this object
///    holds, a regular file of one link, and nobody else has it open (a
///    write lease can be taken: a reader that opened the target before the
///    last replacement still reads the old contents whole; if one does, the
///    spare is given up and a new one made);
/// 2. the bytes are written at its start, it is cut to their length, set to
///    mode 0600 and `fdatasync`ed;
/// 3. the spare and the target swap names in one call (`renameat2` with
///    `RENAME_EXCHANGE`): a reader sees the old file or the new one, never a
///    mix; a watcher sees the target moved in, as with a temporary file; and
///    the old inode is now `.<name>.spare`, the next write's spare. Where
///    names cannot be swapped (an old kernel or C library, a file system
///    without it), or the target is missing or no regular file, the target
///    is linked to `.<name>.spare.prev`, the spare renamed over the target
///    and the old inode renamed to `.<name>.spare`;
/// 4. the directory is `fsync`ed.
///
/// The caller holds the target's writers' lock (``DomainCommit``'s), and
/// this object holds an exclusive `flock` on each spare it keeps: a spare
/// whose lock is free is a dead writer's, and is removed by the next writer
/// of that file (``removeStale(of:)``) or by `apphome doctor`. At most
/// ``limit`` spares are kept; the least recently used is given up first.
///
/// Not thread-safe: one owner (prefsd's loop) calls it.
public final class ReplacementSpares {
    private struct Spare {
        var fd: Int32
        var device: UInt64
        var inode: UInt64
        var used: Int
    }

    private var spares: [String: Spare] = [:]
    private var clock = 0
    /// How many spares are kept at most.
    public let limit: Int
    /// How many replacements went into a kept spare.
    public private(set) var reused = 0
    /// How many spares were given up because another process had one open.
    public private(set) var busy = 0
    /// Whether this file system grants leases. Where it does not (NFS, or
    /// `fs.leases-enable` off) nobody can tell that a spare is unused, so
    /// every replacement is a new temporary file, as without this object.
    public private(set) var leasesWork = true
    /// Whether this system swaps two names in one call (`renameat2` with
    /// `RENAME_EXCHANGE`: Linux 3.15, and ext4, XFS, Btrfs, tmpfs among
    /// others). Where it does not, a replacement links, renames and renames.
    public private(set) var exchanges = true
    /// How many replacements swapped the names in one call.
    public private(set) var exchanged = 0
    /// Seconds spent waiting for the disk (`fdatasync` of spares, `fsync`
    /// of directories) in replacements into spares.
    public private(set) var flushSeconds = 0.0

    public init(limit: Int = 64) {
        self.limit = max(1, limit)
    }

    deinit {
        for s in spares.values { close(s.fd) }
    }

    /// The spare's name for `path`.
    public static func spareName(of path: String) -> String {
        FileSystem.parentDirectory(path) + "/." + FileSystem.lastComponent(path) + spareSuffix
    }

    /// The name of the file whose spare `name` is: `X` for `.X.spare` and
    /// `.X.spare.prev` (``spareName(of:)`` the other way), else `nil`. By
    /// bytes: a name is a file's bytes, never compared as text.
    public static func fileName(ofSpare name: String) -> String? {
        let bytes = name.utf8
        guard bytes.first == UInt8(ascii: ".") else { return nil }
        for suffix in [spareSuffix + previousSuffix, spareSuffix]
        where bytes.count > suffix.utf8.count + 1 && bytes.suffix(suffix.utf8.count).elementsEqual(suffix.utf8) {
            return String(decoding: bytes.dropFirst().dropLast(suffix.utf8.count), as: UTF8.self)
        }
        return nil
    }

    /// How a spare's name ends (`.<name>.spare`), and what is added to it
    /// for the moment the previous file is linked there during a
    /// replacement (`.<name>.spare.prev`).
    public static let spareSuffix = ".spare", previousSuffix = ".prev"

    /// How many spares are held now.
    public var count: Int { spares.count }

    /// Removes the spares of `path` that no live writer holds: a `.spare`
    /// whose `flock` is free and a `.spare.prev` (which only lives inside a
    /// replacement, under the target's lock the caller holds). `names`: the
    /// entries of `path`'s directory, which the caller has already listed
    /// (a writer with no spare beside its file pays nothing more).
    /// - Returns: the paths removed.
    @discardableResult
    public static func removeStale(of path: String, among names: [String]) -> [String] {
        let spare = spareName(of: path)
        let name = FileSystem.lastComponent(spare)
        var removed: [String] = []
        if names.contains(name + previousSuffix), Syscalls.unlink(spare + previousSuffix) == 0 { removed.append(spare + previousSuffix) }
        if names.contains(name), isStale(spare), Syscalls.unlink(spare) == 0 { removed.append(spare) }
        return removed
    }

    /// Whether a spare of `path` is held here.
    public func holdsSpare(of path: String) -> Bool { spares[path] != nil }

    /// Whether the spare at `spare` is a dead writer's: a regular file of
    /// this user's whose `flock` is free, or a symbolic link (never made here).
    public static func isStale(_ spare: String) -> Bool {
        var link = stat()
        if lstat(spare, &link) == 0 && (link.st_mode & S_IFMT) == S_IFLNK { return true }
        let fd = Syscalls.open(spare, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var st = stat()
        return fstat(fd, &st) == 0 && (st.st_mode & S_IFMT) == S_IFREG && st.st_uid == geteuid()
            && flock(fd, LOCK_EX | LOCK_NB) == 0
    }

    /// Gives up the spares whose name no longer is the file held (a
    /// container removed by an uninstall, a spare removed by `doctor`), so
    /// that no removed file is kept open.
    public func releaseVanished() {
        for (path, spare) in spares {
            var st = stat()
            if fstatat(AT_FDCWD, Self.spareName(of: path), &st, AT_SYMLINK_NOFOLLOW) != 0
                || UInt64(st.st_dev) != spare.device || UInt64(st.st_ino) != spare.inode {
                giveUp(path, removingName: false)
            }
        }
    }

    /// Replaces `path` with `bytes`, atomically and durably, as
    /// ``FileSystem/writeAtomically(_:to:)`` does; the caller holds the
    /// file's writers' lock.
    public func replace(_ bytes: [UInt8], at path: String) throws(SystemError) {
        let spareName = Self.spareName(of: path)
        guard leasesWork, let fd = spareFor(path, name: spareName) else {
            try FileSystem.writeAtomically(bytes, to: path)
            return
        }
        spares[path] = nil
        var closed = false
        defer { if !closed { close(fd) } }
        do throws(SystemError) {
            try fill(fd, bytes, name: spareName)
        } catch {
            _ = Syscalls.unlink(spareName)
            throw error
        }
        if exchanges, isRegularFile(path) {
            if Syscalls.exchange(spareName, path) == 0 {
                close(fd)
                closed = true
                exchanged += 1
                adopt(path, name: spareName)
                syncDirectory(of: path)
                return
            }
            if errno == ENOSYS || errno == EINVAL { exchanges = false }
        }
        let previous = spareName + Self.previousSuffix
        _ = Syscalls.unlink(previous)
        let kept = link(path, previous) == 0
        guard Syscalls.rename(spareName, path) == 0 else {
            let e = errno
            if kept { _ = Syscalls.unlink(previous) }
            _ = Syscalls.unlink(spareName)
            throw SystemError("rename", path: path, errno: e)
        }
        close(fd)
        closed = true
        if kept {
            if Syscalls.rename(previous, spareName) == 0 {
                adopt(path, name: spareName)
            } else {
                _ = Syscalls.unlink(previous)
            }
        }
        syncDirectory(of: path)
    }

    /// `fsync`s the directory of `path`, counting the wait in ``flushSeconds``.
    private func syncDirectory(of path: String) {
        let start = SystemClock.monotonicSeconds()
        FileSystem.syncDirectory(FileSystem.parentDirectory(path))
        flushSeconds += SystemClock.monotonicSeconds() - start
    }

    /// Whether `path` names a regular file (not following a link): what
    /// an exchange may move to the spare's name.
    private func isRegularFile(_ path: String) -> Bool {
        var st = stat()
        return fstatat(AT_FDCWD, path, &st, AT_SYMLINK_NOFOLLOW) == 0 && (st.st_mode & S_IFMT) == S_IFREG
    }

    /// The descriptor of a spare for `path` that may be written: the one
    /// kept if it still may be, else a new file; `nil` when none can be made.
    private func spareFor(_ path: String, name: String) -> Int32? {
        if let spare = spares[path] {
            var st = stat()
            let named = fstatat(AT_FDCWD, name, &st, AT_SYMLINK_NOFOLLOW) == 0
                && UInt64(st.st_dev) == spare.device && UInt64(st.st_ino) == spare.inode
            guard named, (st.st_mode & S_IFMT) == S_IFREG, st.st_nlink == 1 else {
                giveUp(path, removingName: false)
                return makeSpare(path, name: name)
            }
            // A write lease can be taken only when no other open file
            // refers to the inode: nobody is still reading the old contents.
            let leased: Int32
            if let e = SystemFaults.injected("lease", name) { errno = e; leased = -1 } else { leased = fcntl(spare.fd, Self.setLease, Int32(F_WRLCK)) }
            guard leased == 0 else {
                let refused = errno
                giveUp(path, removingName: true)
                if refused == EAGAIN {
                    busy += 1
                    return makeSpare(path, name: name)
                }
                leasesWork = false
                for other in Array(spares.keys) { giveUp(other, removingName: true) }
                return nil
            }
            _ = fcntl(spare.fd, Self.setLease, Int32(F_UNLCK))
            reused += 1
            return spare.fd
        }
        return makeSpare(path, name: name)
    }

    /// `F_SETLEASE` (Linux's, not in Glibc's Swift overlay).
    private static let setLease: Int32 = 1024

    /// A new spare for `path`, locked; a stale one in the way is removed first.
    private func makeSpare(_ path: String, name: String) -> Int32? {
        for _ in 0..<2 {
            let fd = Syscalls.open(name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
            if fd >= 0 {
                guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
                    close(fd)
                    return nil
                }
                return fd
            }
            guard errno == EEXIST, Self.isStale(name), Syscalls.unlink(name) == 0 else { return nil }
        }
        return nil
    }

    /// Keeps the file now named `name` as `path`'s spare, if it is a regular
    /// file of this user's, of one link, that can be locked.
    private func adopt(_ path: String, name: String) {
        let fd = Syscalls.open(name, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { return }
        var st = stat()
        guard fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG, st.st_nlink == 1, st.st_uid == geteuid(),
              flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            close(fd)
            return
        }
        if spares.count >= limit, let oldest = spares.min(by: { $0.value.used < $1.value.used })?.key {
            giveUp(oldest, removingName: true)
        }
        clock += 1
        spares[path] = Spare(fd: fd, device: UInt64(st.st_dev), inode: UInt64(st.st_ino), used: clock)
    }

    /// Stops keeping `path`'s spare; with `removingName`, removes its name
    /// if it still is that file.
    private func giveUp(_ path: String, removingName: Bool) {
        guard let spare = spares.removeValue(forKey: path) else { return }
        if removingName {
            let name = Self.spareName(of: path)
            var st = stat()
            if fstatat(AT_FDCWD, name, &st, AT_SYMLINK_NOFOLLOW) == 0,
               UInt64(st.st_dev) == spare.device, UInt64(st.st_ino) == spare.inode {
                _ = Syscalls.unlink(name)
            }
        }
        close(spare.fd)
    }

    /// Writes `bytes` at the start of the spare, cuts it to their length,
    /// sets mode 0600 and `fdatasync`s it. Not cut to zero first: on ext4 a
    /// file cut to zero is flushed when closed.
    private func fill(_ fd: Int32, _ bytes: [UInt8], name: String) throws(SystemError) {
        if let e = SystemFaults.injected("write", name) { throw SystemError("write", path: name, errno: e) }
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress! + offset, $0.count - offset, off_t(offset)) }
            if n < 0 {
                if errno == EINTR { continue }
                throw SystemError("write", path: name, errno: errno)
            }
            offset += n
        }
        guard ftruncate(fd, off_t(bytes.count)) == 0 else { throw SystemError("truncate", path: name, errno: errno) }
        guard fchmod(fd, 0o600) == 0 else { throw SystemError("chmod", path: name, errno: errno) }
        if let e = SystemFaults.injected("fsync", name) { throw SystemError("fsync", path: name, errno: e) }
        let start = SystemClock.monotonicSeconds()
        defer { flushSeconds += SystemClock.monotonicSeconds() - start }
        guard fdatasync(fd) == 0 else { throw SystemError("fsync", path: name, errno: errno) }
    }
}
