#if canImport(Glibc)
import Glibc
#endif
import AppHomeSystem
import Containers
import Synchronization
import Preferences
import PropertyList
import SQLiteBackup

extension BackupService {
    /// What a restore did.
    public struct RestoreReport: Equatable, Sendable {
        /// The manifest restored from.
        public var manifestPath: String
        public var manifest: BackupManifest
        /// The entry the restore replaced; `nil` when the app was not installed.
        public var previous: RegistryEntry?
        /// The entry now installed.
        public var entry: RegistryEntry
        /// The new home holding the restored data.
        public var home: ApplicationHome
        public var filesRestored: Int
        public var bytesRestored: Int
        /// Whether the backup was taken on another device (another root's host identifier).
        public var fromAnotherDevice: Bool
        /// What participants reported (items skipped and why).
        public var notes: [String]
        /// Participants that failed, and payloads no participant took: data
        /// in the backup that was not restored.
        public var participantFailures: [String]
        /// Files the backup could not take whole (``BackupManifest/notWhole``),
        /// each with what the restore did with it: restored as an earlier
        /// backup read it, restored as last read (an older backup's torn
        /// read), or not restored at all.
        public var notWhole: [NotWhole] = []
        /// The replaced home, when it could not be removed after the switch.
        public var leftoverHome: String?
        public var leftoverReason: String?
    }

    /// The newest backup of `identifier` in the store at `directory`.
    ///
    /// - Throws: ``ContainersError/noBackup(identifier:directory:)``.
    public func latestBackup(of identifier: BundleIdentifier, in directory: String? = nil) throws(ContainersError) -> String {
        let store = BackupStore(directory: directory ?? defaultBackupDirectory)
        guard let newest = try store.manifests(of: identifier).last else {
            throw .noBackup(identifier: identifier.rawValue, directory: store.directory)
        }
        return newest
    }

    /// Restores the backup whose manifest is at `manifestPath`
    /// (`<store>/<bundle-id>/<stamp>.plist`).
    ///
    /// The data goes into a **new** home, built beside the current one and
    /// verified before anything changes: the manifest's version, checksum
    /// and paths; its app against the folder it is in and against `bundle`;
    /// every object's presence and size; then, while each object is copied
    /// into the new home, its BLAKE2b-256 against the manifest. Any failure
    /// removes the new home and throws: the installed app, its data and the
    /// registry are exactly as they were. Then the registry is switched to
    /// the new home (the commit point, atomic), the old home is removed, and
    /// participants get their payloads.
    ///
    /// - Installed app, no `bundle`: the installed bundle is copied into the
    ///   new home; the restored data replaces the old data; `Library/Caches`
    ///   and `tmp` start empty.
    /// - `bundle` given: it is installed in the new home (same bundle id as
    ///   the backup), whether or not the app was installed.
    /// - Not installed and no `bundle`: ``ContainersError/restoreNeedsBundle(_:)``.
    ///
    /// Versions only go up: when the app is installed, a `bundle` or a
    /// backup of a lower `CFBundleVersion` than the installed one is a
    /// downgrade, refused unless `allowDowngrade`
    /// (``ContainersError/downgrade(identifier:installed:offered:reason:)``).
    ///
    /// - Throws: ``ContainersError/backupMissing(path:)``,
    ///   ``ContainersError/backupDamaged(path:reason:)``,
    ///   ``ContainersError/backupVersionTooNew(path:found:supported:)``,
    ///   ``ContainersError/backupOfAnotherApp(path:found:expected:)``,
    ///   ``ContainersError/restoreNeedsBundle(_:)``, ``ContainersError/system(_:)``.
    ///
    /// Every participant checks its payload with `secrets` first
    /// (``AppDataParticipant/checkRestore(_:secrets:)``); a refusal, such
    /// as a wrong backup password, is
    /// ``ContainersError/participantRefusedRestore(name:identifier:reason:)``
    /// and nothing is changed.
    public func restore(from manifestPath: String, bundle: AppBundle? = nil,
                        secrets: BackupSecrets = .none, allowDowngrade: Bool = false) throws(ContainersError) -> RestoreReport {
        let transaction = try registry.beginTransaction()
        defer { transaction.end() }
        let (store, manifest) = try BackupStore.openBackup(manifestPath)
        return try restore(manifest, manifestPath: manifestPath, source: .store(store), bundle: bundle, secrets: secrets,
                           allowDowngrade: allowDowngrade, transaction: transaction)
    }

