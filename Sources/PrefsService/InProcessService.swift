#if canImport(Glibc)
import Glibc
#endif
import AppHomeSystem
import Dispatch
import Preferences
import PrefsProtocol

/// A prefsd running on a thread of this process, for tests and tools
/// that want a private service. ``stop()`` (or deinitialisation) stops it
/// and waits for it to finish.
public final class InProcessService: @unchecked Sendable {
    // The server is touched only by its own thread once started; `requestStop`
    // only writes a byte to a pipe.
    private let server: PrefsServer
    private let finished = DispatchSemaphore(value: 0)
    private var stopped = false

    /// Binds the socket and starts serving on a new thread.
    ///
    /// - Throws: ``ServiceError`` when the socket cannot be set up.
    public init(configuration: ServerConfiguration) throws(ServiceError) {
        var configuration = configuration
        configuration.handleSignals = false
        server = try PrefsServer(configuration: configuration)
        let done = finished
        // The thread holds the server, not this object, so that dropping the
        // last reference to this object stops the service.
        let box = ServerBox(server)
        // A thread of its own: the service blocks in poll, which must not
        // hold one of Dispatch's few (one per core) worker threads.
        let started = DetachedThread.start {
            box.server.run()
            done.signal()
        }
        if !started {
            stopped = true
            throw .system(SystemError("pthread_create", path: configuration.socketPath, errno: EAGAIN))
        }
    }

    /// Stops the service and waits until it has closed every connection.
    public func stop() {
        if stopped { return }
        stopped = true
        server.requestStop()
        finished.wait()
    }

    deinit { stop() }
}

/// Hands the server to its thread; from then on only that thread touches it.
private final class ServerBox: @unchecked Sendable {
    let server: PrefsServer
    init(_ server: PrefsServer) { self.server = server }
}
