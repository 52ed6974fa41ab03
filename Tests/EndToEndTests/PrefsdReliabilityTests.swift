import Foundation
import PrefsProtocol
import PropertyList
import Testing

/// prefsd under load, under SIGKILL and under hostile input, through the real binaries.
/// Every loop is bounded; only Unix sockets under the test's temporary directory are used.
@Suite("prefsd reliability", .serialized)
struct PrefsdReliabilityTests {
    static let domain = "com.example.storm"

    /// argv: file, then (prefix, count) pairs: every key prefix-i must hold i.
    static let everyKeyPresent = """
        d = load(sys.argv[1])
        missing = []
        rest = sys.argv[2:]
        for prefix, count in zip(rest[0::2], rest[1::2]):
            for i in range(int(count)):
                k = '%s-%d' % (prefix, i)
                if d.get(k) != i: missing.append(k)
        report(not missing, '%d keys missing or wrong, first %s' % (len(missing), missing[:5]))
        """

    @Test func eightDaemonClientsAndAnEmbeddedWriterLoseNoWrite() throws {
        let t = try TempRoot()
        let daemon = try TestDaemon(t)
        var clients: [Subprocess.Running] = []
        for i in 0..<8 {
            clients.append(try daemon.bench(["writes", "--domain", Self.domain, "--prefix", "c\(i)", "--count", "1000"]))
        }
        // The embedded writer: straight on the file, under the same lock, at the same time.
        let embedded = try Subprocess.start(try TestDaemon.binary("prefsbench"),
                                            ["embedded-writes", "--root", t.root.path, "--domain", Self.domain, "--prefix", "e", "--count", "150"],
                                            environment: t.environment(), ioDirectory: t.io, timeout: 600)
        for c in clients + [embedded] {
            let r = try c.finish()
            #expect(r.status == 0 && !r.signaled, "\(r)")
        }
        var pairs: [String] = []
        for i in 0..<8 { pairs += ["c\(i)", "1000"] }
        try t.pythonCheck(Self.everyKeyPresent, [t.domainFile(Self.domain).path] + pairs + ["e", "150"])
        // The daemon's cache saw the embedded writes too.
        let read = try t.run(["read", Self.domain, "e-149"], env: daemon.environment)
        #expect(read.stdout == "149\n", "\(read)")
        let stopped = try daemon.stop()
        #expect(stopped.status == 0 && !stopped.signaled, "\(stopped)")
    }

    @Test func sigkillMidStormLosesNoAcknowledgedWriteAndCorruptsNothing() throws {
        let t = try TempRoot()
        let daemon = try TestDaemon(t)
        var clients: [Subprocess.Running] = []
        for i in 0..<4 {
            clients.append(try daemon.bench(["writes", "--domain", Self.domain, "--prefix", "k\(i)", "--count", "100000", "--log-acks"]))
        }
        // Let the storm run, then kill the daemon without warning.
        usleep(1_500_000)
        daemon.kill()
        var pairs: [String] = []
        var total = 0
        for (i, c) in clients.enumerated() {
            let r = try c.finish()
            #expect(r.status == 1, "a client outlived its daemon: \(r)")
            let acked = r.stdout.split(separator: "\n").count
            #expect(r.stdout.isEmpty || r.stdout.hasSuffix("\n"))
            total += acked
            pairs += ["k\(i)", String(acked)]
        }
        #expect(total > 0, "no write was acknowledged before the kill")
        // Every acknowledged key is in a file that decodes.
        try t.pythonCheck(Self.everyKeyPresent, [t.domainFile(Self.domain).path] + pairs)
        // A new daemon replaces the stale socket and serves the same data.
        try daemon.restart()
        try t.succeed(["write", Self.domain, "after", "-int", "1"], env: daemon.environment)
        try t.expectOutput(["read", Self.domain, "after"], "1\n")
        let temporaries = try FileManager.default.contentsOfDirectory(atPath: t.preferences.path).filter { $0.hasSuffix(".tmp") }
        #expect(temporaries.isEmpty, "left behind: \(temporaries)")
    }