    /// The restore proper, under `transaction`, of `manifest` (read from
    /// `manifestPath`, for messages), whose files are in `source`.
    func restore(_ manifest: BackupManifest, manifestPath: String, source: RestoreSource, bundle: AppBundle?,
                 secrets: BackupSecrets, allowDowngrade: Bool, transaction: RegistryTransaction) throws(ContainersError) -> RestoreReport {
        func damaged(_ reason: String) -> ContainersError { .backupDamaged(path: manifestPath, reason: reason) }
        if let bundle, bundle.identifier != manifest.bundleIdentifier {
            throw .backupOfAnotherApp(path: manifestPath, found: manifest.bundleIdentifier.rawValue, expected: bundle.identifier.rawValue)
        }
        var current = transaction.registry
        let previous = current.entries[manifest.bundleIdentifier]
        guard bundle != nil || previous != nil else { throw .restoreNeedsBundle(manifest.bundleIdentifier.rawValue) }
        // The publisher: a signed app's data goes only to an app of the same team.
        let targetTeam = bundle.map { $0.signature?.team } ?? previous!.team
        if let bundle {
            try checkEntitlements(bundle, in: current)
            if let previous { try checkSamePublisher(bundle.signature?.team, replacing: previous) }
        }
        if let previous {
            if let bundle {
                try checkNotDowngrade(previous.bundleIdentifier, installed: previous.version, installedDisplay: previous.displayVersion,
                                      offered: bundle.version, offeredDisplay: bundle.displayVersion, what: "the bundle", allowDowngrade: allowDowngrade)
            }
            try checkNotDowngrade(previous.bundleIdentifier, installed: previous.version, installedDisplay: previous.displayVersion,
                                  offered: manifest.version, offeredDisplay: manifest.displayVersion, what: "the backup", allowDowngrade: allowDowngrade)
        }
        if let backupTeam = manifest.team, backupTeam != targetTeam {
            throw .differentPublisher(identifier: manifest.bundleIdentifier.rawValue, installed: "team \(backupTeam) (the backup's)",
                                      offered: targetTeam.map { "team \($0)" } ?? "an unsigned bundle")
        }
        let release = try previous.map { entry throws(ContainersError) in try lockAgainstRunning(entry) }
        defer { release?() }
        let bundleName = bundle?.name ?? previous!.bundleName
        let bundleSource = bundle?.path ?? layout.home(uuid: previous!.homeUUID, bundleName: previous!.bundleName).app

        if manifest.entries.contains(where: { $0.path == bundleName }) {
            throw damaged("entry '\(FileNames.escaped(bundleName))' is in a directory that is never backed up")
        }
        for (name, payload) in manifest.participants.sorted(by: { $0.key < $1.key }) {
            guard let participant = participants.first(where: { $0.name == name }) else { continue }
            do {
                try participant.checkRestore(payload, secrets: secrets)
            } catch {
                throw .participantRefusedRestore(name: name, identifier: manifest.bundleIdentifier.rawValue, reason: "\(error)")
            }
        }

        // The app's groups in the backup: restored into a new container
        // unless another installed app shares the group's live container.
        let declared = bundle.map { $0.signature?.entitlements.applicationGroups ?? [] } ?? previous!.groups
        var groupNotes: [String] = []
        var notWhole: [NotWhole] = []
        for e in manifest.allEntries where e.unsettled {
            if let time = e.earlierState {
                notWhole.append(NotWhole(path: e.path, restored: .earlierState(time)))
            } else {
                notWhole.append(NotWhole(path: e.path, restored: .asLastRead))
            }
        }
        for path in manifest.leftOut { notWhole.append(NotWhole(path: path, restored: .notRestored)) }
        var restoredGroups: [AppGroupIdentifier: String] = [:]
        for group in manifest.groups.keys.sorted() {
            guard declared.contains(group) else {
                groupNotes.append("app group \(group): the app no longer declares it; its data in the backup was not restored")
                continue
            }
            let others = current.sortedEntries.filter { $0.bundleIdentifier != manifest.bundleIdentifier && $0.groups.contains(group) }
            if !others.isEmpty && current.groups[group] != nil {
                let names = others.map(\.bundleIdentifier.rawValue).joined(separator: ", ")
                groupNotes.append("app group \(group): kept as it is, since \(names) also use\(others.count == 1 ? "s" : "") it; the backup's copy was not restored")
                continue
            }
            restoredGroups[group] = makeUUID()
        }

        // Room for it all, checked before anything is written.
        let needed = manifest.entries.filter { BackupManifest.isRestored($0.path) }.reduce(0) { $0 + $1.storedSize }
            + restoredGroups.keys.reduce(0) { sum, g in sum + manifest.groups[g]!.reduce(0) { $0 + $1.storedSize } }
        try containersErrors {
            try FileSystem.makeDirectories(layout.applicationsDirectory)
            let free = try SpaceCheck.free(at: layout.applicationsDirectory)
            let usable = free.available - SpaceCheck.reserve(total: free.total)
            if needed > usable { throw ContainersError.notEnoughSpace(path: layout.applicationsDirectory, needed: needed, available: max(0, usable)) }
        }

        let uuid = makeUUID()
        let home = layout.home(uuid: uuid, bundleName: bundleName)
        var created = false
        var createdGroups: [String] = []
        var files = 0
        var bytes = 0
        do throws(ContainersError) {
            try containersErrors {
                try TreeOperations.makeDirectory(layout.applicationsDirectory)
                try TreeOperations.makeNewDirectory(home.path)
                created = true
                _ = try TreeOperations.copyReadOnly(bundleSource, to: home.app)
                for dir in home.standardDirectories { try TreeOperations.makeDirectory(dir) }
            }
            if let bundle { try checkCopy(of: bundle, at: home.app) }
            try materialize(manifest.entries.filter { BackupManifest.isRestored($0.path) }, into: home.path, group: nil,
                            from: source, manifestPath: manifestPath, files: &files, bytes: &bytes)
            for (group, groupUUID) in restoredGroups.sorted(by: { $0.key < $1.key }) {
                let container = layout.groupContainer(uuid: groupUUID)
                try containersErrors {
                    try FileSystem.makeDirectories(layout.groupsDirectory)
                    try TreeOperations.makeNewDirectory(container.path)
                    createdGroups.append(container.path)
                    for dir in container.standardDirectories { try TreeOperations.makeDirectory(dir) }
                    try container.writeIdentity(group)
                }
                try materialize(manifest.groups[group]!, into: container.path, group: group,
                                from: source, manifestPath: manifestPath, files: &files, bytes: &bytes)
            }
            // Everything restored durable at once: one `syncfs`, not one `fsync` per file and directory.
            try containersErrors { try BackupStore.syncFileSystem(of: home.path) }
        } catch {
            if created { try? TreeOperations.remove(home.path) }
            for path in createdGroups { try? TreeOperations.remove(path) }
            throw error
        }

        // The app groups a given bundle declares that have no container yet.
        var newGroups: [AppGroupIdentifier: String] = [:]
        for group in bundle?.signature?.entitlements.applicationGroups ?? [] where current.groups[group] == nil && restoredGroups[group] == nil {
            newGroups[group] = makeUUID()
        }

        // The commit point.
        var entry: RegistryEntry
        if let bundle { entry = makeEntry(bundle, uuid: uuid) } else { entry = previous!; entry.homeUUID = uuid }
        current.entries[entry.bundleIdentifier] = entry
        let replacedGroups = restoredGroups.keys.compactMap { current.groups[$0] }
        current.groups.merge(newGroups) { old, _ in old }
        current.groups.merge(restoredGroups) { _, new in new }
        current.recordTeam(entry.team, of: newGroups.keys)
        current.recordTeam(entry.team, of: restoredGroups.keys)
        do {
            try createGroupContainers(newGroups)
            try transaction.commit(current)
        } catch {
            try? TreeOperations.remove(home.path)
            removeGroupContainers(newGroups)
            for path in createdGroups { try? TreeOperations.remove(path) }
            throw error
        }
        for uuid in replacedGroups { try? TreeOperations.remove(layout.groupContainer(uuid: uuid).path) }
        if !replacedGroups.isEmpty { TreeOperations.syncDirectory(layout.groupsDirectory) }

        var report = RestoreReport(manifestPath: manifestPath, manifest: manifest, previous: previous, entry: entry, home: home,
                                   filesRestored: files, bytesRestored: bytes,
                                   fromAnotherDevice: (try? hostIdentifier()) != manifest.deviceIdentifier,
                                   notes: groupNotes, participantFailures: [], notWhole: notWhole)
        if let previous {
            let old = layout.home(uuid: previous.homeUUID, bundleName: previous.bundleName)
            do {
                try containersErrors { try TreeOperations.remove(old.path) }
                TreeOperations.syncDirectory(layout.applicationsDirectory)
            } catch {
                report.leftoverHome = old.path
                report.leftoverReason = error.description
            }
        }
        report.participantFailures += announceHome(entry, home: home)
        for name in manifest.participants.keys.sorted() {
            guard let participant = participants.first(where: { $0.name == name }) else {
                report.participantFailures.append("the backup holds \(name) data, but no \(name) is available here; it was not restored")
                continue
            }
            do {
                report.notes += try participant.restore(manifest.participants[name]!, for: entry, secrets: secrets)
            } catch {
                report.participantFailures.append("\(name) restore for \(entry.bundleIdentifier.rawValue) failed: \(error)")
            }
        }
        return report
    }

