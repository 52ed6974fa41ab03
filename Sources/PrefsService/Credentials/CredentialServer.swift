#if canImport(Glibc)
import Glibc
#endif
import AppHomeSystem
import Dispatch
import Keychain
import PrefsProtocol
import PropertyList
import Synchronization

/// prefsd's credential socket: systemd's `LoadCredential=ID:PATH` protocol
/// with PATH a stream socket (systemd.exec(5)), serving the login
/// keychain's grants (docs/credentials.md).
///
/// The service manager binds its end to the abstract address
/// `\0<random>/unit/<unit>/<id>`, connects, half-closes and reads to the
/// end: there is no request and no framing, the peer's address is the
/// request and closing is the only answer. So the server:
///
/// - refuses a peer whose `SO_PEERCRED` uid is neither root nor its own
///   (the service manager of a system or a user instance);
/// - reads the unit and the id from `getpeername`, refusing anything that
///   is not such an abstract address;
/// - waits for the half-close (a peer that sends bytes or never half-closes
///   is closed), looks the grant up (on a worker thread when that may mean
///   asking the Secret Service), writes the bytes and closes; a refusal
///   closes with nothing written.
///
/// A credential is handed to the kernel whole where it can be: the
/// connection's send buffer is raised to the credential's size (up to the
/// system's `net.core.wmem_max`), so that the peer holds the whole secret
/// before its end of stream and prefsd holds nothing for it. Where it cannot
/// (a credential larger than the system lets a buffer be), the rest is
/// written as the peer reads; then a peer that makes no progress is ended,
/// first when room is needed (connections, or the bytes held for peers), and
/// at the latest `answerTimeout` after its last progress. A Unix socket has
/// no reset (Linux ignores `SO_LINGER` on `AF_UNIX`): such a peer sees an end
/// of stream after a part, so the log says it was cut.
///
/// Every refusal is logged with the unit, the id and the reason, never the
/// secret. It runs on a thread of its own with one `poll` loop and
/// non-blocking sockets: a slow or hostile peer holds up nobody, and the
/// preference clients on the main loop are not touched at all.
final class CredentialServer: @unchecked Sendable {
    struct Settings: Sendable {
        var path: String
        var root: String
        var ownerUID: UInt32
        var policy: DeviceKeyPolicy
        var clock: @Sendable () -> PlistDate
        var log: @Sendable (String) -> Void
        /// Seconds a peer has to half-close after connecting.
        var halfCloseTimeout: Double = 1
        /// Seconds for the look-up and for the peer to read the bytes.
        var answerTimeout: Double = 5
        /// Connections open at once; past it the oldest one still to
        /// half-close, or else the writer stalled longest, is closed to
        /// make room.
        var maximumConnections = 256
        /// Bytes of credentials held for peers still to read them, all
        /// peers together (a peer holds at most its credential).
        var maximumHeldBytes = 8 << 20
        /// A writer that made no progress for this long may be ended to make room.
        var stallTimeout: Double = 0.25
        /// The most the send buffer of a connection is raised to
        /// (`nil`: as far as the system allows).
        var maximumSendBuffer: Int? = nil
    }

    private enum Phase {
        case awaitingHalfClose
        case resolving
        case writing(SecureBytes, offset: Int)
    }

    private final class Connection {
        let fd: Int32
        let serial: Int
        let unit: SystemdUnitName
        let id: CredentialID
        var phase = Phase.awaitingHalfClose
        var deadline: Double
        /// When it last moved on: accepted, half-closed, or bytes taken.
        var progress: Double
        init(fd: Int32, serial: Int, unit: SystemdUnitName, id: CredentialID, deadline: Double, now: Double) {
            self.fd = fd; self.serial = serial; self.unit = unit; self.id = id; self.deadline = deadline; self.progress = now
        }
        /// Bytes of secret this connection holds in prefsd.
        var held: Int { if case .writing(let s, _) = phase { s.count } else { 0 } }
        var what: String { "credential '\(id.rawValue)' for unit '\(unit.rawValue)'" }
    }

