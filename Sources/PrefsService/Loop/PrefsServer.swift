#if canImport(Glibc)
import Glibc
#endif
import AppHomeSystem
import Containers
import Dispatch
import Keychain
import KeychainSecretService
import Preferences
import PrefsProtocol
import PropertyList
import Synchronization

/// The prefsd service: one thread, one `poll` loop, every socket
/// non-blocking, so no client can hold up another.
///
/// Writes are *write-through with group commit*: each loop turn collects
/// the write requests of every client that has one ready, then commits
/// each touched domain once (under the same `flock` as the embedded
/// ``FilePreferenceStore``, with `fsync` and an atomic rename), and only
/// then sends the acknowledgements. An acknowledged write is on disk.
public final class PrefsServer {
    let configuration: ServerConfiguration
    private var listener: Int32 = -1
    private var ownsSocketPath = false
    private let watcher = DirectoryWatcher()
    private var signalPipe: (read: Int32, write: Int32) = (-1, -1)
    private var wakePipe: (read: Int32, write: Int32) = (-1, -1)
    private var signalSources: [DispatchSourceSignal] = []
    private var clients: [Int: ClientConnection] = [:]
    private var nextClientID = 1
    private var nextSubscriptionID = 1
    private var cache: [String: CachedDomain] = [:]
    private var subscriptions: [String: [Subscription]] = [:]
    private var pending: [String: [PendingWrite]] = [:]
    private var pendingOrder: [String] = []
    private var resolver: DomainResolver
    private var registryIdentity: FileIdentity?
    private var hostID: String?
    private let started = UnixSocket.now()
    private var counters = (reads: 0, writes: 0, commits: 0, notifications: 0)
    private let finishedJobs = FinishedJobs()
    /// Where uninstalls and keychain calls run off the loop: keychain calls
    /// side by side, an uninstall alone (a barrier).
    private let jobQueue = DispatchQueue(label: "prefsd.jobs", attributes: .concurrent)
    private var stopping = false

    struct Subscription {
        var clientID: Int
        var id: Int
        var address: DomainAddress
    }

    struct PendingWrite {
        var clientID: Int
        var requestID: Int
        var domain: Domain
        var change: ChangeSet
        var options: WriteOptions
    }

    final class CachedDomain {
        var contents: [String: PlistValue]?
        var identity: FileIdentity?
        var valid = false
    }

