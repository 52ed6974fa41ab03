#if canImport(Glibc)
import Glibc
#endif
import AppHomeSystem
import Preferences

/// Whose directory a cleanup touched: an app's home, or an app group's
/// shared container.
public enum CleanupOwner: Equatable, Sendable, CustomStringConvertible {
    case app(BundleIdentifier)
    case group(AppGroupIdentifier)

    /// The bundle id, or `app group <group id>`.
    public var description: String {
        switch self {
        case .app(let id): return id.rawValue
        case .group(let group): return "app group \(group.rawValue)"
        }
    }
}

/// What `purge-caches` or `clean-tmp` did to one app (or app group).
public struct CleanupResult: Equatable, Sendable {
    /// The app, or the group whose container it was.
    public var owner: CleanupOwner
    /// The directory emptied (or left alone).
    public var directory: String
    /// Bytes of the files removed (their sizes).
    public var bytesFreed: Int
    /// True when the app (for a group: one of its member apps) was running
    /// (its run lock held), so nothing was removed.
    public var skippedRunning: Bool
    /// True when the directory (or one on the way to it) is a symbolic
    /// link, so nothing was removed: the link's target is never touched.
    /// `doctor` replaces the link with an empty directory.
    public var refusedLink: Bool

    public init(owner: CleanupOwner, directory: String, bytesFreed: Int, skippedRunning: Bool, refusedLink: Bool = false) {
        self.owner = owner
        self.directory = directory
        self.bytesFreed = bytesFreed
        self.skippedRunning = skippedRunning
        self.refusedLink = refusedLink
    }
}

/// What `purge-caches` did.
public struct PurgeReport: Equatable, Sendable {
    /// Apps whose caches were emptied or skipped, oldest first.
    public var results: [CleanupResult] = []
    /// Free bytes before the purge.
    public var freeBefore: UInt64 = 0
    /// Free bytes after the purge.
    public var freeAfter: UInt64 = 0
    /// The target, if one was given.
    public var targetFree: UInt64?

    /// Whether the target (if any) is met.
    public var targetReached: Bool { targetFree.map { freeAfter >= $0 } ?? true }
}

/// Empties installed apps' caches and temporary directories, leaving
/// running apps alone (``purgeCaches(targetFree:freeBytes:)``,
/// ``cleanTemporaryDirectories()``).
public struct Cleaner: ContainerOperation, Sendable {
    /// The root whose caches and tmp it empties.
    public let context: ContainerContext

    /// The bytes available to an unprivileged user on the file system
    /// holding `path` (`statvfs`: `f_bavail × f_frsize`).
    public static func availableBytes(_ path: String) throws(SystemError) -> UInt64 {
        var s = statvfs()
        guard statvfs(path, &s) == 0 else { throw SystemError("statvfs", path: path, errno: errno) }
        return UInt64(s.f_bavail) &* UInt64(s.f_frsize)
    }

    /// Empties installed apps' and app groups' `Library/Caches`, oldest
    /// first, as iOS does when space runs short.
    ///
    /// An app's (or group's) age is the most recent modification time of
    /// anything inside its `Caches` (ties by name, apps before groups);
    /// empty caches are left out. A group's container is skipped while any
    /// of its member apps runs. With `targetFree`, stops as soon as `freeBytes(root)` reaches
    /// it (and does nothing when it already does); without, empties them
    /// all. A running app (its run lock held) is skipped and reported,
    /// since caches are "never" purged while an app runs.
    ///
    /// - Parameters:
    ///   - targetFree: the free bytes wanted, or `nil` for all caches.
    ///   - freeBytes: measures free space; ``availableBytes(_:)`` by default.
    /// - Throws: ``ContainersError/system(_:)``.
    public func purgeCaches(targetFree: UInt64? = nil,
                            freeBytes: (String) throws(SystemError) -> UInt64 = Cleaner.availableBytes) throws(ContainersError) -> PurgeReport {
        let transaction = try registry.beginTransaction()
        defer { transaction.end() }
        var report = PurgeReport()
        report.targetFree = targetFree
        func free() throws(ContainersError) -> UInt64 {
            do { return try freeBytes(layout.root) } catch { throw .system(error) }
        }
        report.freeBefore = try free()
        report.freeAfter = report.freeBefore
        struct Candidate { var age: Double; var rank: String; var owner: CleanupOwner; var caches: String; var members: [RegistryEntry] }
        var candidates: [Candidate] = []
        let current = transaction.registry
        for entry in current.sortedEntries {
            let caches = layout.home(uuid: entry.homeUUID, bundleName: entry.bundleName).caches
            if DirectoryTree.isSymbolicLink(caches) || DirectoryTree.isSymbolicLink(FileSystem.parentDirectory(caches)) {
                report.results.append(CleanupResult(owner: .app(entry.bundleIdentifier), directory: caches, bytesFreed: 0,
                                                    skippedRunning: false, refusedLink: true))
                continue
            }
            if let newest = try containersErrors({ try TreeOperations.newestModification(inside: caches, below: layout.root) }) {
                candidates.append(Candidate(age: newest, rank: "0" + entry.bundleIdentifier.rawValue, owner: .app(entry.bundleIdentifier),
                                            caches: caches, members: [entry]))
            }
        }
        for (group, uuid) in current.groups.sorted(by: { $0.key < $1.key }) {
            let caches = layout.groupContainer(uuid: uuid).caches
            if DirectoryTree.isSymbolicLink(caches) || DirectoryTree.isSymbolicLink(FileSystem.parentDirectory(caches)) {
                report.results.append(CleanupResult(owner: .group(group), directory: caches, bytesFreed: 0,
                                                    skippedRunning: false, refusedLink: true))
                continue
            }
            guard FileSystem.isDirectory(caches),
                  let newest = try containersErrors({ try TreeOperations.newestModification(inside: caches, below: layout.root) }) else { continue }
            let members = current.sortedEntries.filter { $0.groups.contains(group) }
            candidates.append(Candidate(age: newest, rank: "1" + group.rawValue, owner: .group(group), caches: caches, members: members))
        }
        candidates.sort { $0.age != $1.age ? $0.age < $1.age : $0.rank < $1.rank }
        for candidate in candidates {
            if let target = targetFree, report.freeAfter >= target { break }
            report.results.append(try emptyUnlessRunning(candidate.members, owner: candidate.owner, directory: candidate.caches))
            report.freeAfter = try free()
        }
        return report
    }