    private let settings: Settings
    /// Credentials served, while nothing they came from changed.
    private let cache = CredentialCache()
    private let listener: Int32
    private let stopPipe: WakePipe
    private let resolvedPipe: WakePipe
    private let resolved = Mutex<[(serial: Int, result: Result<SecureBytes, CredentialRefusal>)]>([])
    private var connections: [Int: Connection] = [:]
    private var nextSerial = 1
    private let finished = DispatchSemaphore(value: 0)
    private var running = false
    private var started = false

    /// Binds the socket at `settings.path` (0600, in a 0700 directory).
    init(settings: Settings) throws(ServiceError) {
        self.settings = settings
        listener = try ListeningSocket.bind(settings.path)
        stopPipe = try WakePipe.make()
        resolvedPipe = try WakePipe.make()
    }

    deinit {
        for c in connections.values { close(c.fd) }
        close(listener)
        // Bound but never served (prefsd did not start): the socket goes too.
        if !started { unlink(settings.path) }
        stopPipe.close()
        resolvedPipe.close()
    }

    /// Starts serving on a thread of its own.
    func start() throws(ServiceError) {
        let box = Unchecked(self)
        started = true
        running = DetachedThread.start {
            box.value.loop()
            box.value.finished.signal()
        }
        if !running { throw .system(SystemError("pthread_create", path: settings.path, errno: EAGAIN)) }
        settings.log("prefsd: serving credentials on \(settings.path)")
    }

    /// Stops the thread, closes every connection and removes the socket.
    func stop() {
        guard running else { return }
        running = false
        WakePipe.poke(stopPipe.write)
        finished.wait()
        unlink(settings.path)
    }

    private func loop() {
        while true {
            var fds = [pollfd(fd: listener, events: Int16(POLLIN), revents: 0),
                       pollfd(fd: stopPipe.read, events: Int16(POLLIN), revents: 0),
                       pollfd(fd: resolvedPipe.read, events: Int16(POLLIN), revents: 0)]
            let order = connections.keys.sorted()
            var nearest = UnixSocket.now() + 1
            for serial in order {
                let c = connections[serial]!
                let events: Int16
                switch c.phase {
                case .awaitingHalfClose: events = Int16(POLLIN)
                case .resolving: events = 0
                case .writing: events = Int16(POLLOUT)
                }
                fds.append(pollfd(fd: c.fd, events: events, revents: 0))
                nearest = min(nearest, c.deadline)
            }
            let timeout = Int32(max(0, min(1000, (nearest - UnixSocket.now()) * 1000 + 1)))
            let n = poll(&fds, nfds_t(fds.count), timeout)
            if n < 0 && errno != EINTR {
                settings.log("prefsd: credentials: poll failed: \(String(cString: strerror(errno))); the credential socket stops")
                break
            }
            if fds[1].revents != 0 { break }
            if fds[2].revents != 0 { takeResolved() }
            for (i, serial) in order.enumerated() where fds[3 + i].revents != 0 {
                guard let c = connections[serial] else { continue }
                switch c.phase {
                case .awaitingHalfClose: readHalfClose(c)
                case .writing: writeSome(c)
                case .resolving: if fds[3 + i].revents & Int16(POLLHUP | POLLERR) != 0 { drop(c, "the peer went away before the answer") }
                }
            }
            if fds[0].revents != 0 { acceptAll() }
            expire()
        }
        for c in Array(connections.values) { close(c.fd) }
        connections.removeAll()
    }

    // MARK: Accepting