    /// Prepares the service: binds (or adopts) the socket.
    ///
    /// - Throws: ``ServiceError`` when the socket cannot be set up or
    ///   another prefsd answers on it.
    public init(configuration: ServerConfiguration) throws(ServiceError) {
        self.configuration = configuration
        self.resolver = DomainResolver(root: configuration.root)
        if let fd = configuration.inheritedListener {
            listener = fd
            do { try UnixSocket.setNonBlocking(fd, path: configuration.socketPath) } catch { throw .system(error) }
        } else {
            listener = try Self.bindSocket(configuration.socketPath)
            ownsSocketPath = true
        }
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw .system(SystemError("pipe", path: "", errno: errno)) }
        signalPipe = (fds[0], fds[1])
        guard pipe(&fds) == 0 else { throw .system(SystemError("pipe", path: "", errno: errno)) }
        wakePipe = (fds[0], fds[1])
        for fd in [signalPipe.read, signalPipe.write, wakePipe.read, wakePipe.write] {
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        }
        refreshResolverIfNeeded()
    }

    deinit {
        for c in clients.values { close(c.fd) }
        if listener >= 0 { close(listener) }
        for fd in [signalPipe.read, signalPipe.write, wakePipe.read, wakePipe.write] where fd >= 0 { close(fd) }
    }

    /// Creates the socket's directory (0700) and binds the socket (0600),
    /// replacing a stale socket file but never a live service.
    static func bindSocket(_ path: String) throws(ServiceError) -> Int32 {
        let dir = FileSystem.parentDirectory(path)
        do { try FileSystem.makeDirectories(dir) } catch { throw .system(error) }
        var st = stat()
        guard stat(dir, &st) == 0 else { throw .system(SystemError("stat", path: dir, errno: errno)) }
        if st.st_uid != getuid() { throw .unsafeDirectory(dir, reason: "it belongs to another user") }
        if st.st_mode & 0o077 != 0 && chmod(dir, 0o700) != 0 {
            throw .unsafeDirectory(dir, reason: "it is open to other users and cannot be made 0700")
        }
        if FileSystem.exists(path) {
            if let fd = try? UnixSocket.connect(to: path, timeout: 1) {
                close(fd)
                throw .alreadyRunning(path)
            }
            // Only a dead service's socket is replaced, never another kind of file.
            var old = stat()
            guard lstat(path, &old) == 0, old.st_mode & S_IFMT == S_IFSOCK else {
                throw .unsafeDirectory(dir, reason: "\(path) exists and is not a socket")
            }
            unlink(path)
        }
        do { return try UnixSocket.listen(at: path) } catch { throw .system(error) }
    }

    // MARK: - The loop

    /// Serves until SIGTERM or SIGINT, then closes every connection and
    /// removes the socket it bound. Every acknowledged write is already
    /// on disk, so nothing needs flushing at exit.
    public func run() {
        for sig in configuration.handleSignals ? [SIGTERM, SIGINT, SIGHUP] : [] {
            signal(sig, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            let fd = signalPipe.write
            source.setEventHandler { var b: UInt8 = 1; _ = write(fd, &b, 1) }
            source.resume()
            signalSources.append(source)
        }
        configuration.log("prefsd: serving \(configuration.root) on \(configuration.socketPath)")
        watchRegistry()
        while !stopping { turn() }
        for s in signalSources { s.cancel() }
        for id in Array(clients.keys) { dropClient(id) }
        if ownsSocketPath { unlink(configuration.socketPath) }
        configuration.log("prefsd: stopped")
    }

    /// Asks a running ``run()`` to stop (for tests in process).
    public func requestStop() {
        var b: UInt8 = 1
        _ = write(signalPipe.write, &b, 1)
    }

    private func turn() {
        var fds: [pollfd] = [
            pollfd(fd: listener, events: Int16(POLLIN), revents: 0),
            pollfd(fd: watcher.fd, events: Int16(POLLIN), revents: 0),
            pollfd(fd: signalPipe.read, events: Int16(POLLIN), revents: 0),
            pollfd(fd: wakePipe.read, events: Int16(POLLIN), revents: 0),
        ]
        let order = clients.keys.sorted()
        var busy = false
        for id in order {
            let c = clients[id]!
            var events: Int16 = 0
            if !c.closing { events |= Int16(POLLIN) }
            if c.hasOutput { events |= Int16(POLLOUT) }
            if !c.closing && c.reader.hasCompleteFrame { busy = true }
            fds.append(pollfd(fd: c.fd, events: events, revents: 0))
        }
        let timeout: Int32 = busy ? 0 : 1000
        let n = poll(&fds, nfds_t(fds.count), timeout)
        if n < 0 && errno != EINTR { configuration.log("prefsd: poll failed: \(String(cString: strerror(errno)))"); stopping = true; return }
        if fds[2].revents != 0 {
            var b = [UInt8](repeating: 0, count: 64)
            _ = read(signalPipe.read, &b, 64)
            stopping = true
            return
        }
        // A root that did not exist at start: look for it again (cheap: only while nothing is watched).
        let layout = ContainerLayout(root: configuration.root)
        if !watcher.isWatching(layout.applicationsDirectory) && !watcher.isWatching(layout.root) {
            watchRegistry()
            if watcher.isWatching(layout.applicationsDirectory) { refreshResolverIfNeeded() }
        }
        // Direct edits first: a reply after this turn reflects every edit finished before it.
        if fds[1].revents != 0 { handleFileEvents() }
        if fds[3].revents != 0 { finishJobs() }
        if fds[0].revents & Int16(POLLNVAL | POLLERR) != 0 {
            configuration.log("prefsd: the listening socket is not usable; stopping")
            stopping = true
            return
        }
        if fds[0].revents != 0 { acceptClients() }
        let now = UnixSocket.now()
        for (i, id) in order.enumerated() {
            guard let c = clients[id] else { continue }
            let re = fds[4 + i].revents
            if re & Int16(POLLIN | POLLHUP | POLLERR) != 0 && !c.closing {
                if !c.readAvailable(now: now, limit: 1 << 20) { c.peerClosed = true }
            }
            processFrames(c)
            c.notePartialFrame(now: now)
        }
        commitPending()
        for id in order {
            guard let c = clients[id] else { continue }
            if c.hasOutput { c.writeAvailable(now: UnixSocket.now()) }
            if c.failed || (c.peerClosed && !c.reader.hasCompleteFrame) || (c.closing && !c.hasOutput) {
                dropClient(id)
                continue
            }
            if let since = c.partialFrameSince, now - since > configuration.partialFrameTimeout {
                configuration.log("prefsd: client \(id) did not finish a frame in \(Int(configuration.partialFrameTimeout)) s; disconnected")
                dropClient(id)
            } else if c.hasOutput, now - c.lastOutputProgress > configuration.stalledWriteTimeout {
                configuration.log("prefsd: client \(id) left replies unread for \(Int(configuration.stalledWriteTimeout)) s; disconnected")
                dropClient(id)
            }
        }
    }

    private func acceptClients() {
        while let fd = UnixSocket.accept(listener) {
            guard let cred = UnixSocket.peerCredentials(fd), cred.uid == configuration.ownerUID || cred.uid == 0 else {
                let reply = Reply.response(id: 0, .failure(RemoteError(.permissionDenied, "prefsd serves only its own user")))
                if let bytes = try? reply.encode() { _ = Frame.encode(bytes).withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } }
                close(fd)
                continue
            }
            if clients.count >= configuration.maximumClients {
                close(fd)
                configuration.log("prefsd: connection refused: \(configuration.maximumClients) clients already")
                continue
            }
            let id = nextClientID
            nextClientID += 1
            clients[id] = ClientConnection(fd: fd, id: id, maximumPayload: configuration.maximumPayload, now: UnixSocket.now())
        }
    }

    private func dropClient(_ id: Int) {
        guard let c = clients.removeValue(forKey: id) else { return }
        close(c.fd)
        for path in Set(c.subscriptions.values) {
            subscriptions[path]?.removeAll { $0.clientID == id }
            if subscriptions[path]?.isEmpty == true { subscriptions[path] = nil }
        }
    }

    // MARK: - Requests

    private func processFrames(_ c: ClientConnection) {
        var handled = 0
        while !c.closing && !c.waitingForCommit && handled < 64 {
            let payload: [UInt8]?
            do { payload = try c.reader.next() } catch {
                let code: ErrorCode
                switch error {
                case .unsupportedVersion: code = .unsupportedVersion
                case .tooLarge: code = .frameTooLarge
                case .badMagic, .reservedBits: code = .malformedFrame
                }
                send(c, .response(id: 0, .failure(RemoteError(code, error.description))))
                c.closing = true
                return
            }
            guard let payload else { return }
            handled += 1
            let (id, decoded) = Request.decode(payload)
            switch decoded {
            case .failure(let e): send(c, .response(id: id, .failure(e.remote)))
            case .success(let request): handle(request, id: id, from: c)
            }
        }
    }

    private func send(_ c: ClientConnection, _ reply: Reply) {
        do { c.enqueue(Frame.encode(try reply.encode())) } catch {
            if case .response(let id, _) = reply, let fallback = try? Reply.response(id: id, .failure(RemoteError(.preferences, "the reply cannot be encoded: \(error)"))).encode() {
                c.enqueue(Frame.encode(fallback))
            }
        }
    }

    private func handle(_ request: Request, id: Int, from c: ClientConnection) {
        func reply(_ r: Result<[String: PlistValue], RemoteError>) { send(c, .response(id: id, r)) }
        do throws(PreferencesError) {
            switch request {
            case .hello(let root):
                if Self.normalized(root) != Self.normalized(configuration.root) {
                    reply(.failure(RemoteError(.wrongRoot, "prefsd serves the root \(configuration.root), not \(root)")))
                } else {
                    reply(.success(["root": .string(configuration.root), "pid": .integer(Int128(getpid())), "version": .integer(Int128(Frame.version))]))
                }
            case .status:
                reply(.success(status()))
            case .read(let address, let key):
                counters.reads += 1
                let contents = try load(address)
                if let key {
                    reply(.success(contents?[key].map { ["value": $0] } ?? [:]))
                } else {
                    reply(.success(contents.map { ["contents": .dictionary($0)] } ?? [:]))
                }
            case .write(let address, let set, let options):
                try queue(ChangeSet(set: set), options: options, for: address, id: id, from: c)
            case .delete(let address, let keys):
                try queue(keys.map { ChangeSet(remove: $0) } ?? ChangeSet(removeAll: true), options: WriteOptions(), for: address, id: id, from: c)
            case .batch(let address, let change, let options):
                try queue(change, options: options, for: address, id: id, from: c)
            case .listDomains:
                refreshResolverIfNeeded()
                reply(.success(["domains": .array(try resolver.domainNames().map { .string($0) })]))
            case .subscribe(let address):
                let path = try path(for: address)
                let contents = try load(address)
                let sub = nextSubscriptionID
                nextSubscriptionID += 1
                subscriptions[path, default: []].append(Subscription(clientID: c.id, id: sub, address: address))
                c.subscriptions[sub] = path
                var result: [String: PlistValue] = ["subscription": .integer(Int128(sub))]
                if let contents { result["contents"] = .dictionary(contents) }
                reply(.success(result))
            case .unsubscribe(let sub):
                guard let path = c.subscriptions.removeValue(forKey: sub) else {
                    reply(.failure(RemoteError(.noSuchSubscription, "no subscription \(sub) on this connection")))
                    return
                }
                subscriptions[path]?.removeAll { $0.id == sub }
                reply(.success([:]))
            case .uninstall(let bundle, let environment):
                startUninstall(bundle, environment: environment, id: id, from: c)
            case .hostIdentifier:
                reply(.success(["hostIdentifier": .string(try hostIdentifier())]))
            case .location(let address):
                reply(.success(["path": .string(try path(for: address))]))
            case .keychainFind(let caller, _), .keychainAdd(let caller, _, _), .keychainUpdate(let caller, _, _, _), .keychainDelete(let caller, _):
                startKeychain(request, caller: caller, id: id, from: c)
            }
        } catch {
            reply(.failure(RemoteError(.preferences, error.description)))
        }
    }

    private func status() -> [String: PlistValue] {
        [
            "pid": .integer(Int128(getpid())),
            "root": .string(configuration.root),
            "socket": .string(configuration.socketPath),
            "protocolVersion": .integer(Int128(Frame.version)),
            "uptime": .real(UnixSocket.now() - started),
            "clients": .integer(Int128(clients.count)),
            "cachedDomains": .integer(Int128(cache.values.filter(\.valid).count)),
            "subscriptions": .integer(Int128(subscriptions.values.map(\.count).reduce(0, +))),
            "reads": .integer(Int128(counters.reads)),
            "writes": .integer(Int128(counters.writes)),
            "commits": .integer(Int128(counters.commits)),
            "notifications": .integer(Int128(counters.notifications)),
            "durability": .string("write-through, group commit"),
        ]
    }

    static func normalized(_ path: String) -> String {
        if let r = realpath(path, nil) { defer { free(r) }; return String(cString: r) }
        return Paths.trimmingTrailingSlashes(path)
    }

    // MARK: - Domains and the cache

    /// Re-reads the registry when its file changed, so that an installed
    /// app's domain goes to its home; subscriptions whose domain now lives
    /// elsewhere follow it (``followMovedDomains()``).
    private func refreshResolverIfNeeded() {
        let layout = ContainerLayout(root: configuration.root)
        let identity = FileIdentity.of(layout.registryPath)
        if identity == registryIdentity && identity != nil { return }
        if identity == nil && registryIdentity == nil && !resolver.installedAppDomains.isEmpty { return }
        registryIdentity = identity
        resolver = DomainResolver(root: configuration.root, appPreferencesDirectories: ContainerRegistry.preferencesDirectories(root: configuration.root))
        followMovedDomains()
    }

    /// Watches the registry's directory, so that an install or uninstall
    /// made without the service is noticed without waiting for a request;
    /// while it does not exist, the root, to see it appear.
    private func watchRegistry() {
        let layout = ContainerLayout(root: configuration.root)
        if watcher.isWatching(layout.applicationsDirectory) || watcher.watch(layout.applicationsDirectory) { return }
        _ = watcher.watch(layout.root)
    }

    /// After the registry changed: each subscription whose domain now
    /// resolves to another file moves to it, and its subscriber hears the
    /// difference between the old file's contents and the new one's (after
    /// an install, the app's domain is the new home's, empty; after an
    /// uninstall, the root's file again).
    private func followMovedDomains() {
        var moves: [String: [String: [Subscription]]] = [:]  // old path → new path → subscriptions
        for (old, subs) in subscriptions {
            for s in subs {
                guard let new = try? resolver.path(for: s.address.domain, scope: s.address.scope, hostIdentifier: hostIdentifier),
                      new != old else { continue }
                moves[old, default: [:]][new, default: []].append(s)
            }
        }
        for (old, targets) in moves.sorted(by: { $0.key < $1.key }) {
            for (new, subs) in targets.sorted(by: { $0.key < $1.key }) {
                let moving = Set(subs.map(\.id))
                subscriptions[old]?.removeAll { moving.contains($0.id) }
                if subscriptions[old]?.isEmpty == true { subscriptions[old] = nil }
                subscriptions[new, default: []].append(contentsOf: subs)
                for s in subs { clients[s.clientID]?.subscriptions[s.id] = new }
                let domain = subs[0].address.domain
                let before = (try? load(domain, path: old)) ?? nil
                let after = (try? load(domain, path: new)) ?? nil
                // Only the moving subscriptions hear of the move, not those already at `new`.
                notify(subs, old: before ?? [:], new: after ?? [:])
            }
        }
    }

    private func hostIdentifier() throws(PreferencesError) -> String {
        if let hostID { return hostID }
        let id = try HostIdentifier.loadOrCreate(root: configuration.root)
        hostID = id
        return id
    }

    private func path(for address: DomainAddress) throws(PreferencesError) -> String {
        refreshResolverIfNeeded()
        return try resolver.path(for: address.domain, scope: address.scope, hostIdentifier: hostIdentifier)
    }

    /// The contents of a domain, from the cache when it is valid.
    private func load(_ address: DomainAddress) throws(PreferencesError) -> [String: PlistValue]? {
        let path = try path(for: address)
        return try load(address.domain, path: path)
    }

    private func load(_ domain: Domain, path: String) throws(PreferencesError) -> [String: PlistValue]? {
        let entry = cache[path] ?? CachedDomain()
        cache[path] = entry
        if entry.valid { return entry.contents }
        let dir = FileSystem.parentDirectory(path)
        let watched = watcher.watch(dir)
        let before = FileIdentity.of(path)
        let contents = try FilePreferenceStore.load(domain, path: path)
        entry.contents = contents
        entry.identity = before
        // Only a watched directory keeps the cache honest; otherwise read again next time.
        entry.valid = watched && FileIdentity.of(path) == before
        return contents
    }

    /// Files changed behind the service's back: drop their cache entries,
    /// and tell subscribers what changed.
    private func handleFileEvents() {
        let paths = watcher.drain()
        let registry = ContainerLayout(root: configuration.root).registryPath
        if watcher.overflowed || paths.contains(registry) || paths.contains(FileSystem.parentDirectory(registry)) {
            watchRegistry()
            refreshResolverIfNeeded()
        }
        if watcher.overflowed {
            for (path, entry) in cache where entry.valid ? FileIdentity.of(path) != entry.identity : subscriptions[path] != nil {
                entry.valid = false
                notifyExternal(path)
            }
            for entry in cache.values { entry.valid = false }
        }
        for path in paths {
            guard let entry = cache[path] else { continue }
            if entry.valid {
                if FileIdentity.of(path) == entry.identity { continue }
                entry.valid = false
            } else if subscriptions[path] == nil {
                continue
            }
            // An entry a failed read left invalid (a file caught half-written,
            // say) is read again for its subscribers, against the last good contents.
            notifyExternal(path)
        }
    }

    private func notifyExternal(_ path: String) {
        guard let subs = subscriptions[path], let first = subs.first, let entry = cache[path] else { return }
        let old = entry.contents ?? [:]
        let new: [String: PlistValue]?
        do { new = try load(first.address.domain, path: path) } catch { return }
        notify(subs, old: old, new: new ?? [:])
    }

    /// Sends each of `subs` the change from `old` to `new`, if any.
    private func notify(_ subs: [Subscription], old: [String: PlistValue], new: [String: PlistValue]) {
        for s in subs {
            guard let c = clients[s.clientID],
                  let change = DomainChange.between(old, new, subscription: s.id, address: s.address) else { continue }
            counters.notifications += 1
            send(c, .change(change))
        }
    }

    // MARK: - Writes

    private func queue(_ change: ChangeSet, options: WriteOptions, for address: DomainAddress, id: Int, from c: ClientConnection) throws(PreferencesError) {
        let path = try path(for: address)
        if pending[path] == nil { pendingOrder.append(path) }
        pending[path, default: []].append(PendingWrite(clientID: c.id, requestID: id, domain: address.domain, change: change, options: options))
        // The client's next request waits for this commit, so it reads its own write.
        c.waitingForCommit = true
    }

    /// Commits every queued write: one locked read-modify-write per domain,
    /// then the acknowledgements, then the change notifications.
    private func commitPending() {
        let order = pendingOrder
        let all = pending
        pendingOrder = []
        pending = [:]
        for path in order {
            guard let writes = all[path] else { continue }
            let results = commit(writes, path: path)
            for (w, r) in zip(writes, results) {
                if let c = clients[w.clientID] { send(c, .response(id: w.requestID, r)) }
            }
        }
        for c in clients.values { c.waitingForCommit = false }
    }

    /// Commits `writes` to one domain through the one commit path: each
    /// change set must still hold and pass the write policy, else it alone
    /// is refused; the rest are written together.
    private func commit(_ writes: [PendingWrite], path: String) -> [Result<[String: PlistValue], RemoteError>] {
        let domain = writes[0].domain
        let entry = cache[path] ?? CachedDomain()
        cache[path] = entry
        if entry.valid && FileIdentity.of(path) != entry.identity { entry.valid = false }
        let policy = configuration.writePolicy
        let outcome: DomainCommit.Outcome
        let results: [Result<[String: PlistValue], RemoteError>]
        do {
            (outcome, results) = try DomainCommit.run(domain, path: path, load: { d, p throws(PreferencesError) in try self.load(d, path: p) }) { working in
                var results: [Result<[String: PlistValue], RemoteError>] = []
                for w in writes {
                    counters.writes += 1
                    guard w.change.holds(in: working) else {
                        results.append(.failure(RemoteError(.conflict, "the domain \(w.domain) changed; nothing was written")))
                        continue
                    }
                    var next = working
                    do throws(PreferencesError) {
                        try w.change.checkDepth(of: w.domain)
                        w.change.apply(to: &next)
                        let notes = try policy?.check(w.domain, old: working, new: next, options: w.options) ?? []
                        working = next
                        results.append(.success(notes.isEmpty ? [:] : ["notes": .array(notes.map(Self.encode))]))
                    } catch {
                        let code: ErrorCode = if case .policyViolation = error { .policyViolation } else { .preferences }
                        results.append(.failure(RemoteError(code, error.description)))
                    }
                }
                return results
            }
        } catch {
            entry.valid = false
            let e = error as? PreferencesError ?? .service("\(error)")
            return Array(repeating: .failure(RemoteError(.preferences, e.description)), count: writes.count)
        }
        guard outcome.written else { return results }
        counters.commits += 1
        entry.contents = outcome.new.isEmpty ? nil : outcome.new
        entry.identity = FileIdentity.of(path)
        let dir = FileSystem.parentDirectory(path)
        entry.valid = watcher.isWatching(dir) || watcher.watch(dir)
        notify(subscriptions[path] ?? [], old: outcome.old, new: outcome.new)
        return results
    }

    /// A write note as a batch's reply carries it.
    static func encode(_ note: WriteNote) -> PlistValue {
        .dictionary(["rule": .string(note.rule), "message": .string(note.message), "forced": .bool(note.forced)])
    }

    // MARK: - Uninstall

    /// Runs an uninstall on another thread (hooks may take seconds) and
    /// replies when it is done; the loop keeps serving meanwhile.
    private func startUninstall(_ bundle: String, environment: [String: String], id: Int, from c: ClientConnection) {
        let root = configuration.root
        let clientID = c.id
        let wake = wakePipe.write
        let jobs = finishedJobs
        // A barrier: no keychain call of the app runs while its items are shredded.
        jobQueue.async(flags: .barrier) {
            let result: Result<[String: PlistValue], RemoteError>
            do {
                let identifier = try BundleIdentifier(bundle)
                // The keychain key policy follows the caller's environment, as
                // `apphome uninstall` without the daemon would.
                let keychain = KeychainParticipant(root: root, policy: .forEnvironment(environment))
                let report = try ContainerManager(root: root, participants: [keychain]).uninstall(identifier, environment: environment)
                result = .success([
                    "version": .string(report.entry.displayVersion),
                    "home": .string(report.home.path),
                    "removedGroups": .array(report.removedGroups.map { .string($0.rawValue) }),
                    "warnings": .array((report.participantFailures + report.hooks.compactMap(\.failureDescription)).map { .string($0) }),
                ])
            } catch {
                result = .failure(RemoteError(.containers, "\(error)"))
            }
            jobs.list.withLock { $0.append((clientID, id, result, true)) }
            var b: UInt8 = 1
            _ = write(wake, &b, 1)
        }
    }

    // MARK: - Keychain

    /// Runs a keychain call on another thread (the device key may come
    /// from the Secret Service over D-Bus, and item files are locked) and
    /// replies when it is done.
    private func startKeychain(_ request: Request, caller: KeychainCaller, id: Int, from c: ClientConnection) {
        let root = configuration.root
        let environment = configuration.keychainEnvironment
        let clock = configuration.keychainClock
        let clientID = c.id
        let wake = wakePipe.write
        let jobs = finishedJobs
        jobQueue.async {
            let result = Self.performKeychain(request, caller: caller, root: root, environment: environment, now: clock)
            jobs.list.withLock { $0.append((clientID, id, result, false)) }
            var b: UInt8 = 1
            _ = write(wake, &b, 1)
        }
    }

    /// Checks that `caller` holds its app's credential, then makes the
    /// call in that app's keychain context (its access groups only).
    static func performKeychain(_ request: Request, caller: KeychainCaller, root: String,
                                environment: [String: String], now: @escaping @Sendable () -> PlistDate) -> Result<[String: PlistValue], RemoteError> {
        let manager = ContainerManager(root: root)
        let refused = RemoteError(.notAuthorized, "prefsd: the caller did not prove it acts for the app \(caller.bundleIdentifier)")
        guard let identifier = try? BundleIdentifier(caller.bundleIdentifier), let entry = try? manager.entry(for: identifier) else {
            return .failure(RemoteError(.notAuthorized, "prefsd: no installed app \(caller.bundleIdentifier)"))
        }
        let home = manager.layout.home(uuid: entry.homeUUID, bundleName: entry.bundleName)
        guard AppCredential.verify(caller.credential, home: home) else { return .failure(refused) }
        let keychain = Keychain(root: root, policy: .forEnvironment(environment), now: now)
        do throws(KeychainError) {
            let context = try KeychainContext(installed: entry, layout: manager.layout)
            switch request {
            case .keychainFind(_, let query):
                let found = try keychain.copyMatching(try KeychainWire.query(query), context: context)
                return .success(["items": .array(found.map { .dictionary(KeychainWire.encode($0)) })])
            // The secret also sits in the request's frame and plist buffers, so
            // it is copied into secure memory here, not "wiped" from a copy.
            case .keychainAdd(_, let attributes, let data):
                try keychain.add(try KeychainWire.attributes(attributes), data: SecureBytes(data), context: context)
            case .keychainUpdate(_, let query, let changes, let data):
                var c = try KeychainWire.changes(changes)
                if let bytes = data { c.data = SecureBytes(bytes) }
                try keychain.update(try KeychainWire.query(query), with: c, context: context)
            case .keychainDelete(_, let query):
                try keychain.delete(try KeychainWire.query(query), context: context)
            default:
                return .failure(RemoteError(.unknownOperation, "operation \(request.operation.rawValue) is not a keychain operation"))
            }
            return .success([:])
        } catch {
            return .failure(RemoteError(.keychain, error.description, status: error.status))
        }
    }

    private func finishJobs() {
        var b = [UInt8](repeating: 0, count: 64)
        while read(wakePipe.read, &b, 64) > 0 {}
        let done = finishedJobs.list.withLock { jobs in defer { jobs.removeAll() }; return jobs }
        for job in done {
            if job.changesRegistry {
                registryIdentity = nil
                resolver = DomainResolver(root: configuration.root)
                refreshResolverIfNeeded()
            }
            if let c = clients[job.clientID] { send(c, .response(id: job.requestID, job.result)) }
        }
    }
}

/// Uninstalls and keychain calls finished on worker threads, waiting for the loop to reply.
final class FinishedJobs: Sendable {
    /// `changesRegistry`: an uninstall, after which domains resolve anew.
    /// (Subscribers of the app's domain follow it when the registry is read again.)
    let list = Mutex<[(clientID: Int, requestID: Int, result: Result<[String: PlistValue], RemoteError>, changesRegistry: Bool)]>([])
}

/// Why the service cannot start.
public enum ServiceError: Error, Equatable, Sendable, CustomStringConvertible {
    case alreadyRunning(String)
    case unsafeDirectory(String, reason: String)
    case system(SystemError)

    public var description: String {
        switch self {
        case .alreadyRunning(let p): return "another prefsd is already serving \(p)"
        case .unsafeDirectory(let d, let reason): return "refusing the socket directory \(d): \(reason)"
        case .system(let e): return e.description
        }
    }
}
