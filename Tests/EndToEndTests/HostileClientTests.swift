import Foundation
import PrefsProtocol
import PropertyList
import Testing

/// Clients that name hostile paths, never read, flood, or send fields of
/// the wrong type: prefsd stays bounded and keeps serving a normal client
/// (a real `defaults` run through it) while they are stuck.
@Suite("hostile prefsd clients")
struct HostileClientTests {
    static let domain = "com.example.normal"

    /// A real second client: `defaults` through the daemon writes and reads back.
    static func expectNormalClientAnswers(_ t: TempRoot, _ daemon: TestDaemon, _ value: Int,
                                          sourceLocation: SourceLocation = #_sourceLocation) throws {
        try t.succeed(["write", domain, "k", "-int", String(value)], env: daemon.environment, sourceLocation: sourceLocation)
        let read = try t.run(["read", domain, "k"], env: daemon.environment, timeout: 30)
        #expect(read.stdout == "\(value)\n", "\(read)", sourceLocation: sourceLocation)
    }

    static func payload(_ d: [PlistKey: PlistValue]) throws -> [UInt8] {
        Frame.encode(try PlistCodec.encode(.dictionary(d), format: .binary))
    }

    /// Sends `frame` again and again without ever reading, until prefsd
    /// stops taking bytes (the socket stays full for a while) or `limit` bytes went.
    static func flood(_ c: RawConnection, _ frame: [UInt8], limit: Int) -> Int {
        _ = fcntl(c.fd, F_SETFL, fcntl(c.fd, F_GETFL) | O_NONBLOCK)
        var sent = 0
        var refusals = 0
        var bytes: [UInt8] = []
        for _ in 0..<(65_536 / frame.count + 1) { bytes += frame }
        while sent < limit && refusals < 10 {
            let n = bytes.withUnsafeBytes { send(c.fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n > 0 { sent += n; refusals = 0; continue }
            if n < 0 && errno == EPIPE { break }
            refusals += 1
            usleep(5_000)
        }
        return sent
    }

    /// The daemon's resident memory in bytes (from /proc).
    static func residentBytes(_ pid: pid_t) -> Int {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
              let kb = Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") else { return 0 }
        return kb * 1024
    }

    @Test func requestsNamingAFIFOOrADeviceAreRefusedAndNeverStallTheService() throws {
        let t = try TempRoot()
        let daemon = try TestDaemon(t)
        let fifo = t.workFile("trap.plist")
        try #require(mkfifo(fifo.path, 0o600) == 0)
        let zero = t.workFile("zero.plist")
        try #require(symlink("/dev/zero", zero.path) == 0)
        let c = try RawConnection(daemon.socket)
        for (id, op, path) in [(1, 3, fifo.path), (2, 4, fifo.path), (3, 3, zero.path), (4, 4, zero.path), (5, 8, fifo.path)] {
            var d: [PlistKey: PlistValue] = ["id": .integer(Int128(id)), "op": .integer(Int128(op)), "domain": .string(path)]
            if op == 4 { d["set"] = .dictionary(["k": .integer(1)]) }
            c.send(try Self.payload(d))
            let reply = c.reply()
            if op != 8 {  // a subscription reads nothing; it only must not stall the service
                #expect(reply?.succeeded != true, "op \(op) on \(path): \(String(describing: reply))")
                #expect(reply?.errorMessage?.contains("not a regular file") == true, "\(String(describing: reply))")
            } else {
                #expect(reply != nil)
            }
            try Self.expectNormalClientAnswers(t, daemon, id)
        }
        var st = stat()
        #expect(lstat(fifo.path, &st) == 0 && st.st_mode & S_IFMT == S_IFIFO, "the FIFO is left as it was")
    }

    @Test func aClientThatNeverReadsIsPausedAndTheOthersAreServed() throws {
        let t = try TempRoot()
        let daemon = try TestDaemon(t)
        let before = Self.residentBytes(daemon.process.pid)
        let greedy = try RawConnection(daemon.socket)
        let status = try greedy.request(.status, id: 1)
        // Before the bound prefsd read everything and queued every reply; now it stops reading.
        let sent = Self.flood(greedy, status, limit: 64 << 20)
        #expect(sent < 64 << 20, "prefsd kept reading \(sent) bytes from a client that reads nothing")
        // While it is stuck, a normal client is answered.
        try Self.expectNormalClientAnswers(t, daemon, 7)
        let grown = Self.residentBytes(daemon.process.pid) - before
        #expect(grown < 64 << 20, "prefsd grew by \(grown) bytes for one client that never reads")
        // The paused client still gets its replies once it reads.
        _ = fcntl(greedy.fd, F_SETFL, fcntl(greedy.fd, F_GETFL) & ~O_NONBLOCK)
        #expect(greedy.reply()?.succeeded == true)
    }

    @Test func aHundredFloodingClientsStayWithinABoundAndTheOthersAreServed() throws {
        let t = try TempRoot()
        let daemon = try TestDaemon(t)
        try Self.expectNormalClientAnswers(t, daemon, 1)
        let before = Self.residentBytes(daemon.process.pid)
        var flooders: [RawConnection] = []
        for i in 0..<100 {
            let c = try RawConnection(daemon.socket)
            _ = Self.flood(c, try c.request(.listDomains, id: i + 1), limit: 4 << 20)
            flooders.append(c)
        }
        try Self.expectNormalClientAnswers(t, daemon, 2)
        let grown = Self.residentBytes(daemon.process.pid) - before
        #expect(grown < 256 << 20, "prefsd grew by \(grown) bytes under 100 clients that never read")
        #expect(flooders.count == 100)
    }

    @Test(arguments: [
        (["id": .string("x"), "op": .integer(2)], "id must be an integer"),
        (["id": .integer(1), "op": .string("2")], "op must be an integer"),
        (["id": .integer(2), "op": .integer(3), "domain": .integer(5)], "the request has no domain"),
        (["id": .integer(3), "op": .integer(3), "domain": .string("com.ex.a"), "host": .integer(1)], "host must be a string"),
        (["id": .integer(4), "op": .integer(3), "domain": .string("com.ex.a"), "key": .bool(true)], "key must be a string"),
        (["id": .integer(5), "op": .integer(4), "domain": .string("com.ex.a"), "set": .dictionary(["k": .integer(1)]),
          "force": .string("yes")], "force must be a boolean"),
        (["id": .integer(6), "op": .integer(6), "domain": .string("com.ex.a"), "removeAll": .string("yes")], "removeAll must be a boolean"),
        (["id": .integer(7), "op": .integer(5), "domain": .string("com.ex.a"), "keys": .string("k")], "keys must be an array of strings"),
        (["id": .integer(8), "op": .integer(10), "bundleIdentifier": .string("com.ex.a"), "hookEnvironment": .array([])],
         "hookEnvironment must be a dictionary of strings"),
        (["id": .integer(9), "op": .integer(10), "bundleIdentifier": .string("com.ex.a"),
          "hookEnvironment": .dictionary(["PATH": .integer(1)])], "hookEnvironment must be a dictionary of strings"),
    ] as [([PlistKey: PlistValue], String)])
    func aFieldOfTheWrongTypeIsAMalformedRequestAndNothingRuns(_ request: [PlistKey: PlistValue], _ message: String) throws {
        let t = try TempRoot()
        let daemon = try TestDaemon(t)
        let c = try RawConnection(daemon.socket)
        c.send(try Self.payload(request))
        let reply = c.reply()
        #expect(reply?.errorCode == "malformedRequest", "\(String(describing: reply))")
        #expect(reply?.errorMessage == message)
        #expect(!FileManager.default.fileExists(atPath: t.domainFile("com.ex.a").path), "nothing was written")
        c.send(try c.request(.status, id: 99))
        #expect(c.reply()?.succeeded == true, "the connection stays open")
    }
}