    @Test func hostileInputNeverStopsTheServiceServingOthers() throws {
        let t = try TempRoot()
        let daemon = try TestDaemon(t)
        let silent = try RawConnection(daemon.socket)
        let stalled = try RawConnection(daemon.socket)
        stalled.send(Frame.magic + [Frame.version, 0, 0, 0, 0, 100] + [1, 2, 3])

        // A frame announcing 4 GB is refused at its header, and the connection closed.
        let huge = try RawConnection(daemon.socket)
        huge.send(Frame.magic + [Frame.version, 0, 0xFF, 0xFF, 0xFF, 0xFF])
        let hugeReply = huge.reply()
        #expect(hugeReply?.errorCode == "frameTooLarge")
        #expect(hugeReply?.errorMessage == "a frame of 4294967295 bytes is over the limit of 67108864 bytes")
        #expect(huge.isClosedByPeer())

        // An unknown version and bytes that are not a frame: an error reply, then the end.
        for (bytes, code, message) in [
            (Frame.magic + [9, 0, 0, 0, 0, 0], "unsupportedVersion", "protocol version 9 is not supported (this side speaks version 1)"),
            (Array("GET / HTTP/1.0\r\n\r\n".utf8), "malformedFrame", "the frame does not start with the prefsd magic bytes"),
            (Frame.magic + [Frame.version, 7, 0, 0, 0, 0], "malformedFrame", "the reserved header byte is 7, not 0"),
        ] {
            let c = try RawConnection(daemon.socket)
            c.send(bytes)
            let reply = c.reply()
            #expect(reply?.errorCode == code)
            #expect(reply?.errorMessage == message)
            #expect(c.isClosedByPeer())
        }

        // A bad payload in a good frame: an error reply, and the connection goes on.
        let sloppy = try RawConnection(daemon.socket)
        for (payload, code, message) in [
            (Array("not a plist".utf8), "malformedRequest", "the payload is not a binary property list"),
            (try PlistCodec.encode(.array([]), format: .binary), "malformedRequest", "the payload is not a dictionary"),
            (try PlistCodec.encode(.dictionary(["id": .integer(4)]), format: .binary), "malformedRequest", "the request has no op"),
            (try PlistCodec.encode(.dictionary(["id": .integer(5), "op": .integer(40)]), format: .binary), "unknownOperation", "operation 40 is not supported"),
            (try PlistCodec.encode(.dictionary(["id": .integer(5), "op": .integer(33)]), format: .binary), "malformedRequest", "a keychain request needs an app"),
            (try PlistCodec.encode(.dictionary(["id": .integer(6), "op": .integer(3)]), format: .binary), "malformedRequest", "the request has no domain"),
            (try PlistCodec.encode(.dictionary(["id": .integer(7), "op": .integer(3), "domain": .string("../x")]), format: .binary),
             "malformedRequest", "Invalid domain name \"../x\": a domain name must not contain '..'"),
        ] {
            sloppy.send(Frame.encode(payload))
            let reply = sloppy.reply()
            #expect(reply?.errorCode == code, "\(String(describing: reply))")
            #expect(reply?.errorMessage == message)
        }
        sloppy.send(try sloppy.request(.status, id: 8))
        #expect(sloppy.reply()?.succeeded == true)

        // Random frames, some with a plausible header, each on its own connection that then
        // goes away, often in the middle of a frame.
        var rng = SplitMix(seed: 20_261_130)
        for i in 0..<200 {
            let c = try RawConnection(daemon.socket)
            var bytes = (0..<Int(rng.next() % 64)).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            if i % 2 == 0 { bytes = Frame.magic + [Frame.version, 0, 0, 0, 0, UInt8(rng.next() % 80)] + bytes }
            c.send(bytes)
        }

        // Through all of it the others are served: a client of the library, and the silent one.
        try t.succeed(["write", Self.domain, "k", "-int", "42"], env: daemon.environment)
        let read = try t.run(["read", Self.domain, "k"], env: daemon.environment)
        #expect(read.stdout == "42\n", "\(read)")
        silent.send(try silent.request(.status, id: 1))
        #expect(silent.reply()?.succeeded == true)
        let stopped = try daemon.stop()
        #expect(stopped.status == 0 && !stopped.signaled, "\(stopped)")
    }

    @Test func anotherUserIsTurnedAway() throws {
        guard getuid() == 0 else { return }  // needs root to become another user
        let t = try TempRoot()
        let daemon = try TestDaemon(t)
        // Open the socket and its directory to everyone, so that only SO_PEERCRED stands in the way.
        chmod(daemon.socket.path, 0o666)
        chmod(daemon.socket.deletingLastPathComponent().path, 0o755)
        chmod(t.base.path, 0o755)
        let script = """
            import os, socket, struct
            os.setgid(65534); os.setuid(65534)
            s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.settimeout(10)
            data = b''
            while True:
                chunk = s.recv(65536)
                if not chunk: break
                data += chunk
            print('OK' if b'permissionDenied' in data and b'prefsd serves only its own user' in data else 'MISMATCH %r' % data)
            """
        try t.pythonCheck(script, [daemon.socket.path])
    }
}

/// A small seeded generator, so the random frames are the same on every run.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