    private func acceptAll() {
        while let fd = UnixSocket.accept(listener) {
            guard let cred = UnixSocket.peerCredentials(fd), cred.uid == 0 || cred.uid == settings.ownerUID else {
                let who = UnixSocket.peerCredentials(fd).map { "uid \($0.uid), pid \($0.pid)" } ?? "unknown"
                settings.log("prefsd: credentials: refused a peer (\(who)): only root or uid \(settings.ownerUID) (the service manager) may load credentials")
                close(fd)
                continue
            }
            // The login keychain is the user's: a peer started in an app's context
            // (inside `apphome run`) is not the service manager, whatever it names.
            if let app = ProcessContext.appContext(ofSocketPeer: fd, pid: cred.pid) {
                settings.log("prefsd: credentials: refused a peer (pid \(cred.pid)): it was started in the context of the app \(app)")
                close(fd)
                continue
            }
            let unit: SystemdUnitName, id: CredentialID
            switch PeerAddress.parse(fd) {
            case .failure(let why):
                settings.log("prefsd: credentials: refused a peer (pid \(cred.pid)): \(why)")
                close(fd)
                continue
            case .success(let named):
                (unit, id) = named
            }
            if connections.count >= settings.maximumConnections { makeRoom(for: "credential '\(id)' for unit '\(unit)'", fd: fd) }
            guard connections.count < settings.maximumConnections else { continue }
            let now = UnixSocket.now()
            let c = Connection(fd: fd, serial: nextSerial, unit: unit, id: id, deadline: now + settings.halfCloseTimeout, now: now)
            nextSerial += 1
            connections[c.serial] = c
            // systemd half-closes right after connecting: usually the end is already here.
            readHalfClose(c)
        }
    }

    /// At the limit: closes the oldest connection still to half-close, or
    /// the writer stalled longest, or, with neither, the new one.
    private func makeRoom(for what: String, fd: Int32) {
        let oldest = connections.values.filter { if case .awaitingHalfClose = $0.phase { true } else { false } }.min { $0.serial < $1.serial }
        if let victim = oldest ?? stalledWriters().first {
            drop(victim, "closed to make room: \(settings.maximumConnections) credential connections were open")
        } else {
            settings.log("prefsd: credentials: \(what): refused: \(settings.maximumConnections) credential connections are being answered")
            close(fd)
        }
    }

    // MARK: Serving

    private func readHalfClose(_ c: Connection) {
        var buffer = [UInt8](repeating: 0, count: 64)
        let n = buffer.withUnsafeMutableBytes { recv(c.fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
        if n == 0 {
            c.phase = .resolving
            c.progress = UnixSocket.now()
            c.deadline = c.progress + settings.answerTimeout
            resolve(c)
        } else if n > 0 {
            drop(c, "refused: the peer sent data (the protocol has no request)")
        } else if errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR {
            drop(c, "the connection failed: \(String(cString: strerror(errno)))")
        }
    }

    /// Looks the grant up: from the cache when it was served before and
    /// nothing changed since (``CredentialCache``); else on this thread when
    /// the keys are at hand (the keybag holds them, the store is known
    /// locked, or the key is in a file: file reads and arithmetic only, well
    /// under a millisecond), else on a worker thread, since asking the
    /// Secret Service may take long.
    private func resolve(_ c: Connection) {
        let settings = settings, cache = cache
        let serial = c.serial, unit = c.unit, id = c.id
        let keychain = Keychain(root: settings.root, policy: settings.policy, now: settings.clock)
        // Served before and nothing changed since: three stats.
        if let secret = keychain.cachedCredential(unit: unit, id: id, cache: cache) {
            finish(c, .success(secret))
            return
        }
        if settings.policy.secretStore == nil || settings.policy.keybag.map({ $0.holdsRootKey || $0.storeIsLocked }) == true {
            finish(c, keychain.credential(unit: unit, id: id, cache: cache))
            return
        }
        let box = Unchecked(self)
        DispatchQueue.global().async {
            let keychain = Keychain(root: settings.root, policy: settings.policy, now: settings.clock)
            let result = keychain.credential(unit: unit, id: id, cache: cache)
            box.value.resolved.withLock { $0.append((serial, result)) }
            WakePipe.poke(box.value.resolvedPipe.write)
        }
    }

    private func takeResolved() {
        resolvedPipe.drain()
        let done = resolved.withLock { list in defer { list.removeAll() }; return list }
        for (serial, result) in done {
            // A connection closed meanwhile (timeout) is gone: the secret is dropped.
            guard let c = connections[serial] else { continue }
            finish(c, result)
        }
    }

    private func finish(_ c: Connection, _ result: Result<SecureBytes, CredentialRefusal>) {
        switch result {
        case .failure(let refusal):
            drop(c, "refused: \(refusal)")
        case .success(let secret):
            // The whole credential into the kernel at once where it fits:
            // then nothing is held here and nothing can be cut.
            Self.raiseSendBuffer(c.fd, to: secret.count, atMost: settings.maximumSendBuffer)
            c.phase = .writing(secret, offset: 0)
            writeSome(c)
            if case .writing = c.phase, connections[c.serial] != nil { boundHeldBytes(keeping: c) }
        }
    }

    /// Asks for a send buffer that takes `bytes` at once (the kernel
    /// doubles the value for its bookkeeping, and keeps it within
    /// `net.core.wmem_max`); never lowers it.
    private static func raiseSendBuffer(_ fd: Int32, to bytes: Int, atMost limit: Int?) {
        var current: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &current, &length) == 0 else { return }
        var wanted = Int32(clamping: min(bytes + 65536, limit ?? Int.max))
        if Int(current) >= Int(wanted) * 2 { return }
        setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &wanted, socklen_t(MemoryLayout<Int32>.size))
    }

