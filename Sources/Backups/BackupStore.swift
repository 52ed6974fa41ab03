#if canImport(Glibc)
import Glibc
#endif
import AppHomeSystem
import Containers
import Preferences
import PropertyList

/// A directory of backups: manifests per app, and one content-addressed
/// object store that every backup in it shares.
///
/// ```
/// <store>/objects/<2 hex>/<62 hex>    a file's contents, named by its BLAKE2b-256 (0600)
/// <store>/objects/.incoming/          objects being written (emptied by the next backup)
/// <store>/<bundle-id>/<stamp>.plist   manifests (Schemas/backup.md)
/// <store>/.lock                       flock held by a backup
/// ```
///
/// A backup writes its new objects into `.incoming`, makes them durable
/// together (`syncfs`), renames them into `objects/`, makes that durable,
/// and only then writes the manifest that names them; objects never change
/// afterwards. So a crash mid-backup leaves every earlier backup valid,
/// plus at worst unreferenced objects, and no object under a name that is
/// not its content's hash.
public struct BackupStore: Sendable {
    /// The store's directory, without a trailing slash.
    public let directory: String

    /// Objects this backup wrote, not yet in `objects/`.
    let pending = PendingObjects()
    /// The free-space check of this backup's writes.
    let space = SpaceCheck()
    /// `objects/` and `.incoming`, held open while a backup writes.
    let objectDirectories: ObjectDirectories

    /// Whether a backup makes its objects durable (`syncfs`); not for the
    /// private store of a backup to restic, which is thrown away.
    let durable: Bool

    public init(directory: String) {
        self.init(directory: directory, durable: true)
    }

    init(directory: String, durable: Bool) {
        self.directory = Paths.trimmingTrailingSlashes(directory)
        self.durable = durable
        objectDirectories = ObjectDirectories(objects: self.directory + "/objects", incoming: self.directory + "/objects/.incoming")
    }

    var objectsDirectory: String { directory + "/objects" }
    var incomingDirectory: String { objectsDirectory + "/.incoming" }
    var lockPath: String { directory + "/.lock" }

    /// Where the object named `hash` lives.
    public func objectPath(_ hash: ContentHash) -> String {
        let hex = hash.hex
        return objectsDirectory + "/" + hex.prefix(2) + "/" + hex.dropFirst(2)
    }

    /// The directory holding the manifests of `identifier`.
    public func manifestDirectory(for identifier: BundleIdentifier) -> String {
        directory + "/" + identifier.rawValue
    }

    /// Creates the store's directories if needed and takes its lock; then
    /// removes what a killed backup left in `.incoming`.
    func open() throws(ContainersError) -> FileLock {
        try containersErrors {
            try FileSystem.makeDirectories(incomingDirectory)
            let lock = try FileLock(path: lockPath)
            for name in try FileSystem.directoryEntries(incomingDirectory) {
                try FileSystem.removeFile(incomingDirectory + "/" + name)
            }
            objectDirectories.reset()
            return lock
        }
    }

    // MARK: Manifests

    /// The manifests of `identifier`, oldest first.
    public func manifests(of identifier: BundleIdentifier) throws(ContainersError) -> [String] {
        let dir = manifestDirectory(for: identifier)
        let names = try containersErrors { try FileSystem.directoryEntries(dir) }
        return names.filter { !$0.hasPrefix(".") && $0.hasSuffix(".plist") }
            .sorted { Self.nameOrder($0) < Self.nameOrder($1) }
            .map { dir + "/" + $0 }
    }

    /// Every app with at least one manifest here.
    public func identifiers() throws(ContainersError) -> [BundleIdentifier] {
        let names = try containersErrors { try FileSystem.directoryEntries(directory) }
        return names.compactMap { try? BundleIdentifier($0) }.filter { FileSystem.isDirectory(directory + "/" + $0.rawValue) }.sorted()
    }

    /// Reads and checks the manifest at `path`.
    ///
    /// - Throws: ``ContainersError/backupMissing(path:)`` when there is no
    ///   file; the errors of ``BackupManifest/init(decoding:path:)``.
    public func readManifest(_ path: String) throws(ContainersError) -> BackupManifest {
        let bytes: [UInt8]?
        do { bytes = try FileSystem.readFileIfPresent(path) } catch {
            if error.errno == EISDIR { throw .backupMissing(path: path) }
            throw .system(error)
        }
        guard let bytes else { throw .backupMissing(path: path) }
        return try BackupManifest(decoding: bytes, path: path)
    }