    /// Recreates `entries` (parents first) under `top`, copying each file
    /// from `source` and checking its hash; nothing is `fsync`ed here (the
    /// caller makes the whole restore durable with one `syncfs`). `group`
    /// names the group container the entries are of (`nil`: the home).
    ///
    /// Directories and links are made first, in order; then the files are
    /// copied on up to ``restoreThreads`` threads, each taking the files of
    /// one directory at a time (creations in one directory share its lock).
    /// The manifest was checked to list every entry's parent as a
    /// directory before it, so no file lands under a link. On failure the
    /// error of the first failing entry in manifest order is thrown, and
    /// the caller removes the half-made home.
    private func materialize(_ entries: [BackupEntry], into top: String, group: AppGroupIdentifier?, from source: RestoreSource,
                             manifestPath: String, files: inout Int, bytes: inout Int) throws(ContainersError) {
        var fileRuns: [Range<Int>] = []   // consecutive files of one directory
        var runParent = ""
        for (i, e) in entries.enumerated() {
            let target = top + "/" + e.path
            switch e.kind {
            case .directory:
                try containersErrors { try TreeOperations.makeDirectory(target) }
            case .symlink(let linkTarget):
                try containersErrors {
                    guard symlink(linkTarget, target) == 0 else { throw SystemError("symlink", path: target, errno: errno) }
                }
            case .file:
                let parent = BackupManifest.parent(e.path)
                if let last = fileRuns.last, last.upperBound == i, parent == runParent {
                    fileRuns[fileRuns.count - 1] = last.lowerBound..<(i + 1)
                } else {
                    fileRuns.append(i..<(i + 1))
                    runParent = parent
                }
            }
        }
        let runs = fileRuns
        let fileCount = runs.reduce(0) { $0 + $1.count }
        let threads = fileCount >= 256 ? min(Self.restoreThreads, runs.count) : 1
        let next = Atomic<Int>(0)
        let failed = Atomic<Bool>(false)
        let outcome = Mutex<(files: Int, bytes: Int, failure: (index: Int, error: ContainersError)?)>((0, 0, nil))
        let work = { @Sendable (_: Int) in
            var copiedFiles = 0, copiedBytes = 0
            var failure: (index: Int, error: ContainersError)?
            runs: while !failed.load(ordering: .relaxed) {
                let r = next.wrappingAdd(1, ordering: .relaxed).oldValue
                guard r < runs.count else { break }
                for i in runs[r] {
                    do throws(ContainersError) {
                        copiedBytes += try Self.restoreFile(entries[i], into: top, group: group, from: source, manifestPath: manifestPath)
                        copiedFiles += 1
                    } catch {
                        failure = (i, error)
                        failed.store(true, ordering: .relaxed)
                        break runs
                    }
                }
            }
            outcome.withLock { o in
                o.files += copiedFiles
                o.bytes += copiedBytes
                if let failure, o.failure.map({ failure.index < $0.index }) ?? true { o.failure = failure }
            }
        }
        Threads.parallel(threads, work)
        let result = outcome.withLock { $0 }
        if let failure = result.failure { throw failure.error }
        files += result.files
        bytes += result.bytes
    }