    /// Empties `tmp/` of every installed app that is not running (whose run
    /// lock is free); running apps are skipped and reported.
    ///
    /// - Returns: one result per installed app, by bundle id.
    /// - Throws: ``ContainersError/system(_:)``.
    public func cleanTemporaryDirectories() throws(ContainersError) -> [CleanupResult] {
        let transaction = try registry.beginTransaction()
        defer { transaction.end() }
        var results: [CleanupResult] = []
        for entry in transaction.registry.sortedEntries {
            results.append(try emptyUnlessRunning([entry], owner: .app(entry.bundleIdentifier),
                                                  directory: layout.home(uuid: entry.homeUUID, bundleName: entry.bundleName).tmp))
        }
        return results
    }

    /// Empties `directory` unless one of `apps` is running: their run
    /// locks are held, exclusively, while it is emptied.
    private func emptyUnlessRunning(_ apps: [RegistryEntry], owner: CleanupOwner, directory: String) throws(ContainersError) -> CleanupResult {
        try containersErrors {
            var held: [RunLock] = []
            defer { for lock in held { lock.unlock() } }
            for entry in apps {
                guard let lock = try RunLock.exclusiveIfFree(layout.runLockPath(uuid: entry.homeUUID)) else {
                    return CleanupResult(owner: owner, directory: directory, bytesFreed: 0, skippedRunning: true)
                }
                held.append(lock)
            }
            // On directory descriptors from the root down: a `tmp` or
            // `Library` replaced by a link is refused, its target untouched.
            let freed: Int
            do { freed = try DirectoryTree.removeContents(of: directory, below: layout.root) } catch {
                if let refusal = error as? SystemError, DirectoryTree.isLinkRefusal(refusal) {
                    return CleanupResult(owner: owner, directory: directory, bytesFreed: 0, skippedRunning: false, refusedLink: true)
                }
                throw error
            }
            return CleanupResult(owner: owner, directory: directory, bytesFreed: freed, skippedRunning: false)
        }
    }
}

extension TreeOperations {
    /// Calls `body` with the path and `lstat` of `path` and of everything
    /// below it, parents first. Links are not followed.
    static func forEach(at path: String, _ body: (String, stat) throws -> Void) throws {
        var st = stat()
        guard lstat(path, &st) == 0 else { throw SystemError("lstat", path: path, errno: errno) }
        try body(path, st)
        if st.st_mode & S_IFMT == S_IFDIR {
            for name in try FileSystem.directoryEntries(path) { try forEach(at: path + "/" + name, body) }
        }
    }

    /// The newest modification time (seconds since 1970) of anything below
    /// `directory`, not counting the directory itself; `nil` when it is
    /// empty or missing. Links are not followed.
    static func newestModification(inside directory: String, below base: String) throws -> Double? {
        try DirectoryTree.newestModification(inside: directory, below: base)
    }

    /// The total size of the regular files at or below `path`.
    static func fileBytes(_ path: String) throws -> Int {
        try DirectoryTree.fileBytes(path)
    }
}
