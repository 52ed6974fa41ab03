#if canImport(Glibc)
import Glibc
#endif
import AppHomeSystem
import Containers
import CXattr
import Preferences
import PropertyList

/// Backs up homes into backup stores, restores them, and checks, lists
/// and prunes the backups (``backup(_:to:secrets:)``,
/// ``restore(from:bundle:secrets:)``, ``pruneBackups(in:of:keep:dryRun:)``).
public struct BackupService: ContainerOperation, Sendable {
    /// The root whose apps it backs up and restores.
    public let context: ContainerContext

    /// What one backup did.
    public struct BackupReport: Equatable, Sendable {
        /// The manifest written.
        public var manifestPath: String
        public var manifest: BackupManifest
        /// Files whose contents were read: new or changed since the previous
        /// backup (the others matched it on size, times and inode).
        public var filesRead: Int
        /// Bytes of those files.
        public var bytesRead: Int
        /// Bytes written to new objects: 0 when nothing changed.
        public var bytesStored: Int
        /// New objects written.
        public var objectsStored: Int
        /// Items neither file, directory nor link (sockets, FIFOs, devices),
        /// and names that are not UTF-8: not backed up.
        public var skipped: [String]
        /// Items the app marked with ``BackupService/excludeFromBackupAttribute``, not backed up.
        public var excluded: [String]
        /// SQLite databases copied with SQLite's backup API (their `-wal`,
        /// `-shm` and `-journal` files are not stored).
        public var databases: [String] = []
        /// Files that changed every time they were read: never stored as
        /// read; kept as the previous backup read them whole (their entries
        /// marked ``BackupEntry/unsettled``), or left out (``leftOut``).
        public var unsettled: [String] = []
        /// The unsettled files with no earlier whole state: not in the backup.
        public var leftOut: [String] = []
        /// Databases that are not in the backup (locked for too long,
        /// unreadable), and why: the backup is incomplete.
        public var notBackedUp: [NotBackedUp] = []
    }

    /// A file left out of a backup it should be in, and why.
    public struct NotBackedUp: Equatable, Sendable {
        public var path: String
        public var reason: String
    }

    /// The extended attribute that keeps an item (and everything under it)
    /// out of backups, like `NSURLIsExcludedFromBackupKey` on iOS: any
    /// value. Set it with `setfattr -n user.apphome.exclude-from-backup -v 1 PATH`.
    public static let excludeFromBackupAttribute = "user.apphome.exclude-from-backup"

    /// Marks `path` (a file or directory in a home) as left out of backups,
    /// or clears the mark: what `URLResourceValues.isExcludedFromBackup`
    /// does on iOS.
    ///
    /// - Throws: ``ContainersError/system(_:)`` (for example `ENOTSUP` on a
    ///   file system without user extended attributes).
    public static func setExcludedFromBackup(_ path: String, _ excluded: Bool) throws(ContainersError) {
        if excluded {
            guard setxattr(path, excludeFromBackupAttribute, "1", 1, 0) == 0 else {
                throw .system(SystemError("setxattr", path: path, errno: errno))
            }
        } else if removexattr(path, excludeFromBackupAttribute) != 0 && errno != ENODATA {
            throw .system(SystemError("removexattr", path: path, errno: errno))
        }
    }

    /// The default backup directory, `<root>/Backups`.
    public var defaultBackupDirectory: String { layout.root + "/Backups" }

