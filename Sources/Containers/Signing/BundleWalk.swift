#if canImport(Glibc)
import Glibc
#endif
import AppHomeSystem
import Preferences
import PropertyList

/// The walk that seals a bundle: every directory, regular file and
/// symbolic link under it, by path relative to the bundle, with
/// `_CodeSignature/CodeResources` (and its directory) left out.
///
/// Links are never followed: a link is sealed as the digest of its target
/// string, wherever it points. Anything else (a FIFO, a socket, a device)
/// is refused, as the installer refuses it.
///
/// Names are bytes: they are keyed by ``PlistKey`` (exact scalars, so
/// canonically equivalent names are two entries), and a name that is not
/// valid UTF-8 is refused (``ContainersError/invalidFileName(path:kind:)``),
/// never decoded lossily into another name.
enum BundleWalk {
    /// The sealed entries of the bundle at `bundle`.
    ///
    /// - Throws: ``ContainersError/unsupportedFileType(path:)`` for a
    ///   special file; ``ContainersError/invalidFileName(path:kind:)`` (the
    ///   path relative to the bundle) for a name that is not UTF-8;
    ///   ``ContainersError/system(_:)`` when something cannot be read.
    static func seal(_ bundle: String) throws(ContainersError) -> [PlistKey: SealedEntry] {
        var out: [PlistKey: SealedEntry] = [:]
        try walk(bundle, relative: "", into: &out)
        return out
    }

    private static func walk(_ directory: String, relative: String, into out: inout [PlistKey: SealedEntry]) throws(ContainersError) {
        let raw: [[UInt8]]
        do { raw = try FileNames.rawEntries(directory) } catch { throw .system(error) }
        // In byte order, so that the first problem named is the same on every file system.
        for bytes in raw.sorted(by: { $0.lexicographicallyPrecedes($1) }) {
            guard let name = FileNames.text(bytes) else {
                let kind = FileNames.lstatEntry(directory: directory, name: bytes).map { kindName(mode: $0.st_mode) } ?? "entry"
                let shown = (relative.isEmpty ? "" : FileNames.escaped(relative) + "/") + FileNames.escaped(bytes)
                throw .invalidFileName(path: shown, kind: kind)
            }
            let path = directory + "/" + name
            let rel = relative.isEmpty ? name : relative + "/" + name
            let key = PlistKey(rel)
            var st = stat()
            guard lstat(path, &st) == 0 else { throw .system(SystemError("lstat", path: path, errno: errno)) }
            switch st.st_mode & S_IFMT {
            case S_IFDIR:
                if rel == CodeResources.directoryName {
                    try walk(path, relative: rel, into: &out)
                    continue
                }
                out[key] = .directory
                try walk(path, relative: rel, into: &out)
            case S_IFLNK:
                var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
                let n = readlink(path, &buffer, buffer.count - 1)
                guard n >= 0 else { throw .system(SystemError("readlink", path: path, errno: errno)) }
                out[key] = .symlink(ContentHash(of: buffer[0..<n].map { UInt8(bitPattern: $0) }))
            case S_IFREG:
                if rel == CodeResources.relativePath { continue }
                out[key] = .file(try hashFile(path))
            default:
                throw .unsupportedFileType(path: path)
            }
        }
    }

    /// What a file mode names, as messages say it.
    static func kindName(mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFDIR: return "directory"
        case S_IFLNK: return "symlink"
        case S_IFREG: return "file"
        default: return "special file"
        }
    }

    /// The digest of a regular file, read without following a link and
    /// without blocking on anything that is not a regular file.
    static func hashFile(_ path: String) throws(ContainersError) -> ContentHash {
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { throw .system(SystemError("open", path: path, errno: errno)) }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw .system(SystemError("stat", path: path, errno: errno)) }
        guard (st.st_mode & S_IFMT) == S_IFREG else { throw .unsupportedFileType(path: path) }
        let hasher = ContentHasher()
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw .system(SystemError("read", path: path, errno: errno))
            }
            if n == 0 { break }
            buffer.withUnsafeBytes { hasher.update(UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
        }
        return hasher.finish()
    }

    /// Whether `path` can name an entry of a bundle: relative, components
    /// that are neither empty, `.` nor `..`, no NUL.
    static func isValidRelativePath(_ path: String) -> Bool {
        guard !path.isEmpty, !path.contains("\0") else { return false }
        return path.split(separator: "/", omittingEmptySubsequences: false).allSatisfy { !$0.isEmpty && $0 != "." && $0 != ".." }
    }
}
