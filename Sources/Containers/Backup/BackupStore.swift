#if canImport(Glibc)
import Glibc
#endif
import AppHomeSystem
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
/// Objects are written (temp file, `fsync`, `rename`) before the manifest
/// that names them, and never changed afterwards, so a crash mid-backup
/// leaves every earlier backup valid, plus at worst unreferenced objects.
public struct BackupStore: Sendable {
    /// The store's directory, without a trailing slash.
    public let directory: String

    public init(directory: String) {
        self.directory = Paths.trimmingTrailingSlashes(directory)
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
            guard case .file(let hash, let size) = e.kind else { continue }
            var st = stat()
            guard lstat(store.objectPath(hash), &st) == 0, st.st_mode & S_IFMT == S_IFREG else {
                throw damaged("the stored copy of \(e.path) is missing")
            }
            guard Int(st.st_size) == size else { throw damaged("\(e.path) does not match its checksum") }
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
        var size: Int
        /// Bytes written to a new object: 0 when the store had it.
        var storedBytes: Int
        /// The objects subdirectory written into, to `fsync` before the manifest.
        var directoryWritten: String?
    }

    /// Files up to this size are read once into memory; larger ones are
    /// hashed in a first pass and copied in a second only when new.
    static let inMemoryLimit = 8 << 20

    /// Stores the contents of the open file `fd` (at `path`, for messages),
    /// unless an object with the same hash exists.
    func ingest(fd: Int32, size: Int, path: String) throws -> Ingested {
        if size <= Self.inMemoryLimit {
            var bytes: [UInt8] = []
            bytes.reserveCapacity(size + 1)
            try TreeOperations.readAll(fd, path: path) { chunk in bytes.append(contentsOf: chunk) }
            let hash = ContentHash(of: bytes)
            let target = objectPath(hash)
            if FileSystem.exists(target) { return Ingested(hash: hash, size: bytes.count, storedBytes: 0) }
            try writeObject(hash, to: target) { out, temp in try FileSystem.writeAll(out, bytes, path: temp) }
            return Ingested(hash: hash, size: bytes.count, storedBytes: bytes.count, directoryWritten: FileSystem.parentDirectory(target))
        }
        let first = ContentHasher()
        var count = 0
        try TreeOperations.readAll(fd, path: path) { chunk in
            first.update(chunk); count += chunk.count
        }
        let hash = first.finish()
        if FileSystem.exists(objectPath(hash)) { return Ingested(hash: hash, size: count, storedBytes: 0) }
        guard lseek(fd, 0, SEEK_SET) == 0 else { throw SystemError("lseek", path: path, errno: errno) }
        // The file may change between the passes: the object is named by
        // what the second pass actually copied.
        let second = ContentHasher()
        let temp = try newIncomingFile(for: hash)
        var written = 0
        do {
            defer { close(temp.fd) }
            try TreeOperations.readAll(fd, path: path) { chunk in
                second.update(chunk)
                try FileSystem.writeAll(temp.fd, chunk, path: temp.path)
                written += chunk.count
            }
            guard fsync(temp.fd) == 0 else { throw SystemError("fsync", path: temp.path, errno: errno) }
        } catch {
            unlink(temp.path)
            throw error
        }
        let copied = second.finish()
        let target = objectPath(copied)
        if FileSystem.exists(target) {
            unlink(temp.path)
            return Ingested(hash: copied, size: written, storedBytes: 0)
        }
        try place(temp.path, at: target)
        return Ingested(hash: copied, size: written, storedBytes: written, directoryWritten: FileSystem.parentDirectory(target))
    }

    /// Writes a new object at `target` through a temp file in `.incoming`.
    func writeObject(_ hash: ContentHash, to target: String, _ body: (Int32, String) throws -> Void) throws {
        let temp = try newIncomingFile(for: hash)
        do {
            defer { close(temp.fd) }
            try body(temp.fd, temp.path)
            guard fsync(temp.fd) == 0 else { throw SystemError("fsync", path: temp.path, errno: errno) }
        } catch {
            unlink(temp.path)
            throw error
        }
        try place(temp.path, at: target)
    }

    /// Renames a finished temp file to its object path; removes it on failure.
    func place(_ temp: String, at target: String) throws {
        do {
            try TreeOperations.makeDirectory(FileSystem.parentDirectory(target))
            try TreeOperations.rename(temp, to: target)
        } catch {
            unlink(temp)
            throw error
        }
    }

    /// A new temp file in `.incoming`, named after the hash of what it is
    /// about to hold: the lock holder is the only writer there, `open()`
    /// emptied it, and a content already written this run is found in
    /// `objects/` before a second temp file is made, so the name is free.
    private func newIncomingFile(for hash: ContentHash) throws -> (fd: Int32, path: String) {
        let path = incomingDirectory + "/" + hash.hex
        var fd = Glibc.open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        if fd < 0 && errno == EEXIST {   // left by a failed write whose clean-up failed too
            unlink(path)
            fd = Glibc.open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        }
        guard fd >= 0 else { throw SystemError("create", path: path, errno: errno) }
        return (fd, path)
    }
}