    /// Backs up the home of `identifier`, minus its bundle, `Library/Caches`,
    /// `Library/Keychains` and `tmp`, and the shared containers of its app
    /// groups, minus their `Library/Caches`, into the store at `directory`.
    ///
    /// Incremental: a file whose size, modification and change times and
    /// inode equal those in the app's newest backup in the store is not
    /// read again (unless it was modified after that backup started, when
    /// the times cannot be trusted); a file read again whose contents the
    /// store already holds is not stored again. Participants' payloads go
    /// into the manifest. Objects are durable before the manifest is
    /// written (atomically), so a crash leaves the earlier backups valid.
    ///
    /// Holds the registry lock throughout (no update or uninstall moves the
    /// home meanwhile), then the store's lock.
    ///
    /// - Parameters:
    ///   - identifier: the installed app.
    ///   - directory: the store; ``defaultBackupDirectory`` when `nil`.
    /// - Throws: ``ContainersError/notInstalled(_:)``,
    ///   ``ContainersError/participantFailed(name:identifier:reason:)``,
    ///   ``ContainersError/system(_:)``.
    ///   - options: how long to wait for a locked database, how often to read a changing file.
    public func backup(_ identifier: BundleIdentifier, to directory: String? = nil, secrets: BackupSecrets = .none,
                       options: BackupOptions = BackupOptions()) throws(ContainersError) -> BackupReport {
        let transaction = try registry.beginTransaction()
        defer { transaction.end() }
        let current = transaction.registry
        guard let entry = current.entries[identifier] else { throw .notInstalled(identifier.rawValue) }
        let store = BackupStore(directory: directory ?? defaultBackupDirectory)
        let storeLock = try store.open()
        defer { storeLock.unlock() }
        return try backup(entry, groupContainers: current.groups, into: store, secrets: secrets, options: options)
    }

    /// Backs up every installed app, in bundle-id order, into one store.
    ///
    /// - Returns: one report per app.
    public func backupAll(to directory: String? = nil, secrets: BackupSecrets = .none,
                          options: BackupOptions = BackupOptions()) throws(ContainersError) -> [BackupReport] {
        let transaction = try registry.beginTransaction()
        defer { transaction.end() }
        let store = BackupStore(directory: directory ?? defaultBackupDirectory)
        let storeLock = try store.open()
        defer { storeLock.unlock() }
        var reports: [BackupReport] = []
        let current = transaction.registry
        for entry in current.sortedEntries {
            reports.append(try backup(entry, groupContainers: current.groups, into: store, secrets: secrets, options: options))
        }
        return reports
    }

    /// - Parameter groupContainers: the registry's group id → container UUID.
    ///   - writeManifest: write the manifest into the store (a backup for
    ///     restic writes it into its tree instead).
    func backup(_ entry: RegistryEntry, groupContainers: [AppGroupIdentifier: String], into store: BackupStore,
                secrets: BackupSecrets, options: BackupOptions, writeManifest: Bool = true) throws(ContainersError) -> BackupReport {
        do {
            return try backupUnlessFailing(entry, groupContainers: groupContainers, into: store, secrets: secrets, options: options,
                                           writeManifest: writeManifest)
        } catch {
            store.discardPending()   // nothing of a failed backup stays in .incoming
            throw error
        }
    }

