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
        /// half-close is closed to make room.
        var maximumConnections = 256
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
        init(fd: Int32, serial: Int, unit: SystemdUnitName, id: CredentialID, deadline: Double) {
            self.fd = fd; self.serial = serial; self.unit = unit; self.id = id; self.deadline = deadline
        }
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
            let c = Connection(fd: fd, serial: nextSerial, unit: unit, id: id, deadline: UnixSocket.now() + settings.halfCloseTimeout)
            nextSerial += 1
            connections[c.serial] = c
            // systemd half-closes right after connecting: usually the end is already here.
            readHalfClose(c)
        }
    }

    /// At the limit: closes the oldest connection still to half-close, or,
    /// with none, the new one.
    private func makeRoom(for what: String, fd: Int32) {
        let oldest = connections.values.filter { if case .awaitingHalfClose = $0.phase { true } else { false } }.min { $0.serial < $1.serial }
        if let oldest {
            drop(oldest, "closed to make room: \(settings.maximumConnections) credential connections were open")
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
            c.deadline = UnixSocket.now() + settings.answerTimeout
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
            c.phase = .writing(secret, offset: 0)
            writeSome(c)
        }
    }

    private func writeSome(_ c: Connection) {
        guard case .writing(let secret, var offset) = c.phase else { return }
        while offset < secret.count {
            let n = secret.withUnsafeBytes { send(c.fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
            if n > 0 { offset += n; continue }
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
            case .writing: drop(c, "closed: the peer did not read the credential in \(settings.answerTimeout) s")
            }
        }
    }

    /// Closes `c` with nothing more written and logs why.
    private func drop(_ c: Connection, _ why: String) {
        close(c.fd)
        connections.removeValue(forKey: c.serial)
        settings.log("prefsd: credentials: \(c.what): \(why)")
    }
}

/// A reference handed to another thread; the code around it says which
/// thread touches what.
private final class Unchecked<T: AnyObject>: @unchecked Sendable {
    let value: T
    init(_ value: T) { self.value = value }
}