    /// Reads and checks the manifest at `path` in a tree below `top` that
    /// someone else wrote (a restic snapshot), following no symbolic link
    /// below `top`: a link is ``ContainersError/backupDamaged(path:reason:)``.
    static func readManifest(_ path: String, below top: String) throws(ContainersError) -> BackupManifest {
        let bytes: [UInt8]
        do {
            guard let fd = try DirectoryTree.openFile(path, below: top, flags: O_RDONLY | O_NONBLOCK) else { throw ContainersError.backupMissing(path: path) }
            defer { close(fd) }
            var st = stat()
            guard fstat(fd, &st) == 0 else { throw ContainersError.system(SystemError("stat", path: path, errno: errno)) }
            guard st.st_mode & S_IFMT == S_IFREG else { throw ContainersError.backupDamaged(path: path, reason: "its manifest is not a regular file") }
            var read: [UInt8] = []
            try TreeOperations.readAll(fd, path: path) { read += $0 }
            bytes = read
        } catch let error as ContainersError {
            throw error
        } catch let error as SystemError where DirectoryTree.isLinkRefusal(error) {
            throw .backupDamaged(path: path, reason: "its manifest is reached through a symbolic link, which AppHome does not follow in a backup")
        } catch {
            throw .system(error as? SystemError ?? SystemError("read", path: path, errno: EIO))
        }
        return try BackupManifest(decoding: bytes, path: path)
    }

    /// Opens the backup whose manifest is at `path`
    /// (`<store>/<bundle-id>/<name>.plist`): reads and checks the manifest,
    /// checks that it is the backup of the app its folder names, and that
    /// every object it names is present with the right size. The objects'
    /// contents are not read.
    ///
    /// - Returns: the store the manifest is in, and the manifest.
    /// - Throws: ``ContainersError/backupMissing(path:)``,
    ///   ``ContainersError/backupDamaged(path:reason:)``,
    ///   ``ContainersError/backupVersionTooNew(path:found:supported:)``,
    ///   ``ContainersError/backupOfAnotherApp(path:found:expected:)``.
    static func openBackup(_ path: String) throws(ContainersError) -> (BackupStore, BackupManifest) {
        let folder = FileSystem.parentDirectory(path)
        let store = BackupStore(directory: FileSystem.parentDirectory(folder))
        let manifest = try store.readManifest(path)
        func damaged(_ reason: String) -> ContainersError { .backupDamaged(path: path, reason: reason) }
        guard let folderID = try? BundleIdentifier(FileSystem.lastComponent(folder)) else {
            throw damaged("it is not in a backup directory's <bundle-id>/ folder")
        }
        guard folderID == manifest.bundleIdentifier else {
            throw .backupOfAnotherApp(path: path, found: manifest.bundleIdentifier.rawValue, expected: folderID.rawValue)
        }
        for e in manifest.allEntries {
            guard case .file(let hash, _) = e.kind else { continue }
            var st = stat()
            guard lstat(store.objectPath(hash), &st) == 0, st.st_mode & S_IFMT == S_IFREG else {
                throw damaged("the stored copy of \(e.path) is missing")
            }
            guard Int(st.st_size) == e.storedSize else { throw damaged("\(e.path) does not match its checksum") }
        }
        return (store, manifest)
    }

    /// A new manifest path for a backup of `identifier` taken at `time`:
    /// `<stamp>.plist`, or `<stamp>-<n>.plist` when that name is taken.
    func newManifestPath(for identifier: BundleIdentifier, at time: PlistDate) -> String {
        let stamp = Self.stamp(time)
        let dir = manifestDirectory(for: identifier)
        var name = stamp + ".plist"
        var n = 2
        while FileSystem.exists(dir + "/" + name) {
            name = stamp + "-\(n).plist"
            n += 1
        }
        return dir + "/" + name
    }

