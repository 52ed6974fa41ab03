#if canImport(Glibc)
import Glibc
#endif
import AppHomeSystem
import Containers
import Preferences
import PropertyList

/// Backups in a restic repository: the same consistent state a local
/// backup stores, handed to restic as a tree.
///
/// One restic snapshot per app backup, tagged `apphome` and the bundle id,
/// its contents at the snapshot's top:
///
/// ```
/// /home/…                   the home's files as files (without the bundle, Library/Caches, tmp, Library/Keychains)
/// /groups/<group-id>/…      each app group's shared container (without Library/Caches)
/// /AppHome/manifest.plist   AppHome's manifest (Schemas/backup.md): team, hashes, participants' payloads (keychain)
/// /AppHome/Info.plist       a readable summary: version, team, databases, unsettled and left-out files
/// ```
///
/// So `restic ls`, `restic mount` and a plain `restic restore` reach the
/// data without AppHome; `apphome restore --from restic:` checks every file
/// against the manifest's BLAKE2b-256 before anything changes.
extension BackupService {
    /// What one backup to restic did.
    public struct ResticBackupReport: Sendable {
        /// The local part: what was read, the manifest, unsettled and left-out files.
        public var backup: BackupReport
        public var snapshotID: String
        /// Bytes the snapshot added to the repository (after deduplication and compression).
        public var dataAdded: Int
        /// Bytes restic looked at.
        public var bytesProcessed: Int
    }

    /// The tags of an app's snapshots.
    static func resticTags(_ identifier: BundleIdentifier?) -> [String] {
        ["apphome"] + (identifier.map { [$0.rawValue] } ?? [])
    }

    /// Where a backup to restic lays out its tree (the same path each time,
    /// so restic finds the previous snapshot as its parent and does not
    /// read unchanged files again), and where a restore from restic
    /// unpacks: under `<root>/Backups/.restic/`.
    var resticWorkDirectory: String { defaultBackupDirectory + "/.restic" }

    /// Backs up `identifier` into the restic repository `repository`: the
    /// home is read exactly as for a local backup (databases through SQLite's
    /// backup API, files only once settled, the same exclusions, the
    /// participants' payloads), into a private store under
    /// `<root>/Backups/.restic/<bundle-id>/store` that holds the last backup
    /// to restic only (so the next one does not read unchanged files again,
    /// and an unsettled file keeps the whole state that one read); that is
    /// laid out as a tree (files hard-linked from the store, sparse files
    /// sparse) and given to `restic backup`. The tree is removed afterwards,
    /// whatever happens.
    ///
    /// - Parameter initialize: create the repository (`restic init`) when there is none.
    /// - Throws: ``ResticError`` (nothing was stored), ``ContainersError``.
    public func backup(_ identifier: BundleIdentifier, toRestic repository: ResticRepository, initialize: Bool = false,
                       secrets: BackupSecrets = .none, options: BackupOptions = BackupOptions()) throws -> ResticBackupReport {
        try repository.checkVersion()
        // No separate look at the repository first: each restic command that
        // opens it pays for the key derivation (about 0.7 s), so `restic
        // backup` itself says whether the repository is there and the password right.
        let transaction = try registry.beginTransaction()
        defer { transaction.end() }
        let current = transaction.registry
        guard let entry = current.entries[identifier] else { throw ContainersError.notInstalled(identifier.rawValue) }
        let work = resticWorkDirectory + "/" + identifier.rawValue
        let tree = work + "/tree"
        try FileSystem.makeDirectories(resticWorkDirectory)
        // The private store is kept between backups to restic (so an unchanged
        // file is not read again, and an unsettled one keeps its earlier whole
        // state), but only when the last backup finished in this boot: its
        // objects are not fsynced, and a crash may have lost them.
        let marker = work + "/complete"
        if FileSystem.exists(work) && (try? FileSystem.readFileIfPresent(marker)) != Self.bootIdentifier() {
            try TreeOperations.remove(work)
        }
        try FileSystem.makeDirectories(work)
        try? FileSystem.removeFile(marker)
        try TreeOperations.remove(tree)
        defer { try? TreeOperations.remove(tree) }
        let store = BackupStore(directory: work + "/store", durable: false)
        let storeLock = try store.open()
        defer { storeLock.unlock() }
        let report = try backup(entry, groupContainers: current.groups, into: store, secrets: secrets, options: options)
        let manifest = report.manifest
        try Self.keepOnly(report.manifestPath, of: identifier, in: store)

        // The tree restic stores.
        try TreeOperations.makeNewDirectory(tree)
        try lay(manifest.entries, from: store, into: tree + "/home")
        if !manifest.groups.isEmpty {
            try TreeOperations.makeNewDirectory(tree + "/groups")
            for (group, entries) in manifest.groups.sorted(by: { $0.key < $1.key }) {
                try lay(entries, from: store, into: tree + "/groups/" + group.rawValue)
            }
        }
        try TreeOperations.makeNewDirectory(tree + "/AppHome")
        try FileSystem.writeAtomically(try manifest.encoded(), to: tree + "/AppHome/manifest.plist")
        try FileSystem.writeAtomically(try Self.resticSummary(manifest, report: report), to: tree + "/AppHome/Info.plist")

        let result: (id: String, dataAdded: Int, bytesProcessed: Int)
        do {
            result = try repository.backup(tree, tags: Self.resticTags(identifier))
        } catch ResticError.noRepository(let r) {
            guard initialize else { throw ResticError.noRepository(repository: r) }
            try repository.initialize()
            result = try repository.backup(tree, tags: Self.resticTags(identifier))
        }
        try FileSystem.writeAtomically(Self.bootIdentifier() ?? [], to: marker)
        return ResticBackupReport(backup: report, snapshotID: result.id, dataAdded: result.dataAdded, bytesProcessed: result.bytesProcessed)
    }