    /// Writers that made no progress for `stallTimeout`, stalled longest first.
    private func stalledWriters() -> [Connection] {
        let now = UnixSocket.now()
        return connections.values.filter { c in
            if case .writing = c.phase { return now - c.progress >= settings.stallTimeout }
            return false
        }.sorted { $0.progress < $1.progress }
    }

    /// Keeps the bytes held for peers within `maximumHeldBytes`: ends the
    /// writers stalled longest, then, if that is not enough, `c`.
    private func boundHeldBytes(keeping c: Connection) {
        var total = connections.values.reduce(0) { $0 + $1.held }
        guard total > settings.maximumHeldBytes else { return }
        for victim in stalledWriters() where victim !== c && total > settings.maximumHeldBytes {
            total -= victim.held
            drop(victim, "closed to make room: more than \(settings.maximumHeldBytes) bytes were waiting for peers to read them")
        }
        if total > settings.maximumHeldBytes {
            drop(c, "closed: more than \(settings.maximumHeldBytes) bytes are waiting for peers that read them")
        }
    }

    private func writeSome(_ c: Connection) {
        guard case .writing(let secret, var offset) = c.phase else { return }
        while offset < secret.count {
            let n = secret.withUnsafeBytes { send(c.fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
            if n > 0 {
                offset += n
                c.progress = UnixSocket.now()
                c.deadline = c.progress + settings.answerTimeout
                continue
            }
            if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
                c.phase = .writing(secret, offset: offset)
                return
            }
            drop(c, "the peer stopped reading after \(offset) of \(secret.count) bytes")
            return
        }
        close(c.fd)
        connections.removeValue(forKey: c.serial)
        settings.log("prefsd: credentials: \(c.what): served \(secret.count) bytes")
    }

    private func expire() {
        let now = UnixSocket.now()
        for c in Array(connections.values) where c.deadline <= now {
            switch c.phase {
            case .awaitingHalfClose: drop(c, "closed: the peer did not half-close in \(settings.halfCloseTimeout) s")
            case .resolving: drop(c, "closed: the keychain did not answer in \(settings.answerTimeout) s")
            case .writing: drop(c, "closed: the peer read nothing for \(settings.answerTimeout) s")
            }
        }
    }

    /// Closes `c` with nothing more written and logs why (and, for a
    /// credential cut, how much the peer was given).
    private func drop(_ c: Connection, _ why: String) {
        close(c.fd)
        connections.removeValue(forKey: c.serial)
        if case .writing(let secret, let offset) = c.phase, offset > 0 {
            settings.log("prefsd: credentials: \(c.what): \(why); cut after \(offset) of \(secret.count) bytes")
        } else {
            settings.log("prefsd: credentials: \(c.what): \(why)")
        }
    }
}

/// A reference handed to another thread; the code around it says which
/// thread touches what.
private final class Unchecked<T: AnyObject>: @unchecked Sendable {
    let value: T
    init(_ value: T) { self.value = value }
}