    /// `20261130T224500Z`.
    static func stamp(_ time: PlistDate) -> String {
        guard let c = CivilTime(time) else { return "00000000T000000Z" }
        func pad(_ v: Int, _ width: Int) -> String {
            let s = String(v)
            return String(repeating: "0", count: max(0, width - s.count)) + s
        }
        return pad(c.year, 4) + pad(c.month, 2) + pad(c.day, 2) + "T" + pad(c.hour, 2) + pad(c.minute, 2) + pad(c.second, 2) + "Z"
    }

    /// Sorts `<stamp>.plist` before `<stamp>-2.plist` before `<stamp>-10.plist`.
    static func nameOrder(_ name: String) -> (String, Int) {
        let stem = name.hasSuffix(".plist") ? String(name.dropLast(6)) : name
        if let dash = stem.lastIndex(of: "-"), let n = Int(stem[stem.index(after: dash)...]) {
            return (String(stem[..<dash]), n)
        }
        return (stem, 1)
    }

    // MARK: Objects

    /// What storing one file did.
    struct Ingested {
        var hash: ContentHash
        /// The bytes of the object (a sparse file's data, without its holes).
        var size: Int
        /// Bytes written to a new object: 0 when the store had it.
        var storedBytes: Int
        /// Whether this call wrote a new (pending) object.
        var isNew = false
    }

    /// Files up to this size are read once into memory; larger ones are
    /// hashed in a first pass and copied in a second only when new.
    static let inMemoryLimit = 8 << 20

    /// Whether the store holds, or this backup has written, the object `hash`.
    func has(_ hash: ContentHash) throws -> Bool {
        try pending.contains(hash) || objectDirectories.objectStatus(hash) != nil
    }

    /// `lstat` of the object `hash` in `objects/`, or `nil` when there is none.
    func objectStatus(_ hash: ContentHash) throws -> stat? {
        try objectDirectories.objectStatus(hash)
    }

    /// Stores the data of the open file `fd` (at `path`, for messages): the
    /// whole file, or only `extents` of a sparse one, unless an object with
    /// the same hash exists.
    func ingest(fd: Int32, extents: [FileExtent]?, path: String) throws -> Ingested {
        let first = ContentHasher()
        var count = 0
        try FileExtent.read(fd, extents, path: path, sizeHint: 1 << 20) { chunk in
            first.update(chunk); count += chunk.count
        }
        let hash = first.finish()
        if try has(hash) { return Ingested(hash: hash, size: count, storedBytes: 0) }
        // The file may change between the passes: the object is named by
        // what the second pass actually copied.
        let second = ContentHasher()
        try space.reserve(count, in: directory)
        let temp = try newIncomingFile(named: "copy")
        var written = 0
        do {
            defer { close(temp.fd) }
            try FileExtent.read(fd, extents, path: path) { chunk in
                second.update(chunk)
                try FileSystem.writeAll(temp.fd, chunk, path: temp.path)
                written += chunk.count
            }
        } catch {
            unlink(temp.path)
            throw error
        }
        let copied = second.finish()
        if try has(copied) {
            unlink(temp.path)
            return Ingested(hash: copied, size: written, storedBytes: 0)
        }
        try pending.add(copied, from: temp.path, incoming: incomingDirectory)
        return Ingested(hash: copied, size: written, storedBytes: written, isNew: true)
    }

    /// Stores `bytes`, whose hash is `hash`, unless the store has them.
    func ingest(_ bytes: [UInt8], hash: ContentHash) throws -> Ingested {
        if try has(hash) { return Ingested(hash: hash, size: bytes.count, storedBytes: 0) }
        try space.reserve(bytes.count, in: directory)
        // Written by the writer's thread while the walk goes on; pending
        // from now on (a failure surfaces at a later call or at the commit).
        pending.insert(hash)
        try objectDirectories.objectWriter(durable: durable).submit(bytes, hash: hash)
        return Ingested(hash: hash, size: bytes.count, storedBytes: bytes.count, isNew: true)
    }