    /// How many threads a restore copies files on: the cores there are, at most 4.
    static let restoreThreads = min(4, Threads.processors)

    /// Copies the file `entry` from `source` to its place under `top`,
    /// checked against its hash. - Returns: the bytes of data copied.
    private static func restoreFile(_ e: BackupEntry, into top: String, group: AppGroupIdentifier?, from source: RestoreSource,
                                    manifestPath: String) throws(ContainersError) -> Int {
        guard case .file(let hash, let size) = e.kind else { return 0 }
        let label = group.map { $0.rawValue + ":" } ?? ""
        let target = top + "/" + e.path
        let (path, packed) = source.file(e, group: group)
        let copied: ContentHash?
        do {
            copied = try Self.materialize(path, packed: packed, to: target, entry: e, below: source.top)
        } catch let error as SystemError where error.errno == ENOENT && error.path == path {
            throw .backupDamaged(path: manifestPath, reason: "the stored copy of \(FileNames.escaped(label + e.path)) is missing")
        } catch let error as SystemError where DirectoryTree.isLinkRefusal(error) {
            throw .backupDamaged(path: manifestPath, reason: "the stored copy of \(FileNames.escaped(label + e.path)) is reached through a symbolic link, "
                                 + "which AppHome does not follow in a backup")
        } catch {
            throw .system(error as? SystemError ?? SystemError("\(error)", path: target, errno: EIO))
        }
        guard copied == hash else {
            throw .backupDamaged(path: manifestPath, reason: "\(FileNames.escaped(label + e.path)) does not match its checksum")
        }
        return size
    }