    private func backupUnlessFailing(_ entry: RegistryEntry, groupContainers: [AppGroupIdentifier: String], into store: BackupStore,
                                     secrets: BackupSecrets, options: BackupOptions, writeManifest: Bool) throws(ContainersError) -> BackupReport {
        let home = layout.home(uuid: entry.homeUUID, bundleName: entry.bundleName)
        let started = now()
        let device = try hostIdentifier()
        var payloads: [String: [UInt8]] = [:]
        for participant in participants {
            do {
                if let payload = try participant.backupPayload(for: entry, secrets: secrets) { payloads[participant.name] = payload }
            } catch {
                throw .participantFailed(name: participant.name, identifier: entry.bundleIdentifier.rawValue, reason: "\(error)")
            }
        }
        store.objectDirectories.objectsPerCommit = options.objectsPerCommit
        let previous = newestReadableManifest(of: entry.bundleIdentifier, in: store)
        var walker = HomeWalker(directory: home.path, store: store, options: options, previous: previous?.entries ?? [],
                                previousTime: previous?.creationTime) {
            BackupManifest.isExcluded($0, bundleName: home.bundleName)
        }
        try containersErrors { try walker.walk("") }
        // The app's groups' shared containers, each walked on its own.
        var groups: [AppGroupIdentifier: [BackupEntry]] = [:]
        for group in entry.groups {
            guard let uuid = groupContainers[group] else { continue }
            let container = layout.groupContainer(uuid: uuid)
            guard FileSystem.isDirectory(container.path) else { continue }
            var groupWalker = HomeWalker(directory: container.path, store: store, options: options, previous: previous?.groups[group] ?? [],
                                         previousTime: previous?.creationTime, isExcluded: BackupManifest.isExcludedFromGroup)
            try containersErrors { try groupWalker.walk("") }
            groups[group] = groupWalker.entries
            walker.absorb(groupWalker, label: group.rawValue + ":")
        }
        var manifest = BackupManifest(bundleIdentifier: entry.bundleIdentifier, bundleName: entry.bundleName,
                                      version: entry.version, shortVersion: entry.shortVersion, deviceIdentifier: device,
                                      creationTime: started, entries: walker.entries, participants: payloads, groups: groups,
                                      team: entry.team)
        manifest.leftOut = walker.leftOut
        // The manifest is encoded on a second thread while the objects are
        // made durable and put in place; it is written only after that.
        let finished = manifest
        let encoding = writeManifest ? BackgroundJob { try finished.encoded() } : nil
        // Every new object durable at once, then in place, before the manifest names it.
        do {
            try containersErrors { try store.commitObjects() }
        } catch {
            _ = try? encoding?.join()
            throw error
        }
        var path = ""
        if let encoding {
            let bytes: [UInt8]
            do { bytes = try encoding.join() } catch let error as ContainersError { throw error } catch {
                throw .backupDamaged(path: "", reason: "cannot encode the manifest: \(error)")
            }
            path = store.newManifestPath(for: entry.bundleIdentifier, at: started)
            try containersErrors {
                try FileSystem.makeDirectories(store.manifestDirectory(for: entry.bundleIdentifier))
                TreeOperations.syncDirectory(store.directory)
                try FileSystem.writeAtomically(bytes, to: path)
            }
        }
        return BackupReport(manifestPath: path, manifest: manifest, filesRead: walker.filesRead, bytesRead: walker.bytesRead,
                            bytesStored: walker.bytesStored, objectsStored: walker.objectsStored, skipped: walker.skipped,
                            excluded: walker.excluded, databases: walker.databases, unsettled: walker.unsettled,
                            leftOut: walker.leftOut, notBackedUp: walker.notBackedUp)
    }

    /// The newest manifest of `identifier` that reads cleanly, for the
    /// quick check; a damaged one is passed over (the next backup then
    /// reads every file, which is slower but right).
    func newestReadableManifest(of identifier: BundleIdentifier, in store: BackupStore) -> BackupManifest? {
        guard let paths = try? store.manifests(of: identifier) else { return nil }
        for path in paths.reversed() {
            if let m = try? store.readManifest(path), m.bundleIdentifier == identifier { return m }
        }
        return nil
    }

    /// This root's device identifier (`HostIdentifier`), made on first use.
    func hostIdentifier() throws(ContainersError) -> String {
        do { return try HostIdentifier.loadOrCreate(root: layout.root) } catch {
            if case .system(let e) = error { throw .system(e) }
            throw .system(SystemError("\(error)", path: layout.root, errno: EIO))
        }
    }
}

/// Walks a home (or a group container) depth-first in byte order of
/// names, storing what changed.
struct HomeWalker {
    let directory: String
    let isExcluded: (String) -> Bool
    let store: BackupStore
    let options: BackupOptions
    /// Files of the previous backup by path, when their times can be trusted.
    /// By path, compared by exact scalars (``PlistKey``): names that are
    /// canonically equivalent are different files.
    let reusable: [PlistKey: BackupEntry]
    var entries: [BackupEntry] = []
    var filesRead = 0
    var bytesRead = 0
    var bytesStored = 0
    var objectsStored = 0
    var skipped: [String] = []
    var excluded: [String] = []
    var databases: [String] = []
    /// Files that never settled (kept as of the previous backup, or left out).
    var unsettled: [String] = []
    /// Unsettled files with no earlier whole state: not in the backup.
    var leftOut: [String] = []
    /// The previous backup's files by path (for an unsettled file's last whole state), and when it was taken.
    let previousFiles: [PlistKey: BackupEntry]
    let previousTime: PlistDate?
    var notBackedUp: [ContainerManager.NotBackedUp] = []