    /// Creates `.incoming/<hex of hash>` (open as `incoming`) holding
    /// `bytes`; nothing is left behind when that fails.
    static func writeIncoming(_ bytes: [UInt8], hash: ContentHash, in incoming: Int32, incomingPath: String) throws(SystemError) {
        try hash.withFileNames { (name, _) throws(SystemError) in
            var fd = openat(incoming, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
            if fd < 0 && errno == EEXIST {   // a temp file this run left behind
                unlinkat(incoming, name, 0)
                fd = openat(incoming, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
            }
            guard fd >= 0 else { throw SystemError("create", path: incomingPath + "/" + hash.hex, errno: errno) }
            var failure: Int32 = 0
            bytes.withUnsafeBytes { all in
                var offset = 0
                while offset < all.count {
                    let n = Glibc.write(fd, all.baseAddress! + offset, all.count - offset)
                    if n < 0 {
                        if errno == EINTR { continue }
                        failure = errno
                        return
                    }
                    offset += n
                }
            }
            if close(fd) != 0 && failure == 0 && errno != EINTR { failure = errno }
            if failure != 0 {
                unlinkat(incoming, name, 0)
                throw SystemError("write", path: incomingPath + "/" + hash.hex, errno: failure)
            }
        }
    }

    /// Drops every object this backup wrote and has not moved into
    /// `objects/` (a backup that failed).
    func discardPending() {
        objectDirectories.stopWriting()
        let hashes = pending.drain()
        guard let incoming = try? objectDirectories.incoming() else { return }
        for hash in hashes { hash.withFileNames { name, _ in _ = unlinkat(incoming, name, 0) } }
    }

    /// Drops an object this backup wrote and no entry names after all.
    func discard(_ hash: ContentHash) {
        guard pending.remove(hash), let incoming = try? objectDirectories.incoming() else { return }
        objectDirectories.flushWriting()
        hash.withFileNames { name, _ in _ = unlinkat(incoming, name, 0) }
    }

    /// Makes the objects this backup wrote durable together, then moves
    /// them to their places: one `syncfs` for all their data, the renames,
    /// and a second `syncfs` for the renames (instead of one `fsync` per
    /// object and per directory). A crash before the end leaves them in
    /// `.incoming`, which the next backup empties; after it, every object
    /// in `objects/` holds the bytes its name says.
    ///
    /// The writer's thread may have done this already for most objects, in
    /// batches (``ObjectWriter``); the rest is done here. The renames go by
    /// prefix (`objects/00/` first), each relative to the open `.incoming`
    /// and `objects/`.
    func commitObjects() throws {
        let committed = try objectDirectories.finishWriting()
        let objects = pending.drain().filter { !committed.contains($0) }
        // Also makes durable the renames the writer made.
        if durable { try Self.syncFileSystem(of: directory) }
        guard !objects.isEmpty else { return }
        do {
            try objectDirectories.putInPlace(objects)
        } catch {
            // What is not in place yet goes (the renamed ones are whole objects).
            if let incoming = try? objectDirectories.incoming() {
                for rest in objects { rest.withFileNames { name, _ in _ = unlinkat(incoming, name, 0) } }
            }
            throw error
        }
        if durable { try Self.syncFileSystem(of: directory) }
    }

    /// `syncfs` of the file system holding `path`: everything written there
    /// reaches the disk, in one call.
    static func syncFileSystem(of path: String) throws {
        let fd = Glibc.open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw SystemError("open", path: path, errno: errno) }
        defer { close(fd) }
        try syncFileSystem(fd: fd, path: path)
    }

    /// `syncfs` of the file system holding the open `fd` (at `path`, for messages).
    static func syncFileSystem(fd: Int32, path: String) throws(SystemError) {
        if let syncfs = Self.syncfs {
            guard syncfs(fd) == 0 else { throw SystemError("syncfs", path: path, errno: errno) }
        } else {
            sync()
        }
    }

    /// glibc's `syncfs`, which the Swift Glibc module does not declare (it
    /// needs `_GNU_SOURCE`): looked up at run time.
    private static let syncfs = CLibrary.function("syncfs", as: (@convention(c) (Int32) -> Int32).self)

    /// A new temp file in `.incoming`: the lock holder is the only writer
    /// there, and `open()` emptied it.
    func newIncomingFile(named name: String) throws -> (fd: Int32, path: String) {
        let path = incomingDirectory + "/" + name
        var fd = Glibc.open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        if fd < 0 && errno == EEXIST {   // a temp file this run left behind
            unlink(path)
            fd = Glibc.open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        }
        guard fd >= 0 else { throw SystemError("create", path: path, errno: errno) }
        return (fd, path)
    }
}

/// The objects one backup has written into `.incoming` (each as
/// `<64 hex>`) and not yet moved to `objects/`
/// (``BackupStore/commitObjects()``).
final class PendingObjects: @unchecked Sendable {
    private var hashes: Set<ContentHash> = []