    /// Copies the file at `source` to a new file `target` with the entry's
    /// mode and modification time, a sparse file's data at its extents
    /// (its holes left as holes), and returns the hash of the data copied,
    /// or `nil` when the source holds a different amount of it. `packed`:
    /// the source holds the data alone (an object); otherwise it is laid
    /// out as the file was (a tree restic restored). `below`: the top of
    /// that tree, below which no symbolic link is followed.
    static func materialize(_ source: String, packed: Bool, to target: String, entry: BackupEntry,
                            below top: String? = nil) throws -> ContentHash? {
        let hasher = ContentHasher()
        let (seconds, nanoseconds) = entry.modificationTime.quotientAndRemainder(dividingBy: 1_000_000_000)
        let time = nanoseconds < 0 ? timespec(tv_sec: Int(seconds) - 1, tv_nsec: Int(nanoseconds) + 1_000_000_000)
                                   : timespec(tv_sec: Int(seconds), tv_nsec: Int(nanoseconds))
        // Never blocks (a FIFO put in an object's place) and never follows a link.
        let input = try top.map { top in
            try DirectoryTree.openFile(source, below: top, flags: O_RDONLY | O_NONBLOCK) ?? { throw SystemError("open", path: source, errno: ENOENT) }()
        } ?? open(source, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC)
        guard input >= 0 else { throw SystemError("open", path: source, errno: errno) }
        defer { close(input) }
        var st = stat()
        guard fstat(input, &st) == 0 else { throw SystemError("stat", path: source, errno: errno) }
        guard st.st_mode & S_IFMT == S_IFREG else { throw SystemError("open", path: source, errno: EINVAL) }
        let output = open(target, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard output >= 0 else { throw SystemError("create", path: target, errno: errno) }
        defer { close(output) }
        // The data, in order, goes to the extents in order (or from 0 on).
        let extents = entry.extents ?? [FileExtent(offset: 0, length: entry.storedSize)]
        var index = 0
        var within = 0
        var total = 0
        var overflow = false
        func copy(_ chunk: [UInt8]) throws {
            hasher.update(chunk)
            total += chunk.count
            var rest = chunk[...]
            while !rest.isEmpty {
                guard index < extents.count else { overflow = true; return }
                let e = extents[index]
                let piece = rest.prefix(e.length - within)
                try piece.withUnsafeBytes { raw in
                    var done = 0
                    while done < raw.count {
                        let n = pwrite(output, raw.baseAddress! + done, raw.count - done, off_t(e.offset + within + done))
                        if n < 0 {
                            if errno == EINTR { continue }
                            throw SystemError("write", path: target, errno: errno)
                        }
                        done += n
                    }
                }
                within += piece.count
                rest = rest.dropFirst(piece.count)
                if within == e.length { index += 1; within = 0 }
            }
        }
        if packed {
            try FileExtent.readFresh(input, size: Int(st.st_size), path: source, copy)
        } else {
            try FileExtent.read(input, entry.extents, path: source, sizeHint: entry.storedSize, copy)
        }
        guard !overflow, total == entry.storedSize else { return nil }
        if case .file(_, let size) = entry.kind, entry.extents != nil {
            guard ftruncate(output, off_t(size)) == 0 else { throw SystemError("truncate", path: target, errno: errno) }
        }
        guard fchmod(output, mode_t(entry.mode & 0o777)) == 0 else { throw SystemError("chmod", path: target, errno: errno) }
        // `UTIME_OMIT` (a macro Swift does not import) leaves the access time alone.
        var times = [timespec(tv_sec: 0, tv_nsec: (1 << 30) - 2), time]
        guard futimens(output, &times) == 0 else { throw SystemError("utimens", path: target, errno: errno) }
        return hasher.finish()
    }

    /// Checks the backup at `manifestPath` completely without restoring it:
    /// everything ``restore(from:bundle:)`` checks before it changes
    /// anything, including the hash of every object; and every stored file
    /// that starts with SQLite's header must pass `PRAGMA integrity_check`.
    ///
    /// - Parameter checkedDatabase: told each database checked (its path in
    ///   the backup, `<group-id>:` first for a group's) and SQLite's first
    ///   complaint, `nil` when `PRAGMA integrity_check` says ok; before the
    ///   error that names a failing one is thrown.
    /// - Returns: the manifest.
    /// - Throws: the errors of ``restore(from:bundle:)`` about the backup.
    public func verifyBackup(at manifestPath: String,
                             checkedDatabase: (_ path: String, _ problem: String?) -> Void = { _, _ in }) throws(ContainersError) -> BackupManifest {
        let (store, manifest) = try BackupStore.openBackup(manifestPath)
        var checked: Set<ContentHash> = []
        var databases: [ContentHash: String?] = [:]   // a database stored once for two files is named for each
        for e in manifest.allEntries {
            guard case .file(let hash, _) = e.kind else { continue }
            if let known = databases[hash] { checkedDatabase(e.path, known) }
            guard checked.insert(hash).inserted else { continue }
            let hasher = ContentHasher()
            var prefix: [UInt8] = []
            try containersErrors {
                guard let (fd, _) = try FileSystem.openRegularFile(store.objectPath(hash), limit: Int.max, followLinks: false) else {
                    throw SystemError("open", path: store.objectPath(hash), errno: ENOENT)
                }
                defer { close(fd) }
                try TreeOperations.readAll(fd, path: store.objectPath(hash)) { chunk in
                    if prefix.count < 16 { prefix += chunk.prefix(16 - prefix.count) }
                    hasher.update(chunk)
                }
            }
            guard hasher.finish() == hash else {
                throw .backupDamaged(path: manifestPath, reason: "\(FileNames.escaped(e.path)) does not match its checksum")
            }
            let problem = Self.databaseProblem(store.objectPath(hash), prefix: prefix)
            if SQLiteDatabase.hasHeader(prefix) {
                databases[hash] = .some(problem)
                checkedDatabase(e.path, problem)
            }
            if let problem {
                throw .backupDamaged(path: manifestPath, reason: "\(FileNames.escaped(e.path)) is a database that fails SQLite's integrity check: \(problem)")
            }
        }
        return manifest
    }

    /// The backups in the store at `directory`, oldest first per app, apps
    /// in bundle-id order; each with its manifest or why it cannot be read.
    public func backups(in directory: String? = nil, of identifier: BundleIdentifier? = nil)
        throws(ContainersError) -> [(path: String, manifest: Result<BackupManifest, ContainersError>)] {
        let store = BackupStore(directory: directory ?? defaultBackupDirectory)
        let ids: [BundleIdentifier]
        if let identifier { ids = [identifier] } else { ids = try store.identifiers() }
        var result: [(path: String, manifest: Result<BackupManifest, ContainersError>)] = []
        for id in ids {
            for path in try store.manifests(of: id) {
                do throws(ContainersError) {
                    let m = try store.readManifest(path)
                    if m.bundleIdentifier != id {
                        throw ContainersError.backupOfAnotherApp(path: path, found: m.bundleIdentifier.rawValue, expected: id.rawValue)
                    }
                    result.append((path, .success(m)))
                } catch {
                    result.append((path, .failure(error)))
                }
            }
        }
        return result
    }
}

extension BackupService {
    /// A file a restore could not bring back whole, and what it did instead.
    public struct NotWhole: Equatable, Sendable {
        public enum Restored: Equatable, Sendable {
            /// Restored as the earlier backup taken at this time read it whole.
            case earlierState(PlistDate)
            /// Restored as last read by a backup of format 3, which may mix two versions.
            case asLastRead
            /// Not in the backup: not restored.
            case notRestored
        }

        /// The path in the home, or `<group-id>:<path>`.
        public var path: String
        public var restored: Restored
    }

    /// Where a restore finds the files of a backup.
    enum RestoreSource {
        /// A backup store's objects (each the data alone).
        case store(BackupStore)
        /// A tree laid out as the home was: `home` and each group's container
        /// (what `restic restore` wrote), all below `top`, where no link is followed.
        case tree(top: String, home: String, groups: [AppGroupIdentifier: String])

        /// The directory below which the files are opened without following a link.
        var top: String? {
            if case .tree(let top, _, _) = self { return top }
            return nil
        }

        /// The file holding `entry` (of `group`'s container, or of the home),
        /// and whether it holds the data alone.
        func file(_ entry: BackupEntry, group: AppGroupIdentifier?) -> (path: String, packed: Bool) {
            switch self {
            case .store(let store):
                guard case .file(let hash, _) = entry.kind else { return ("", true) }
                return (store.objectPath(hash), true)
            case .tree(_, let home, let groups):
                let top = group.map { groups[$0] ?? "" } ?? home
                return (top + "/" + entry.path, false)
            }
        }
    }
}
