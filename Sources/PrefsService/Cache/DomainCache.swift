import AppHomeSystem
import Containers
import Preferences
import PrefsProtocol
import PropertyList

/// What prefsd knows of the domains on disk: where each one lives (the
/// resolver, which follows the container registry), the contents it last
/// read of each file, and the inotify watches that keep those contents
/// honest.
///
/// A cached entry is used only while its directory is watched and the
/// file is the one that was read; anything else is read again. Owned by
/// the service's loop.
final class DomainCache {
    /// The contents last read (or written) of one domain file.
    final class Entry {
        var contents: [PlistKey: PlistValue]?
        var identity: FileStatus?
        var valid = false
    }

    let root: String
    let watcher = DirectoryWatcher()
    private(set) var resolver: DomainResolver {
        didSet { paths.removeAll() }
    }
    /// The files of the addresses asked for under the current ``resolver``
    /// (its answer depends on nothing else once the host identifier is
    /// known): building a path took a write about 3,500 instructions.
    private var paths: [DomainAddress: String] = [:]
    private var registryIdentity: FileStatus?
    /// Whether ``resolver`` was built from the registry whose status is
    /// ``registryIdentity`` (`nil`: there was none), so that a registry that
    /// stays absent is not looked for again on every request.
    private var registryRead = false
    /// How many times the resolver was rebuilt from the registry (status).
    private(set) var resolverBuilds = 0
    /// How many times the registry's status was looked at.
    private(set) var registryLooks = 0
    private var hostID: String?
    /// By file path, compared by its exact scalars (two canonically equivalent
    /// names are two files).
    private var entries: [PlistKey: Entry] = [:]
    /// Called each time the resolver was rebuilt from a changed registry
    /// (the subscriptions follow their domains).
    var resolverChanged: () -> Void = {}

    init(root: String) {
        self.root = root
        self.resolver = DomainResolver(root: root)
    }

    /// Domains whose cached contents can be served without reading.
    var validCount: Int { entries.values.filter(\.valid).count }

    /// The entry of the file at `path`, if it was ever read.
    func entry(_ path: String) -> Entry? { entries[path] }

    /// The entry of the file at `path`, made when missing.
    private func entryMade(_ path: String) -> Entry {
        let entry = entries[path] ?? Entry()
        entries[path] = entry
        return entry
    }

    // MARK: - Where domains live

    func hostIdentifier() throws(PreferencesError) -> String {
        if let hostID { return hostID }
        let id = try HostIdentifier.loadOrCreate(root: root)
        hostID = id
        return id
    }

    /// Whether ``path(for:)`` must look at the registry before it answers:
    /// set by ``requestsArrived()``, cleared by the look.
    private var registryCheckDue = true

    /// Requests were read: the next ``path(for:)`` looks at the registry
    /// again. The loop calls it once after reading a sweep of requests and
    /// before handling any of them, so each request is resolved against a
    /// registry at least as new as the moment it was received (an app
    /// installed before a client sent its write is seen by that write),
    /// with one `stat` a sweep rather than one a request.
    func requestsArrived() {
        registryCheckDue = true
    }

    /// The file of `address`, after looking at the registry again if
    /// requests arrived since the last look. Once a look came after the
    /// registry's watch began, a `stat` is needed only when inotify holds
    /// events not yet drained (any change of the registry queues one
    /// before it returns; the loop drains the queue each turn, looking at
    /// the registry if it was among them).
    func path(for address: DomainAddress) throws(PreferencesError) -> String {
        if registryCheckDue {
            registryCheckDue = false
            if !registryLookedSinceWatch || watcher.hasPendingEvents {
                refreshResolverIfNeeded()
            }
        }
        if let known = paths[address] { return known }
        let path = try resolver.path(for: address.domain, scope: address.scope, hostIdentifier: hostIdentifier)
        if paths.count >= 256 { paths.removeAll() }
        paths[address] = path
        return path
    }

    /// The file of `address` under the current resolver; `nil` when it cannot be named.
    func currentPath(for address: DomainAddress) -> String? {
        try? resolver.path(for: address.domain, scope: address.scope, hostIdentifier: hostIdentifier)
    }

    /// Whether the last look at the registry came after a watch that
    /// reports every later change of it: its directory's, or, while that
    /// directory does not exist, the root's (which reports it appearing).
    private var registryLookedSinceWatch = false

    /// Re-reads the registry when its file changed, so that an installed
    /// app's domain goes to its home; then calls ``resolverChanged``.
    func refreshResolverIfNeeded() {
        let layout = ContainerLayout(root: root)
        registryLooks += 1
        let identity = FileStatus.of(layout.registryPath)
        registryLookedSinceWatch = watcher.isWatching(layout.applicationsDirectory)
            || (watcher.isWatching(layout.root) && identity == nil && !FileSystem.exists(layout.applicationsDirectory))
        if identity == registryIdentity && (identity != nil || registryRead) { return }
        if identity == nil && registryIdentity == nil && !resolver.installedAppDomains.isEmpty { return }
        registryIdentity = identity
        registryRead = true
        resolverBuilds += 1
        resolver = DomainResolver(root: root, appPreferencesDirectories: ContainerRegistry.preferencesDirectories(root: root))
        resolverChanged()
    }

    /// Forgets the registry (after an uninstall the service made), so that
    /// domains resolve anew.
    func registryChanged() {
        registryIdentity = nil
        registryRead = false
        resolver = DomainResolver(root: root)
        refreshResolverIfNeeded()
    }