    /// This boot's identifier (`/proc/sys/kernel/random/boot_id`), or `nil`.
    static func bootIdentifier() -> [UInt8]? {
        (try? FileSystem.readFileIfPresent("/proc/sys/kernel/random/boot_id")) ?? nil
    }

    /// Removes from the private store of a backup to restic every manifest
    /// but `newest`, and every object it does not name.
    static func keepOnly(_ newest: String, of identifier: BundleIdentifier, in store: BackupStore) throws {
        for path in try store.manifests(of: identifier) where path != newest { try FileSystem.removeFile(path) }
        var named: Set<String> = []
        for e in try store.readManifest(newest).allEntries {
            if case .file(let hash, _) = e.kind { named.insert(store.objectPath(hash)) }
        }
        for prefix in try FileSystem.directoryEntries(store.objectsDirectory) where !prefix.hasPrefix(".") {
            let dir = store.objectsDirectory + "/" + prefix
            for name in try FileSystem.directoryEntries(dir) where !named.contains(dir + "/" + name) {
                try FileSystem.removeFile(dir + "/" + name)
            }
        }
    }

    /// Makes `top` and the tree `entries` describe under it, each file a
    /// hard link to its object when that is the first entry to use it
    /// (the store is private and goes away), a copy otherwise, a sparse
    /// file written sparse.
    private func lay(_ entries: [BackupEntry], from store: BackupStore, into top: String) throws {
        try TreeOperations.makeNewDirectory(top)
        var linked: Set<ContentHash> = []
        var directories: [(String, UInt32)] = [(top, 0o700)]
        for e in entries {
            let target = top + "/" + e.path
            switch e.kind {
            case .directory:
                try TreeOperations.makeDirectory(target)
                directories.append((target, e.mode))
            case .symlink(let linkTarget):
                guard symlink(linkTarget, target) == 0 else { throw SystemError("symlink", path: target, errno: errno) }
            case .file(let hash, _):
                let object = store.objectPath(hash)
                if e.extents == nil, linked.insert(hash).inserted, link(object, target) == 0 {
                    guard chmod(target, mode_t(e.mode & 0o777)) == 0 else { throw SystemError("chmod", path: target, errno: errno) }
                    var times = [timespec(tv_sec: 0, tv_nsec: (1 << 30) - 2), Self.fileTime(e.modificationTime)]
                    guard utimensat(AT_FDCWD, target, &times, AT_SYMLINK_NOFOLLOW) == 0 else {
                        throw SystemError("utimens", path: target, errno: errno)
                    }
                } else {
                    guard try Self.materialize(object, packed: true, to: target, entry: e) == hash else {
                        throw SystemError("copy", path: target, errno: EIO)
                    }
                }
            }
        }
        // Directories get their modes last (one may be read-only).
        for (dir, mode) in directories.reversed() where mode != 0 { _ = chmod(dir, mode_t(mode & 0o7777)) }
    }

    static func fileTime(_ nanoseconds: Int64) -> Glibc.timespec {
        let (s, n) = nanoseconds.quotientAndRemainder(dividingBy: 1_000_000_000)
        return n < 0 ? Glibc.timespec(tv_sec: Int(s) - 1, tv_nsec: Int(n) + 1_000_000_000) : Glibc.timespec(tv_sec: Int(s), tv_nsec: Int(n))
    }

    /// `/AppHome/Info.plist` of a snapshot: what a person looking at the
    /// repository with restic alone wants to know (XML).
    static func resticSummary(_ m: BackupManifest, report: BackupReport) throws -> [UInt8] {
        var d: [PlistKey: PlistValue] = [
            "BundleIdentifier": .string(m.bundleIdentifier.rawValue),
            "CFBundleVersion": .string(m.version),
            "CreationTime": .date(m.creationTime),
            "DeviceIdentifier": .string(m.deviceIdentifier),
            "Databases": .array(report.databases.map { .string($0) }),
            "Unsettled": .array(report.unsettled.map { .string($0) }),
            "LeftOut": .array(m.leftOut.map { .string($0) }),
            "NotBackedUp": .array(report.notBackedUp.map { .string($0.path) }),
            "Participants": .array(m.participants.keys.sorted().map { .string($0) }),
            "ManifestFormatVersion": .integer(Int128(m.requiredFormatVersion)),
        ]
        if let s = m.shortVersion { d["CFBundleShortVersionString"] = .string(s) }
        if let t = m.team { d["TeamIdentifier"] = .string(t.rawValue) }
        return try PlistCodec.encode(.dictionary(d), format: .xml)
    }