    /// - Parameters:
    ///   - previous: the same tree's entries in the previous backup, taken at `previousTime`.
    ///   - isExcluded: whether a relative path (and what is under it) is left out.
    init(directory: String, store: BackupStore, options: BackupOptions, previous: [BackupEntry], previousTime: PlistDate?,
         isExcluded: @escaping (String) -> Bool) {
        self.directory = directory
        self.isExcluded = isExcluded
        self.store = store
        self.options = options
        var files: [PlistKey: BackupEntry] = [:]
        for e in previous {
            if case .file = e.kind, !e.unsettled || e.earlierState != nil { files[PlistKey(e.path)] = e }
        }
        self.previousFiles = files
        self.previousTime = previousTime
        var reusable: [PlistKey: BackupEntry] = [:]
        if let previousTime {
            // Racy-file rule: a file modified in the same clock tick as the
            // previous scan could change again without its times changing,
            // so only files older than that scan's start are trusted.
            let cutoff = Int64(previousTime.secondsSince1970 * 1e9)
            for e in previous {
                if case .file = e.kind, !e.unsettled, e.modificationTime < cutoff, e.changeTime < cutoff { reusable[e.path] = e }
            }
        }
        self.reusable = reusable
    }

    /// Adds what `other` read, stored, skipped and excluded to this
    /// walker's counts (its entries stay its own); `label` prefixes its paths.
    mutating func absorb(_ other: HomeWalker, label: String) {
        filesRead += other.filesRead
        bytesRead += other.bytesRead
        bytesStored += other.bytesStored
        objectsStored += other.objectsStored
        skipped += other.skipped.map { label + $0 }
        excluded += other.excluded.map { label + $0 }
        databases += other.databases.map { label + $0 }
        unsettled += other.unsettled.map { label + $0 }
        leftOut += other.leftOut.map { label + $0 }
        notBackedUp += other.notBackedUp.map { ContainerManager.NotBackedUp(path: label + $0.path, reason: $0.reason) }
    }

    /// Records the items under `relative` (`""` for the top).
    mutating func walk(_ relative: String) throws {
        let dir = relative.isEmpty ? directory : directory + "/" + relative
        let fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else {
            if errno == ENOENT || errno == ENOTDIR { return }
            throw SystemError("opendir", path: dir, errno: errno)
        }
        defer { close(fd) }
        try walk(relative, at: dir, fd: fd)
    }

    /// Records the items of the directory `relative`, at `dir`, open as
    /// `dirFD`. Its items are named relative to `dirFD` (`fstatat`,
    /// `openat`): no walk of the whole path per file.
    private mutating func walk(_ relative: String, at dir: String, fd dirFD: Int32) throws {
        // Names are bytes: one that is not UTF-8 is not stored (a manifest
        // path is text) and is reported with its bytes escaped, never repaired.
        var names: [String] = []
        for raw in try FileNames.rawEntries(directory: dirFD, path: dir).sorted(by: { $0.lexicographicallyPrecedes($1) }) {
            if let name = FileNames.text(raw) { names.append(name) } else {
                skipped.append((relative.isEmpty ? "" : relative + "/") + FileNames.escaped(raw))
            }
        }
        // Databases of this directory: their -wal, -shm and -journal files,
        // which sort after them, are not stored (the copy holds what they held).
        var databasesHere: Set<PlistKey> = []
        for name in names {
            let rel = relative.isEmpty ? name : relative + "/" + name
            if isExcluded(rel) { continue }
            let path = dir + "/" + name
            var st = stat()
            guard fstatat(dirFD, name, &st, AT_SYMLINK_NOFOLLOW) == 0 else {
                if errno != ENOENT { throw SystemError("lstat", path: path, errno: errno) }
                continue // removed while we walked
            }
            let mode = UInt32(st.st_mode) & 0o7777
            switch st.st_mode & S_IFMT {
            case S_IFDIR:
                guard case let (sub, openError)? = openUnlessExcluded(dirFD, name, rel, path: path,
                                                                       flags: O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) else { continue }
                defer { if sub >= 0 { close(sub) } }
                entries.append(BackupEntry(path: rel, kind: .directory, mode: mode))
                if sub >= 0 {
                    try walk(rel, at: path, fd: sub)
                } else if openError != ENOENT && openError != ENOTDIR && openError != ELOOP {   // else gone or replaced meanwhile: empty
                    throw SystemError("opendir", path: path, errno: openError)
                }
            case S_IFLNK:
                let target = try TreeOperations.linkTarget(path)
                entries.append(BackupEntry(path: rel, kind: .symlink(target: target), mode: mode))
            case S_IFREG:
                guard case let (fd, openError)? = openUnlessExcluded(dirFD, name, rel, path: path,
                                                                     flags: O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC) else { continue }
                defer { if fd >= 0 { close(fd) } }
                if let stem = Self.companionStem(name), databasesHere.contains(PlistKey(stem)) { continue }
                guard fd >= 0 else { throw SystemError("open", path: path, errno: openError) }
                let (entry, isDatabase) = try file(rel, path: path, fd: fd, in: dirFD, name: name)
                if isDatabase { databasesHere.insert(PlistKey(name)) }
                if let entry { entries.append(entry) }
            default:
                if lgetxattr(path, BackupService.excludeFromBackupAttribute, nil, 0) >= 0 {
                    excluded.append(rel)
                    continue
                }
                skipped.append(rel)
            }
        }
    }

