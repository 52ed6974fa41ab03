#if canImport(Glibc)
import Glibc
#endif
import AppHomeSystem
import Preferences
import PrefsProtocol
import PropertyList

/// Why a call to prefsd failed.
public enum PrefsClientError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Nothing answers on the socket.
    case notRunning(socket: String, reason: String)
    /// The service answered with an error; the message is its text.
    case remote(RemoteError)
    /// The connection broke or the service said something unreadable.
    case connection(String)
    /// The request cannot be encoded (for example, a value nested too deep).
    case encoding(PlistError)

    public var description: String {
        switch self {
        case .notRunning(let socket, let reason): return "prefsd is not answering on \(socket): \(reason)"
        case .remote(let e): return e.message
        case .connection(let m): return "lost the connection to prefsd: \(m)"
        case .encoding(let e): return e.description
        }
    }
}

/// One connection to prefsd: requests and their replies in order, and the
/// change notifications of its subscriptions.
///
/// Blocking, with send and receive timeouts; not for use from two threads
/// at once (``DaemonPreferenceStore`` wraps one in a lock).
public final class PrefsConnection {
    let fd: Int32
    /// The socket this connection goes to.
    public let socketPath: String
    private var reader = FrameReader()
    private var nextID = 1
    /// How long a call waits for its reply, in milliseconds (`poll`'s unit).
    private let replyTimeoutMilliseconds: Int32
    private var changes: [DomainChange] = []
    /// Where replies are received (kept: zeroing 64 KiB for each call was
    /// about 6% of a write storm's client time).
    private var chunk = [UInt8](repeating: 0, count: 65_536)

    /// Connects to the socket and opens a session for `root`.
    ///
    /// - Throws: ``PrefsClientError/notRunning(socket:reason:)`` when nothing
    ///   answers; ``PrefsClientError/remote(_:)`` with `wrongRoot` when the
    ///   service serves another root.
    public init(socketPath: String, root: String, timeout: Double = 30) throws(PrefsClientError) {
        do { fd = try UnixSocket.connect(to: socketPath, timeout: timeout) } catch {
            throw .notRunning(socket: socketPath, reason: error.reason)
        }
        self.socketPath = socketPath
        replyTimeoutMilliseconds = Int32(clamping: Int((max(timeout, 0.001) * 1000).rounded(.up)))
        _ = try call(.hello(root: root))
    }

    deinit { close(fd) }

    /// Sends `request` and waits for its reply, keeping notifications that
    /// arrive meanwhile for ``nextChange()``.
    ///
    /// - Returns: the result fields of the reply.
    public func call(_ request: Request) throws(PrefsClientError) -> [PlistKey: PlistValue] {
        let id = nextID
        nextID += 1
        let payload: [UInt8]
        do { payload = try request.encode(id: id) } catch { throw .encoding(error) }
        do { try UnixSocket.sendAll(fd, Frame.encode(payload)) } catch { throw .connection(error.reason) }
        while true {
            switch try receive() {
            case .change(let c): changes.append(c)
            case .response(let rid, let result):
                // id 0: the service refused the connection or a frame as a whole.
                guard rid == id || rid == 0 else { continue }
                switch result {
                case .success(let fields): return fields
                case .failure(let e): throw .remote(e)
                }
            }
        }
    }

    /// The next change notification, waiting for one if none is queued.
    public func nextChange() throws(PrefsClientError) -> DomainChange {
        while changes.isEmpty {
            switch try receive(blockingForever: true) {
            case .change(let c): return c
            case .response: continue
            }
        }
        return changes.removeFirst()
    }

    /// The change notifications that have arrived so far, without waiting:
    /// what is queued plus what the socket already holds.
    public func receivedChanges() throws(PrefsClientError) -> [DomainChange] {
        while true {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if n > 0 { reader.append(chunk[0..<n]); continue }
            if n < 0 && errno == EINTR { continue }
            if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { break }
            throw .connection(n == 0 ? "prefsd closed the connection" : String(cString: strerror(errno)))
        }
        while true {
            let payload: [UInt8]?
            do { payload = try reader.next() } catch { throw .connection(error.description) }
            guard let payload else { break }
            let reply: Reply
            do { reply = try Reply.decode(payload) } catch { throw .connection("\(error)") }
            if case .change(let c) = reply { changes.append(c) }
        }
        defer { changes.removeAll() }
        return changes
    }

    private func receive(blockingForever: Bool = false) throws(PrefsClientError) -> Reply {
        while true {
            do {
                if let payload = try reader.next() {
                    do { return try Reply.decode(payload) } catch { throw PrefsClientError.connection("\(error)") }
                }
            } catch let e as FrameError { throw .connection(e.description) } catch let e as PrefsClientError { throw e } catch {
                throw .connection("\(error)")
            }
            // Wait in `poll` for something to read, not in a blocking `recv`:
            // when prefsd reads a request, the kernel tells this socket's
            // sleepers that there is room to write again, which wakes a
            // thread asleep in `recv` for nothing (an extra context switch
            // here and a wake-up paid by prefsd for every call), while a
            // `poll` for input only is not woken by it.
            var ready = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let polled = poll(&ready, 1, blockingForever ? -1 : replyTimeoutMilliseconds)
            if polled < 0 {
                if errno == EINTR { continue }
                throw .connection(String(cString: strerror(errno)))
            }
            if polled == 0 { throw .connection("prefsd did not reply in time") }
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if n > 0 { reader.append(chunk[0..<n]); continue }
            if n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) { continue }
            throw .connection(n == 0 ? "prefsd closed the connection" : String(cString: strerror(errno)))
        }
    }
}
