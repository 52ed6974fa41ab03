#if canImport(Glibc)
import Glibc
#endif
import AppHomeSystem
import Dispatch
import PrefsProtocol

/// The prefsd service: one thread, one `poll` loop, every socket
/// non-blocking, so no client can hold up another.
///
/// The loop owns the parts, each in its own folder: the client
/// connections (`Loop/`), the domain cache and its watcher (`Cache/`), the
/// subscriptions (`Subscriptions/`), the write queue and its group commit
/// (`Writes/`, where the durability promise is stated), and the job runner
/// for uninstalls and keychain calls (`Jobs/`); `Requests/` says what
/// each request does with them.
public final class PrefsServer {
    let configuration: ServerConfiguration
    private var listener: Int32 = -1
    private var ownsSocketPath = false
    private let signalPipe: WakePipe
    private var signalSources: [DispatchSourceSignal] = []
    var clients: [Int: ClientConnection] = [:]
    var nextClientID = 1
    /// Unread reply bytes of all clients, counted at the start of each
    /// turn and kept up as replies are queued (see ``isPaused(_:)``).
    var queuedOutputBytes = 0
    let cache: DomainCache
    /// The inodes commits freed, kept to write the next commit of their domain into.
    let spares = ReplacementSpares()
    /// The managed directory, when the configuration names one.
    let managedWatch: ManagedWatch?
    var subscriptions = SubscriptionTable()
    var writes = WriteQueue()
    /// The clients whose writes the last commit acknowledged, and how long
    /// that commit took (see ``gatherWriters()``).
    var recentWriters: [Int] = []
    var lastCommitSeconds = 0.0
    let jobs: JobRunner
    /// The credential socket, served on a thread of its own.
    private let credentials: CredentialServer?
    let started = UnixSocket.now()
    var counters = (reads: 0, writes: 0, commits: 0, notifications: 0)
    /// Where the turns that committed writes spent their time (`status`).
    var writeTurns = WriteTurnTimes()
    private var stopping = false
    /// Merges the synced key-value stores as other devices' logs arrive.
    private var syncWatch: SyncWatch?

    /// Prepares the service: binds (or adopts) the socket.
    ///
    /// - Throws: ``ServiceError`` when the socket cannot be set up or
    ///   another prefsd answers on it.
    public init(configuration: ServerConfiguration) throws(ServiceError) {
        self.configuration = configuration
        self.cache = DomainCache(root: configuration.root)
        self.managedWatch = configuration.managed.map(ManagedWatch.init)
        // The credential socket is bound first, so that it is there (and its
        // directory settled) once the preference socket answers; a live prefsd
        // on the preference socket is still the error reported.
        if let path = configuration.credentialSocketPath {
            if configuration.inheritedListener == nil, FileSystem.exists(configuration.socketPath),
               let fd = try? UnixSocket.connect(to: configuration.socketPath, timeout: 1) {
                close(fd)
                throw .alreadyRunning(configuration.socketPath)
            }
            credentials = try CredentialServer(settings: .init(path: path, root: configuration.root, ownerUID: configuration.ownerUID,
                                                               policy: configuration.keyPolicy, clock: configuration.keychainClock,
                                                               log: configuration.log))
        } else {
            credentials = nil
        }
        if let fd = configuration.inheritedListener {
            listener = fd
            do { try UnixSocket.setNonBlocking(fd, path: configuration.socketPath) } catch { throw .system(error) }
        } else {
            listener = try ListeningSocket.bind(configuration.socketPath)
            ownsSocketPath = true
        }
        signalPipe = try WakePipe.make()
        jobs = try JobRunner(configuration: configuration)
        cache.resolverChanged = { [unowned self] in followMovedDomains() }
        cache.refreshResolverIfNeeded()
    }