    /// Opens the entry `name` (`rel`) of the directory open as `dirFD` with
    /// `flags`, then reads the exclusion mark from the descriptor (so the
    /// mark is the opened item's), or from `path` when it could not be opened.
    /// - Returns: the descriptor (-1 when the open failed) and the open's
    ///   `errno` (0 when it succeeded); `nil` when the item is marked: it is
    ///   then recorded in ``excluded`` and its descriptor closed.
    private mutating func openUnlessExcluded(_ dirFD: Int32, _ name: String, _ rel: String, path: String, flags: Int32) -> (fd: Int32, error: Int32)? {
        let fd = openat(dirFD, name, flags)
        let error = fd < 0 ? errno : 0
        guard Self.isMarkedExcluded(fd, path: path) else { return (fd, error) }
        if fd >= 0 { close(fd) }
        excluded.append(rel)
        return nil
    }

    /// Whether the item open as `fd` (or at `path` when it could not be
    /// opened: `fd` < 0) carries ``BackupService/excludeFromBackupAttribute``.
    private static func isMarkedExcluded(_ fd: Int32, path: String) -> Bool {
        if fd >= 0 { return fgetxattr(fd, BackupService.excludeFromBackupAttribute, nil, 0) >= 0 }
        return lgetxattr(path, BackupService.excludeFromBackupAttribute, nil, 0) >= 0
    }

    /// Records the regular file `rel` (at `path`, open as `fd`, the entry
    /// `name` of the directory open as `dirFD`): a SQLite database through
    /// SQLite's backup API, any other file by reading it until it holds still.
    ///
    /// - Returns: the entry (`nil` for a database that could not be
    ///   copied, reported in ``notBackedUp``), and whether the file is a database.
    private mutating func file(_ rel: String, path: String, fd: Int32, in dirFD: Int32, name: String) throws -> (BackupEntry?, database: Bool) {
        var fst = stat()
        guard fstat(fd, &fst) == 0 else { throw SystemError("stat", path: path, errno: errno) }
        guard fst.st_mode & S_IFMT == S_IFREG else { throw SystemError("open", path: path, errno: EINVAL) }
        // Peeked at even when the quick check would pass: a database's
        // changes may be in its -wal alone, which leaves its own times as they were.
        if try Self.startsWithSQLiteHeader(fd, path: path) {
            switch try database(rel, path: path, fst) {
            case .stored(let entry): return (entry, true)
            case .notBackedUp: return (nil, true)
            case .notADatabase: break   // its bytes, as for any file
            }
        }
        let state = FileStatus(fst)
        if !reusable.isEmpty, let old = reusable[rel], case .file(let hash, let size) = old.kind, size == state.size,
           old.modificationTime == state.modificationTime, old.changeTime == state.changeTime, old.inode == state.inode {
            if let ost = try store.objectStatus(hash), Int(ost.st_size) == old.storedSize {
                return (BackupEntry(path: rel, kind: old.kind, mode: UInt32(fst.st_mode) & 0o7777, modificationTime: state.modificationTime,
                                    changeTime: state.changeTime, inode: state.inode, extents: old.extents), false)
            }
        }
        // `fst`, taken before anything was read, is the first read's "before".
        return (try settledFile(rel, path: path, fd: fd, status: fst, in: dirFD, name: name), false)
    }
}
