#if canImport(Glibc)
import Glibc
#endif
import AppHomeSystem
import PrefsProtocol

/// One connected client: its socket, what it sent that is not handled yet,
/// and what it has not read yet. Owned by the service's loop.
final class ClientConnection {
    let fd: Int32
    let id: Int
    var reader: FrameReader
    private var output: [UInt8] = []
    private var outputStart = 0
    /// When the unfinished frame in ``reader`` started arriving.
    var partialFrameSince: Double?
    /// The last time replies drained (or the queue was empty).
    var lastOutputProgress: Double
    /// Subscription number → domain file.
    var subscriptions: [Int: String] = [:]
    /// Close once the queued replies are sent; read nothing more.
    var closing = false
    /// The peer closed its end (or reading failed).
    var peerClosed = false
    /// Writing failed: drop at once.
    var failed = false
    /// A write of this client waits for the turn's commit.
    var waitingForCommit = false

    /// The peer's process id, as the kernel recorded it at connect time
    /// (`SO_PEERCRED`; 0 when unknown).
    var peerPID: Int32 = 0
    /// The peer's sandbox, read through its root when it connected
    /// (``PeerIdentity``): what the service knows it by.
    let sandbox: PeerSandbox
    /// For a confined peer, the domains it may address (its app's domain
    /// and its app groups' suites; the global domain to read); `nil` for
    /// an unconfined one.
    let confinement: PeerConfinement?

    init(fd: Int32, id: Int, maximumPayload: Int, now: Double, peerPID: Int32 = 0, sandbox: PeerSandbox = .unconfined,
         confinement: PeerConfinement? = nil) {
        self.id = id
        self.peerPID = peerPID
        self.sandbox = sandbox
        self.confinement = confinement
        self.fd = fd
        self.reader = FrameReader(maximumPayload: maximumPayload)
        self.lastOutputProgress = now
    }

    var hasOutput: Bool { outputStart < output.count }

    /// Bytes of replies queued and not yet taken by the socket.
    var queuedBytes: Int { output.count - outputStart }

    /// What the loop waits for on this socket: requests unless closing,
    /// paused (see ``PrefsServer/isPaused(_:)``) or still holding complete
    /// frames to handle; room to write while replies wait.
    func pollEvents(paused: Bool) -> Int16 {
        var events: Int16 = 0
        if !closing && !paused && !reader.hasCompleteFrame { events |= Int16(POLLIN) }
        if hasOutput { events |= Int16(POLLOUT) }
        return events
    }

    func enqueue(_ bytes: [UInt8]) {
        if !hasOutput { lastOutputProgress = UnixSocket.now() }
        output.append(contentsOf: bytes)
    }

    /// Forgets the queued replies of a client about to be dropped.
    func discardOutput() {
        output = []
        outputStart = 0
    }

    /// Reads what is available, at most `limit` bytes; false when the peer
    /// closed the connection or reading failed.
    func readAvailable(now: Double, limit: Int) -> Bool {
        // Uninitialised scratch (a zeroed array here cost a 64 KiB memset per request).
        let open = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 65_536) { chunk -> Bool in
            var total = 0
            while total < limit {
                let n = recv(fd, chunk.baseAddress, chunk.count, 0)
                if n > 0 {
                    reader.append(UnsafeBufferPointer(rebasing: chunk[0..<n]))
                    total += n
                    // A short read emptied the socket: what comes later (or
                    // the peer's close) wakes the next poll. Not asking again
                    // saves a failing recv per request.
                    if n < chunk.count { break }
                    continue
                }
                if n < 0 && errno == EINTR { continue }
                if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { break }
                return false
            }
            return true
        }
        notePartialFrame(now: now)
        return open
    }

    /// Starts (or stops) the clock on an unfinished frame.
    func notePartialFrame(now: Double) {
        if reader.pendingByteCount > 0 && !reader.hasCompleteFrame {
            if partialFrameSince == nil { partialFrameSince = now }
        } else {
            partialFrameSince = nil
        }
    }

    /// Sends as much queued output as the socket takes.
    func writeAvailable(now: Double) {
        while hasOutput {
            let n = output.withUnsafeBytes { send(fd, $0.baseAddress! + outputStart, $0.count - outputStart, Int32(MSG_NOSIGNAL)) }
            if n > 0 {
                outputStart += n
                lastOutputProgress = now
                continue
            }
            if n < 0 && errno == EINTR { continue }
            if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { return }
            failed = true
            return
        }
        output.removeAll(keepingCapacity: output.count <= 1 << 20)
        outputStart = 0
    }
}