    deinit {
        for c in clients.values { close(c.fd) }
        if listener >= 0 { close(listener) }
        signalPipe.close()
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
            source.setEventHandler { WakePipe.poke(fd) }
            source.resume()
            signalSources.append(source)
        }
        configuration.log("prefsd: serving \(configuration.root) on \(configuration.socketPath)")
        if let credentials {
            do throws(ServiceError) { try credentials.start() } catch {
                configuration.log("prefsd: the credential socket cannot be served: \(error)")
            }
        }
        cache.watchRegistry()
        refreshManaged(after: [], overflowed: true)
        if configuration.syncPasses {
            syncWatch = SyncWatch(root: configuration.root, log: configuration.log)
            syncWatch?.start()
        }
        while !stopping { turn() }
        credentials?.stop()
        syncWatch?.stop()
        for s in signalSources { s.cancel() }
        for id in Array(clients.keys) { dropClient(id) }
        if ownsSocketPath { unlink(configuration.socketPath) }
        configuration.log("prefsd: stopped")
    }

    /// Asks a running ``run()`` to stop (for tests in process).
    public func requestStop() {
        WakePipe.poke(signalPipe.write)
    }

    /// One turn: wait for something to do, take in edits made behind the
    /// service's back and finished jobs, read and handle the clients'
    /// requests, commit the turn's writes, send the replies.
    private func turn() {
        var fds: [pollfd] = [
            pollfd(fd: listener, events: Int16(POLLIN), revents: 0),
            pollfd(fd: cache.watcher.fd, events: Int16(POLLIN), revents: 0),
            pollfd(fd: signalPipe.read, events: Int16(POLLIN), revents: 0),
            pollfd(fd: jobs.wake.read, events: Int16(POLLIN), revents: 0),
        ]
        let order = clients.keys.sorted()
        var busy = false
        queuedOutputBytes = clients.values.reduce(0) { $0 + $1.queuedBytes }
        for id in order {
            let c = clients[id]!
            let paused = isPaused(c)
            fds.append(pollfd(fd: c.fd, events: c.pollEvents(paused: paused), revents: 0))
            if !c.closing && !paused && !c.waitingForCommit && c.reader.hasCompleteFrame { busy = true }
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
        cache.watchRootIfItAppeared()
        cache.requestsArrived()
        // Direct edits first: a reply after this turn reflects every edit finished before it.
        if fds[1].revents != 0 {
            cache.handleFileEvents(isSubscribed: subscriptions.isSubscribed, changed: notifyExternal) { paths, overflowed in
                refreshManaged(after: paths, overflowed: overflowed)
            }
        }
        if fds[3].revents != 0 { finishJobs() }
        if fds[0].revents & Int16(POLLNVAL | POLLERR) != 0 {
            configuration.log("prefsd: the listening socket is not usable; stopping")
            stopping = true
            return
        }
        if fds[0].revents != 0 { acceptClients() }
        let now = UnixSocket.now()
        readRequests(order, events: fds[4...].map(\.revents), now: now)
        let committing = !writes.isEmpty, read = UnixSocket.now()
        gatherWriters()
        let gathered = UnixSocket.now(), flushed = spares.flushSeconds
        commitPending()
        let committed = UnixSocket.now()
        sendReplies(order, now: now)
        if committing {
            writeTurns.add(reading: read - now, gathering: gathered - read, flushing: spares.flushSeconds - flushed,
                           committing: committed - gathered, replying: UnixSocket.now() - committed)
        }
    }

    /// Replies to the jobs that finished.
    private func finishJobs() {
        for job in jobs.takeFinished() {
            if job.changesRegistry {
                cache.registryChanged()
                spares.releaseVanished()
            }
            if let c = clients[job.clientID] { send(c, .response(id: job.requestID, job.result)) }
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
            // Which app it is, if any: from its sandbox, read now through a pidfd.
            let sandbox = PeerIdentity.sandbox(ofSocketPeer: fd)
            clients[id] = ClientConnection(fd: fd, id: id, maximumPayload: configuration.maximumPayload, now: UnixSocket.now(), peerPID: cred.pid,
                                           sandbox: sandbox, confinement: PeerConfinement.of(sandbox, root: configuration.root))
        }
    }
}