    func contains(_ hash: ContentHash) -> Bool { hashes.contains(hash) }

    /// Records `.incoming/<hex>` as the object `hash`.
    func insert(_ hash: ContentHash) { hashes.insert(hash) }

    /// Records the finished temp file `temp` as the object `hash`, renamed
    /// to `<incoming>/<hex>` if it has another name.
    func add(_ hash: ContentHash, from temp: String, incoming: String) throws {
        let name = incoming + "/" + hash.hex
        if temp != name {
            do { try TreeOperations.rename(temp, to: name) } catch { unlink(temp); throw error }
        }
        hashes.insert(hash)
    }

    /// Forgets `hash`; whether it was pending.
    func remove(_ hash: ContentHash) -> Bool { hashes.remove(hash) != nil }

    func drain() -> [ContentHash] {
        defer { hashes = [] }
        return Array(hashes)
    }
}

/// The free-space check of a backup or a restore: refuses to write what
/// would leave less than ``reserve(total:)`` free on the file system, before
/// writing it. `statvfs` is asked again only when the writes so far could
/// have used up what it said was free.
final class SpaceCheck: @unchecked Sendable {
    private var available: Int?
    private var total = 0
    private var used = 0

    /// What is always left free: 2% of the file system, at most 128 MiB.
    static func reserve(total: Int) -> Int { min(total / 50, 128 << 20) }

    /// Free bytes (`f_bavail × f_frsize`) and the size of the file system holding `path`.
    static func free(at path: String) throws -> (available: Int, total: Int) {
        var s = statvfs()
        guard statvfs(path, &s) == 0 else { throw SystemError("statvfs", path: path, errno: errno) }
        return (Int(s.f_bavail) &* Int(s.f_frsize), Int(s.f_blocks) &* Int(s.f_frsize))
    }

    /// Counts `bytes` about to be written under `path`.
    ///
    /// - Throws: ``ContainersError/notEnoughSpace(path:needed:available:)``.
    func reserve(_ bytes: Int, in path: String) throws {
        if let available, used + bytes <= available - Self.reserve(total: total) {
            used += bytes
            return
        }
        let now = try Self.free(at: path)
        available = now.available
        total = now.total
        used = 0
        let usable = now.available - Self.reserve(total: now.total)
        guard bytes <= usable else {
            throw ContainersError.notEnoughSpace(path: path, needed: bytes, available: max(0, usable))
        }
        used = bytes
    }
}

/// One range of a sparse file that holds data (`SEEK_DATA` to `SEEK_HOLE`);
/// what lies between is a hole, read as zeros and never stored.
public struct FileExtent: Equatable, Sendable {
    /// `lseek` whences of Linux that the Swift Glibc module does not
    /// declare (they need `_GNU_SOURCE`).
    static let seekData: Int32 = 3
    static let seekHole: Int32 = 4

    public var offset: Int
    public var length: Int

    public init(offset: Int, length: Int) {
        self.offset = offset
        self.length = length
    }

    /// Returns once no `write` that began before this call is still
    /// copying into the file open as `fd`. A buffered write stamps the
    /// file's times when it begins, then copies, holding the inode's lock
    /// (it may sleep meanwhile: dirty-page throttling, page faults); a read
    /// does not take that lock, so it can see such a write half done while
    /// the times already look old. `SEEK_DATA` takes the lock (ext4, XFS,
    /// Btrfs, tmpfs), so it waits for that write to end; any write that
    /// begins later stamps times newer than this call. Moves `fd`'s offset:
    /// readers after it give their own. Where the file system has no
    /// `SEEK_DATA`, nothing is waited for (the times are all there is).
    static func waitForWritesInProgress(_ fd: Int32) {
        _ = lseek(fd, 0, seekData)
    }

