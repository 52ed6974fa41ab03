#if canImport(Glibc)
import Glibc
#endif
import AppHomeSystem
import Containers
import Preferences

extension BackupService {
    /// What ``pruneBackups(in:of:keep:dryRun:)`` did (or would do).
    public struct PruneReport: Equatable, Sendable {
        /// The manifests removed, oldest first per app.
        public var removedManifests: [String] = []
        /// Objects no remaining manifest names, removed.
        public var removedObjects = 0
        /// Their bytes.
        public var bytesFreed = 0
        /// Why objects were not collected (a remaining manifest that cannot
        /// be read, whose objects cannot be told apart), or `nil`.
        public var objectsKeptBecause: String?
    }

    /// Keeps the newest `keep` backups of each app (or of `identifier`) in
    /// the store at `directory`, removes the older manifests, then removes
    /// the objects that no remaining manifest, of any app, names.
    ///
    /// Objects are collected only when every remaining manifest in the store
    /// reads cleanly: a damaged one could still name objects worth keeping,
    /// so then none are removed and ``PruneReport/objectsKeptBecause`` says
    /// why. Holds the registry lock (no restore reads the store meanwhile)
    /// and the store's lock (no backup writes it).
    ///
    /// - Parameters:
    ///   - keep: how many of each app's newest backups stay; at least 1.
    ///   - dryRun: report only; remove nothing.
    /// - Throws: ``ContainersError/system(_:)``; ``ContainersError/noBackup(identifier:directory:)``
    ///   when `identifier` has no backup there.
    public func pruneBackups(in directory: String? = nil, of identifier: BundleIdentifier? = nil, keep: Int,
                             dryRun: Bool = false) throws(ContainersError) -> PruneReport {
        precondition(keep >= 1, "pruneBackups keeps at least one backup of each app")
        let lock = try registry.lock()
        defer { lock.unlock() }
        let store = BackupStore(directory: directory ?? defaultBackupDirectory)
        guard FileSystem.isDirectory(store.directory) else {
            if let identifier { throw .noBackup(identifier: identifier.rawValue, directory: store.directory) }
            return PruneReport()
        }
        let storeLock = try store.open()
        defer { storeLock.unlock() }
        var report = PruneReport()
        var manifests: [BundleIdentifier: [String]] = [:]
        for app in try store.identifiers() { manifests[app] = try store.manifests(of: app) }
        if let identifier, manifests[identifier]?.isEmpty ?? true {
            throw .noBackup(identifier: identifier.rawValue, directory: store.directory)
        }
        let apps = identifier.map { [$0] } ?? manifests.keys.sorted()
        var doomed: Set<String> = []
        for app in apps {
            for path in manifests[app]!.dropLast(keep) {
                report.removedManifests.append(path)
                doomed.insert(path)
            }
        }

        // What the remaining manifests, of every app, still name.
        var named: Set<String> = []
        for (_, paths) in manifests {
            for path in paths where !doomed.contains(path) {
                do {
                    for e in try store.readManifest(path).allEntries {
                        if case .file(let hash, _) = e.kind { named.insert(store.objectPath(hash)) }
                    }
                } catch {
                    report.objectsKeptBecause = "\(error)"
                }
            }
        }
        var unnamed: [(path: String, size: Int)] = []
        if report.objectsKeptBecause == nil {
            try containersErrors {
                for prefix in try FileSystem.directoryEntries(store.objectsDirectory).sorted() where !prefix.hasPrefix(".") {
                    let dir = store.objectsDirectory + "/" + prefix
                    guard FileSystem.isDirectory(dir) else { continue }
                    for name in try FileSystem.directoryEntries(dir).sorted() where !named.contains(dir + "/" + name) {
                        var st = stat()
                        guard lstat(dir + "/" + name, &st) == 0 else { continue }
                        unnamed.append((dir + "/" + name, Int(st.st_size)))
                    }
                }
            }
            report.removedObjects = unnamed.count
            report.bytesFreed = unnamed.reduce(0) { $0 + $1.size }
        }
        guard !dryRun else { return report }

        // Manifests first: an object goes only once nothing names it.
        try containersErrors {
            for path in report.removedManifests { try FileSystem.removeFile(path) }
            for app in apps { TreeOperations.syncDirectory(store.manifestDirectory(for: app)) }
            var directories: Set<String> = []
            for object in unnamed {
                try FileSystem.removeFile(object.path)
                directories.insert(FileSystem.parentDirectory(object.path))
            }
            for dir in directories.sorted() {
                if (try? FileSystem.directoryEntries(dir))?.isEmpty == true { rmdir(dir) }
            }
            TreeOperations.syncDirectory(store.objectsDirectory)
        }
        return report
    }
}