    /// Watches the registry's directory, so that an install or uninstall
    /// made without the service is noticed without waiting for a request;
    /// while it does not exist, the root, to see it appear.
    func watchRegistry() {
        let layout = ContainerLayout(root: root)
        if watcher.isWatching(layout.applicationsDirectory) { return }
        if watcher.watch(layout.applicationsDirectory) || (!watcher.isWatching(layout.root) && watcher.watch(layout.root)) {
            registryLookedSinceWatch = false
        }
    }

    /// A root that did not exist at start: looks for it again (cheap: only
    /// while nothing is watched).
    func watchRootIfItAppeared() {
        let layout = ContainerLayout(root: root)
        if !watcher.isWatching(layout.applicationsDirectory) && !watcher.isWatching(layout.root) {
            watchRegistry()
            if watcher.isWatching(layout.applicationsDirectory) { refreshResolverIfNeeded() }
        }
    }

    // MARK: - Contents

    /// The contents of a domain, from the cache when it is valid.
    func load(_ address: DomainAddress) throws(PreferencesError) -> [PlistKey: PlistValue]? {
        let path = try path(for: address)
        return try load(address.domain, path: path)
    }

    func load(_ domain: Domain, path: String) throws(PreferencesError) -> [PlistKey: PlistValue]? {
        let entry = entryMade(path)
        if entry.valid { return entry.contents }
        let dir = FileSystem.parentDirectory(path)
        let watched = watcher.watch(dir)
        let before = FileStatus.of(path)
        let contents = try FilePreferenceStore.load(domain, path: path)
        entry.contents = contents
        entry.identity = before
        // Only a watched directory keeps the cache honest; otherwise read again next time.
        entry.valid = watched && FileStatus.of(path) == before
        return contents
    }

    /// Before a commit of the file at `path`, under its lock: an entry
    /// another writer made stale is read again. A valid entry's directory
    /// is watched, so with no inotify event waiting nobody replaced the
    /// file since the loop last drained them, and no `stat` is needed.
    func prepareCommit(_ path: String) {
        let entry = entryMade(path)
        if entry.valid && watcher.hasPendingEvents && FileStatus.of(path) != entry.identity { entry.valid = false }
    }

    /// By directory, the domain files a commit looked beside for leftovers
    /// of dead writers since a file that could be one last appeared there
    /// (by exact scalars, as ``entries``).
    private var swept: [PlistKey: Set<PlistKey>] = [:]

    /// Whether a commit of `path`, under its lock, must look through its
    /// directory for temporary files of writers that died
    /// (``FilePreferenceStore/removeStaleTemporaryFiles(for:spares:)``): not
    /// when one looked before and, in the watched directory, no such file
    /// appeared since (no drained event named one, none waiting). Sound
    /// because writers make their temporaries only under the lock this
    /// commit holds. A `true` answer counts as the look.
    func mayHoldLeftovers(_ path: String) -> Bool {
        let dir = FileSystem.parentDirectory(path)
        if watcher.isWatching(dir), !watcher.hasPendingEvents, swept[PlistKey(dir)]?.contains(PlistKey(path)) == true { return false }
        swept[PlistKey(dir), default: []].insert(PlistKey(path))
        return true
    }

    /// After a commit of the file at `path` that wrote `contents`, which left
    /// the file with `status` (taken under the domain's lock: a `stat` here,
    /// after the lock, could already see another writer's file and pair it
    /// with these contents).
    func committed(_ path: String, contents: [PlistKey: PlistValue], status: FileStatus?) {
        let entry = entryMade(path)
        entry.contents = contents.isEmpty ? nil : contents
        entry.identity = status
        let dir = FileSystem.parentDirectory(path)
        entry.valid = watcher.isWatching(dir) || watcher.watch(dir)
    }

    /// After a commit of the file at `path` that failed: read it again next time.
    func commitFailed(_ path: String) {
        entryMade(path).valid = false
    }

    // MARK: - Changes behind the service's back

    /// Files changed behind the service's back: drops their cache entries
    /// and calls `changed` for each path whose subscribers (`isSubscribed`)
    /// may need to hear of it; then gives `others` every path drained and
    /// whether the queue overflowed (the managed directory's watch).
    func handleFileEvents(isSubscribed: (String) -> Bool, changed: (String) -> Void,
                          others: ([String], Bool) -> Void = { _, _ in }) {
        let paths = watcher.drain()
        defer { others(paths, watcher.overflowed) }
        if watcher.overflowed { swept.removeAll() }
        // A stale spare needs no look: prefsd finds one when it makes its own (ReplacementSpares).
        for path in paths where FilePreferenceStore.endsLikeALeftover(path) { swept[PlistKey(FileSystem.parentDirectory(path))] = nil }
        let registry = ContainerLayout(root: root).registryPath
        if watcher.overflowed || paths.contains(registry) || paths.contains(FileSystem.parentDirectory(registry)) {
            watchRegistry()
            refreshResolverIfNeeded()
        }
        if watcher.overflowed {
            for (key, entry) in entries where entry.valid ? FileStatus.of(key.string) != entry.identity : isSubscribed(key.string) {
                entry.valid = false
                changed(key.string)
            }
            for entry in entries.values { entry.valid = false }
        }
        for path in paths {
            guard let entry = entries[path] else { continue }
            if entry.valid {
                if FileStatus.of(path) == entry.identity { continue }
                entry.valid = false
            } else if !isSubscribed(path) {
                continue
            }
            // An entry a failed read left invalid (a file caught half-written,
            // say) is read again for its subscribers, against the last good contents.
            changed(path)
        }
    }
}
