#if canImport(Glibc)
import Glibc
#endif
import PrefsClient
import PrefsProtocol
import PropertyList
import Synchronization
import Testing
import TestSupport

/// A stand-in for prefsd that answers the hello and then does only what a
/// test asks: how the client waits is what these tests look at, so the
/// server side is scripted step by step.
private final class ScriptedServer: Sendable {
    let directory: String
    let socket: String
    private let listener: Int32
    /// Set by the server thread when its script has ended.
    let finished = Flag()

    final class Flag: Sendable {
        private let value = Atomic<Bool>(false)
        func set() { value.store(true, ordering: .releasing) }
        var isSet: Bool { value.load(ordering: .acquiring) }
    }

    enum Step: Sendable {
        /// Sleep this many seconds.
        case pause(Double)
        /// Read one whole request frame.
        case readRequest
        /// Reply `{}` to request `id`.
        case reply(id: Int)
        /// Close the connection.
        case close
    }

    init(_ script: [Step]) throws {
        directory = ScratchDirectory.make("prefs-connection")
        socket = directory + "/s.sock"
        listener = try UnixSocket.listen(at: socket)
        let listener = self.listener
        let finished = self.finished
        let started = DetachedThread.start {
            defer { finished.set() }
            // The listener does not block (prefsd's own); wait for the client here.
            var waiting = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
            guard poll(&waiting, 1, 10_000) == 1, let fd = UnixSocket.accept(listener) else { return }
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
            defer { Glibc.close(fd) }
            var reader = FrameReader()
            func readFrame() -> Bool {
                var buffer = [UInt8](repeating: 0, count: 4096)
                while true {
                    if (try? reader.next()) ?? nil != nil { return true }
                    let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                    if n > 0 { reader.append(buffer[0..<n]) } else if n < 0 && errno == EINTR { continue } else { return false }
                }
            }
            func reply(_ id: Int) {
                guard let payload = try? Reply.response(id: id, .success([:])).encode() else { return }
                try? UnixSocket.sendAll(fd, Frame.encode(payload))
            }
            guard readFrame() else { return }
            reply(1)
            for step in script {
                switch step {
                case .pause(let seconds): usleep(UInt32(seconds * 1_000_000))
                case .readRequest: guard readFrame() else { return }
                case .reply(let id): reply(id)
                case .close: return
                }
            }
            // Keeps the connection open until the client is done with it.
            _ = readFrame()
        }
        if !started { throw PrefsClientError.connection("cannot start the scripted server") }
    }

    deinit {
        Glibc.close(listener)
        ScratchDirectory.remove(directory)
    }
}

@Suite struct PrefsConnectionTests {
    /// Voluntary context switches of the calling thread so far.
    private static func contextSwitches() -> Int {
        var usage = rusage()
        getrusage(__rusage_who_t(1), &usage)  // RUSAGE_THREAD (a GNU name Glibc does not import)
        return usage.ru_nvcsw
    }

    /// A call sleeps once, until its reply: prefsd reading the request frees
    /// room in the client's socket, and a client asleep in a blocking `recv`
    /// was woken by that for nothing (two switches a call, and a wake-up
    /// prefsd pays for), where one asleep in `poll` for input is not. The
    /// fewest switches of three calls, so that an unrelated wake-up on a
    /// busy machine does not count.
    @Test func aCallSleepsOnceUntilItsReply() throws {
        let server = try ScriptedServer((2...4).flatMap { id in [.pause(0.1), .readRequest, .pause(0.1), .reply(id: id)] })
        let connection = try PrefsConnection(socketPath: server.socket, root: "/r")
        var fewest = Int.max
        for _ in 2...4 {
            let before = Self.contextSwitches()
            let fields = try connection.call(.status)
            fewest = min(fewest, Self.contextSwitches() - before)
            #expect(fields.isEmpty)
        }
        #expect(fewest == 1, "the client thread slept \(fewest) times during a call")
    }

    @Test func aReplyThatDoesNotComeInTimeIsAnError() throws {
        let server = try ScriptedServer([.readRequest, .pause(3)])
        let connection = try PrefsConnection(socketPath: server.socket, root: "/r", timeout: 0.3)
        let start = UnixSocket.now()
        #expect(throws: PrefsClientError.connection("prefsd did not reply in time")) { _ = try connection.call(.status) }
        let waited = UnixSocket.now() - start
        #expect(waited >= 0.29 && waited < 2.5, "waited \(waited) s for a 0.3 s timeout")
    }

    @Test func aConnectionClosedBeforeTheReplyIsAnError() throws {
        let server = try ScriptedServer([.readRequest, .close])
        let connection = try PrefsConnection(socketPath: server.socket, root: "/r")
        #expect(throws: PrefsClientError.connection("prefsd closed the connection")) { _ = try connection.call(.status) }
        while !server.finished.isSet { usleep(1000) }
    }
}