    /// The data ranges of the open regular file `fd` of `size` bytes, or
    /// `nil` when it has no hole (the common case: checked first by its
    /// allocated blocks, so a dense file costs no extra call).
    static func dataRanges(of fd: Int32, size: Int, blocks: Int, path: String) throws -> [FileExtent]? {
        guard size > 0, blocks &* 512 < size else { return nil }
        var extents: [FileExtent] = []
        var position = 0
        while position < size {
            let data = lseek(fd, off_t(position), Self.seekData)
            if data < 0 {
                if errno == ENXIO { break }   // only a hole up to the end
                if errno == EINVAL || errno == ENOTSUP { return nil }   // no SEEK_DATA here: read it whole
                throw SystemError("lseek", path: path, errno: errno)
            }
            guard Int(data) < size else { break }
            var hole = lseek(fd, data, Self.seekHole)
            if hole < 0 { throw SystemError("lseek", path: path, errno: errno) }
            hole = min(hole, off_t(size))
            extents.append(FileExtent(offset: Int(data), length: Int(hole - data)))
            position = Int(hole)
        }
        if extents == [FileExtent(offset: 0, length: size)] { return nil }
        return extents
    }

    /// Reads the data of `fd`: all of it from the start when `extents` is
    /// `nil`, else each extent in turn, in chunks of at most 1 MiB.
    /// `sizeHint`, the bytes expected, sizes the buffer (a small file does
    /// not pay for zeroing 1 MiB).
    static func read(_ fd: Int32, _ extents: [FileExtent]?, path: String, sizeHint: Int = 1 << 20,
                     _ body: ([UInt8]) throws -> Void) throws {
        var buffer = [UInt8](repeating: 0, count: min(1 << 20, max(4096, sizeHint + 1)))
        guard let extents else {
            guard lseek(fd, 0, SEEK_SET) == 0 else { throw SystemError("lseek", path: path, errno: errno) }
            while true {
                let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
                if n < 0 {
                    if errno == EINTR { continue }
                    throw SystemError("read", path: path, errno: errno)
                }
                if n == 0 { return }
                try body(n == buffer.count ? buffer : Array(buffer[0..<n]))
            }
        }
        for e in extents {
            var done = 0
            while done < e.length {
                let want = min(buffer.count, e.length - done)
                let n = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, want, off_t(e.offset + done)) }
                if n < 0 {
                    if errno == EINTR { continue }
                    throw SystemError("read", path: path, errno: errno)
                }
                if n == 0 { throw SystemError("read", path: path, errno: EIO) }   // shrank under the read: a changed file
                try body(n == buffer.count ? buffer : Array(buffer[0..<n]))
                done += n
            }
        }
    }

    /// Reads the newly opened `fd` from its start until `size` bytes
    /// (what `fstat` said) or its end: one `read` for a small file, none
    /// spent on finding the end.
    static func readFresh(_ fd: Int32, size: Int, path: String, _ body: ([UInt8]) throws -> Void) throws {
        var buffer = [UInt8](repeating: 0, count: min(1 << 20, max(4096, size)))
        var total = 0
        while total < size {
            let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, min($0.count, size - total)) }
            if n < 0 {
                if errno == EINTR { continue }
                throw SystemError("read", path: path, errno: errno)
            }
            if n == 0 { return }
            try body(n == buffer.count ? buffer : Array(buffer[0..<n]))
            total += n
        }
    }

    /// The first `size` bytes of `fd` (fewer when it ends sooner), read
    /// from offset 0 whatever `fd`'s offset (`pread`) straight into the
    /// array it returns (a file read into memory whole: no buffer, no copy).
    static func readWhole(_ fd: Int32, size: Int, path: String) throws -> [UInt8] {
        var failure: Int32 = 0
        let bytes = [UInt8](unsafeUninitializedCapacity: max(size, 1)) { buffer, count in
            while count < size {
                let n = pread(fd, buffer.baseAddress! + count, size - count, off_t(count))
                if n < 0 {
                    if errno == EINTR { continue }
                    failure = errno
                    break
                }
                if n == 0 { break }
                count += n
            }
        }
        guard failure == 0 else { throw SystemError("read", path: path, errno: failure) }
        return bytes
    }

    /// The bytes of data the extents hold.
    static func dataSize(_ extents: [FileExtent]) -> Int { extents.reduce(0) { $0 + $1.length } }
}