    /// The AppHome snapshots in `repository` (of `identifier`, or of every
    /// app), oldest first.
    public func resticBackups(in repository: ResticRepository, of identifier: BundleIdentifier? = nil) throws -> [ResticSnapshot] {
        try repository.checkVersion()
        return try repository.snapshots(tagged: Self.resticTags(identifier))
    }

    /// Restores `identifier` from its newest snapshot in `repository`, or
    /// from `snapshot` (an id or its prefix, which must be an AppHome backup
    /// of that app). restic restores the snapshot into a directory under
    /// `<root>/Backups/.restic/`, removed afterwards; then the restore is
    /// the local one's (``restore(from:bundle:secrets:)``), with the same
    /// checks: the manifest, its app and team, every file's BLAKE2b-256,
    /// a participant's refusal; any failure changes nothing.
    public func restore(_ identifier: BundleIdentifier, fromRestic repository: ResticRepository, snapshot: String? = nil,
                        bundle: AppBundle? = nil, secrets: BackupSecrets = .none,
                        allowDowngrade: Bool = false) throws -> (RestoreReport, ResticSnapshot) {
        try repository.checkVersion()
        let all = try repository.snapshots(tagged: Self.resticTags(identifier))
        let chosen: ResticSnapshot
        if let snapshot {
            let matches = all.filter { $0.id.hasPrefix(snapshot) }
            guard matches.count == 1 else {
                let what = matches.isEmpty ? "no AppHome backup of \(identifier) has the snapshot id \(snapshot)"
                                           : "the snapshot id \(snapshot) is ambiguous"
                throw ResticError.noSnapshot(repository: repository.repository, what: what)
            }
            chosen = matches[0]
        } else {
            guard let newest = all.last else {
                throw ResticError.noSnapshot(repository: repository.repository, what: "no AppHome backup of \(identifier)")
            }
            chosen = newest
        }
        try FileSystem.makeDirectories(resticWorkDirectory)
        let target = resticWorkDirectory + "/restore-" + makeUUID()
        defer { try? TreeOperations.remove(target) }
        try TreeOperations.makeNewDirectory(target)
        let label = "restic:\(repository.repository) snapshot \(chosen.shortID)"
        do {
            try repository.restore(chosen.id, into: target)
        } catch ResticError.failed(_, let status, let detail) {
            throw ContainersError.backupDamaged(path: label, reason: "restic could not restore it (exit status \(status)): \(FileNames.escaped(detail))")
        }
        let manifestPath = target + "/AppHome/manifest.plist"
        let manifest: BackupManifest
        do {
            manifest = try BackupStore.readManifest(manifestPath, below: target)
        } catch {
            if case .backupMissing = error { throw ContainersError.backupDamaged(path: label, reason: "it holds no AppHome manifest") }
            if case .backupDamaged(_, let reason) = error { throw ContainersError.backupDamaged(path: label, reason: reason) }
            throw error
        }
        guard manifest.bundleIdentifier == identifier else {
            throw ContainersError.backupOfAnotherApp(path: label, found: FileNames.escaped(manifest.bundleIdentifier.rawValue), expected: identifier.rawValue)
        }
        var groups: [AppGroupIdentifier: String] = [:]
        for group in manifest.groups.keys { groups[group] = target + "/groups/" + group.rawValue }
        let transaction = try registry.beginTransaction()
        defer { transaction.end() }
        let report = try restore(manifest, manifestPath: label, source: .tree(top: target, home: target + "/home", groups: groups),
                                 bundle: bundle, secrets: secrets, allowDowngrade: allowDowngrade, transaction: transaction)
        return (report, chosen)
    }

    /// What ``pruneResticBackups(in:of:keep:dryRun:)`` did.
    public struct ResticPruneReport: Sendable {
        /// The snapshots forgotten.
        public var removed: [String]
    }

    /// Keeps the newest `keep` snapshots of each app (or of `identifier`)
    /// in `repository`: `restic forget --group-by tags --keep-last N`, then
    /// `restic prune` (unless `dryRun`, or nothing was forgotten).
    public func pruneResticBackups(in repository: ResticRepository, of identifier: BundleIdentifier? = nil, keep: Int,
                                   dryRun: Bool = false) throws -> ResticPruneReport {
        precondition(keep >= 1, "pruneResticBackups keeps at least one backup of each app")
        try repository.checkVersion()
        let removed = try repository.forget(tagged: Self.resticTags(identifier), keepLast: keep, dryRun: dryRun)
        if !dryRun && !removed.isEmpty { try repository.prune() }
        return ResticPruneReport(removed: removed)
    }

    /// `restic check` of `repository` (with `--read-data-subset` when given).
    public func verifyRestic(_ repository: ResticRepository, readDataSubset: String? = nil) throws -> String {
        try repository.checkVersion()
        return try repository.check(readDataSubset: readDataSubset)
    }
}
