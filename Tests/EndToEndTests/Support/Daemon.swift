import Foundation
import PrefsProtocol
import PropertyList

/// Whether a server takes connections on the Unix socket at `path` within `seconds`. Its
/// socket file says nothing: it is there from `bind()`, before `listen()` (and after a
/// kill, a stale one stays), and a connection in between is refused.
func waitUntilListening(_ path: String, seconds: Double = 10) -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if let fd = try? UnixSocket.connect(to: path, timeout: 1) { close(fd); return true }
        usleep(5_000)
    }
    return false
}

/// A prefsd started for one test, on a socket of the test's own.
final class TestDaemon {
    let root: TempRoot
    let socket: URL
    private(set) var process: Subprocess.Running
    /// Whether `process` was waited for (a second wait would block for ever).
    private var reaped = false

    static func binary(_ name: String) throws -> URL {
        try DefaultsBinary.url().deletingLastPathComponent().appendingPathComponent(name)
    }

    init(_ root: TempRoot, socket: URL? = nil) throws {
        self.root = root
        self.socket = socket ?? root.base.appendingPathComponent("sock/prefsd.sock")
        process = try Self.start(root, self.socket)
    }

    static func start(_ root: TempRoot, _ socket: URL) throws -> Subprocess.Running {
        let running = try Subprocess.start(try binary("prefsd"), ["--foreground", "--root", root.root.path, "--socket", socket.path],
                                           environment: root.environment(), ioDirectory: root.io, timeout: 600)
        guard waitUntilListening(socket.path) else { throw HarnessError.helper("prefsd did not answer on \(socket.path)") }
        return running
    }

    /// Starts prefsd again after it died (the stale socket file is still there).
    func restart() throws {
        // The socket file of a killed daemon stays; the new one must replace it.
        if !reaped { _ = try? process.finish() }
        process = try Self.start(root, socket)
        reaped = false
    }

    /// Kills the daemon with SIGKILL and waits for it.
    func kill() {
        process.kill(SIGKILL)
        _ = try? process.finish()
        reaped = true
    }

    /// Environment that sends `defaults` through this daemon.
    var environment: [String: String] { ["APPHOME_PREFSD": "require", "APPHOME_SOCKET": socket.path] }

    /// Runs prefsbench against this daemon.
    func bench(_ arguments: [String]) throws -> Subprocess.Running {
        try Subprocess.start(try Self.binary("prefsbench"), arguments + ["--socket", socket.path, "--root", root.root.path],
                             environment: root.environment(), ioDirectory: root.io, timeout: 600)
    }

    func stop() throws -> CommandResult {
        process.kill(SIGTERM)
        reaped = true
        return try process.finish()
    }

    deinit {
        if !reaped { kill() }
    }
}

/// A raw connection to prefsd, for feeding it bytes no client library would send.
final class RawConnection {
    let fd: Int32

    init(_ socket: URL, timeout: Double = 10) throws {
        fd = try UnixSocket.connect(to: socket.path, timeout: timeout)
    }

    deinit { close(fd) }

    func send(_ bytes: [UInt8]) {
        _ = try? UnixSocket.sendAll(fd, bytes)
    }

    func request(_ request: Request, id: Int = 1) throws -> [UInt8] {
        Frame.encode(try request.encode(id: id))
    }

    /// The next reply, or nil when the daemon closed the connection (or said nothing in time).
    func reply() -> Reply? {
        var reader = FrameReader()
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            if let payload = try? reader.next() { return try? Reply.decode(payload) }
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { return nil }
            reader.append(chunk[0..<n])
        }
    }

    /// True when the daemon closed the connection: the next read sees end of file.
    func isClosedByPeer() -> Bool {
        var byte: UInt8 = 0
        return recv(fd, &byte, 1, 0) == 0
    }
}

extension Reply {
    var errorCode: String? {
        if case .response(_, .failure(let e)) = self { return e.code }
        return nil
    }
    var errorMessage: String? {
        if case .response(_, .failure(let e)) = self { return e.message }
        return nil
    }
    var succeeded: Bool {
        if case .response(_, .success) = self { return true }
        return false
    }
}
