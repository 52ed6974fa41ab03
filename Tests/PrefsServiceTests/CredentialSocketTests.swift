#if canImport(Glibc)
import Glibc
#endif
import AppHomeSystem
import Foundation
import Keychain
import PrefsClient
import PrefsProtocol
import PrefsService
import PropertyList
import Synchronization
import Testing
import TestSupport

/// The service manager's side of `LoadCredential=ID:/path/to/socket`, as
/// systemd's `xfopenat_unix_socket` does it: bind the abstract address
/// `\0<random>/unit/<unit>/<id>`, connect, `shutdown(SHUT_WR)`, read to EOF.
enum ServiceManagerPeer {
    enum Bound { case abstract([UInt8]), path(String), unnamed }

    static func name(unit: String, id: String) -> [UInt8] {
        Array(String(format: "%016llx", UInt64.random(in: 1...UInt64.max)).utf8) + Array("/unit/\(unit)/\(id)".utf8)
    }

    /// A connected socket bound as `bound`.
    static func connect(_ socketPath: String, _ bound: Bound) throws -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EMFILE) }
        func address(_ bytes: [UInt8]) -> (sockaddr_un, socklen_t) {
            var a = sockaddr_un()
            a.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &a.sun_path) { raw in for (i, b) in bytes.enumerated() { raw[i] = b } }
            return (a, socklen_t(MemoryLayout<sa_family_t>.size + bytes.count))
        }
        func bindTo(_ bytes: [UInt8]) throws {
            var (a, len) = address(bytes)
            let rc = withUnsafePointer(to: &a) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, len) } }
            guard rc == 0 else { let e = errno; close(fd); throw POSIXError(POSIXErrorCode(rawValue: e) ?? .EINVAL) }
        }
        switch bound {
        case .abstract(let name): try bindTo([0] + name)
        case .path(let p): try bindTo(Array(p.utf8) + [0])
        case .unnamed: break
        }
        var (a, len) = address(Array(socketPath.utf8) + [0])
        let rc = withUnsafePointer(to: &a) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, len) } }
        guard rc == 0 else { let e = errno; close(fd); throw POSIXError(POSIXErrorCode(rawValue: e) ?? .EINVAL) }
        return fd
    }

    /// Everything up to EOF (or `timeout` seconds).
    static func readAll(_ fd: Int32, timeout: Double = 5) -> [UInt8] {
        var tv = timeval(tv_sec: Int(timeout), tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        var out: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n > 0 { out += buffer[0..<n]; continue }
            if n < 0 && errno == EINTR { continue }
            return out
        }
    }

    /// One load, as systemd makes it.
    static func load(_ socketPath: String, unit: String, id: String) throws -> [UInt8] {
        try load(socketPath, .abstract(name(unit: unit, id: id)))
    }

    static func load(_ socketPath: String, _ bound: Bound) throws -> [UInt8] {
        let fd = try connect(socketPath, bound)
        defer { close(fd) }
        shutdown(fd, Int32(SHUT_WR))
        return readAll(fd)
    }
}

/// What the service logged.
final class LogLines: Sendable {
    private let lines = Mutex<[String]>([])
    func append(_ line: String) { lines.withLock { $0.append(line) } }
    var all: [String] { lines.withLock { $0 } }
    func contains(_ text: String) -> Bool { all.contains { $0.contains(text) } }
    /// Waits up to 3 s for a line containing `text` (lines are written on the service's thread).
    func wait(for text: String) -> Bool {
        for _ in 0..<300 { if contains(text) { return true }; usleep(10_000) }
        return false
    }
}

/// One prefsd in process for the suite, its key in a Secret Service twin
/// that the tests lock, with a keybag as the daemon has.
final class CredentialFixture: @unchecked Sendable {
    let directory: String
    let socket: String
    let credentials: String
    let log = LogLines()
    let store = InMemorySecretStore()
    let keybag = Keybag()
    let policy: DeviceKeyPolicy
    let service: InProcessService

    static let shared: CredentialFixture = {
        do { return try CredentialFixture() } catch { fatalError("cannot start the credential fixture: \(error)") }
    }()

    init() throws {
        // One for the whole process (``shared``): removed when it exits.
        directory = ScratchDirectory.makeForProcess("credential-tests")
        socket = directory + "/run/prefsd.sock"
        credentials = directory + "/run/credentials.sock"
        keybag.watcherStarted()
        var policy = DeviceKeyPolicy(secretStore: store, kernelKeys: .off)
        policy.keybag = keybag
        self.policy = policy
        let log = log
        var configuration = ServerConfiguration(root: directory + "/root", socketPath: socket, ownerUID: getuid(), log: { log.append($0) })
        configuration.keyPolicy = policy
        configuration.credentialSocketPath = credentials
        service = try InProcessService(configuration: configuration)
    }

    var root: String { directory + "/root" }
    var keychain: Keychain { Keychain(root: root, policy: policy, now: { PlistDate(secondsSince1970: 1_800_000_000) }) }

    func grant(_ unit: String, _ id: String, secret: [UInt8], accessibility: Accessibility = .afterFirstUnlock) throws {
        let g = CredentialGrant(unit: try SystemdUnitName(unit), id: try CredentialID(id), source: .secret, accessibility: accessibility)
        try keychain.add(g.attributes, data: SecureBytes(secret), context: .login)
    }

    func load(_ unit: String, _ id: String) throws -> [UInt8] { try ServiceManagerPeer.load(credentials, unit: unit, id: id) }
}

/// prefsd's credential socket, driven the way systemd drives it.
@Suite(.serialized) struct CredentialSocketTests {
    var f: CredentialFixture { CredentialFixture.shared }

    @Test func aGrantedCredentialArrivesByteForByte() throws {
        try f.grant("web.service", "token", secret: Array("tok-123".utf8))
        #expect(try f.load("web.service", "token") == Array("tok-123".utf8))
        #expect(f.log.wait(for: "credential 'token' for unit 'web.service': served 7 bytes"))
    }

    @Test func aBinaryCredentialOfExactly1MiBArrivesByteForByte() throws {
        var bytes = (0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ ($0 >> 8)) }
        bytes[0] = 0; bytes[bytes.count - 1] = 0x0A
        try f.grant("big.service", "blob", secret: bytes)
        let got = try f.load("big.service", "blob")
        #expect(got.count == bytes.count)
        #expect(got == bytes)
    }

    @Test func aGrantOfAnItemServesTheItemAsItIsNow() throws {
        var item = ItemAttributes(itemClass: .genericPassword, accessGroup: KeychainContext.loginGroup)
        item.service = "db"; item.account = "app"; item.accessibility = .afterFirstUnlock
        try f.keychain.add(item, data: SecureBytes(utf8: "db-pw-1"), context: .login)
        let g = CredentialGrant(unit: try SystemdUnitName("api.service"), id: try CredentialID("db"), source: .item(service: "db", account: "app"))
        try f.keychain.add(g.attributes, data: SecureBytes([]), context: .login)
        #expect(try f.load("api.service", "db") == Array("db-pw-1".utf8))
        var q = ItemQuery(itemClass: .genericPassword)
        q.service = "db"; q.account = "app"
        var changes = ItemChanges()
        changes.data = SecureBytes(utf8: "db-pw-2")
        try f.keychain.update(q, with: changes, context: .login)
        #expect(try f.load("api.service", "db") == Array("db-pw-2".utf8))
        try f.keychain.delete(q, context: .login)
        #expect(try f.load("api.service", "db") == [])
        #expect(f.log.wait(for: "credential 'db' for unit 'api.service': refused: the granted item (service 'db', account 'app') is not in the login keychain"))
    }

    @Test func anUngrantedUnitOrIdArrivesEmptyWithALogLine() throws {
        try f.grant("one.service", "key", secret: Array("k".utf8))
        #expect(try f.load("two.service", "key") == [])
        #expect(try f.load("one.service", "other") == [])
        #expect(f.log.wait(for: "credential 'key' for unit 'two.service': refused: not granted"))
        #expect(f.log.wait(for: "credential 'other' for unit 'one.service': refused: not granted"))
        #expect(!f.log.all.contains { $0.contains("refused") && $0.contains("served") })
    }

    @Test func aCredentialOverTheLimitIsRefusedWithALogLine() throws {
        try f.grant("huge.service", "blob", secret: [UInt8](repeating: 0x41, count: (1 << 20) + 1))
        #expect(try f.load("huge.service", "blob") == [])
        #expect(f.log.wait(for: "credential 'blob' for unit 'huge.service': refused: the secret has 1048577 bytes, over the 1 MiB limit"))
    }

    @Test func aLockedWhenUnlockedCredentialArrivesEmptyAndTheOthersStillArrive() throws {
        try f.grant("locked.service", "now", secret: Array("when-unlocked".utf8), accessibility: .whenUnlocked)
        try f.grant("locked.service", "boot", secret: Array("after-first-unlock".utf8))
        #expect(try f.load("locked.service", "now") == Array("when-unlocked".utf8))
        try f.store.lockCollection(schema: DeviceKey.schema, attributes: [:])
        f.keybag.storeLocked()  // what prefsd's Secret Service watcher does
        defer {
            try? f.store.unlockCollection(schema: DeviceKey.schema, attributes: [:], password: SecureBytes(utf8: "password"))
            f.keybag.storeMayHaveUnlocked()
        }
        #expect(try f.load("locked.service", "now") == [])
        #expect(f.log.wait(for: "credential 'now' for unit 'locked.service': refused: locked ("))
        #expect(try f.load("locked.service", "boot") == Array("after-first-unlock".utf8))
        // No line names the secret.
        #expect(!f.log.all.contains { $0.contains("when-unlocked") || $0.contains("after-first-unlock") })
    }

    @Test func aPeerOfAnotherUserIsRefused() throws {
        guard getuid() == 0, FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv"),
              FileManager.default.isExecutableFile(atPath: "/usr/bin/python3") else {
            print("skipped: a peer of another uid needs root, /usr/bin/setpriv and /usr/bin/python3")
            return
        }
        try f.grant("uid.service", "token", secret: Array("not-for-nobody".utf8))
        // Let uid 65534 reach the socket, so that the server's own check is what refuses it.
        let run = FileManager.default
        let dir = (f.credentials as NSString).deletingLastPathComponent
        chmod(f.directory, 0o755); chmod(dir, 0o755); chmod(f.credentials, 0o666)
        defer { chmod(dir, 0o700); chmod(f.credentials, 0o600) }
        let script = """
        import os, socket, sys
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.bind(b"\\0" + os.urandom(8).hex().encode() + b"/unit/uid.service/token")
        s.connect(sys.argv[1]); s.shutdown(socket.SHUT_WR)
        out = b""
        while True:
            b = s.recv(65536)
            if not b: break
            out += b
        print(os.getuid(), len(out))
        """
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
        p.arguments = ["--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/python3", "-c", script, f.credentials]
        p.currentDirectoryURL = URL(fileURLWithPath: "/")
        let out = Pipe()
        p.standardOutput = out
        try p.run()
        p.waitUntilExit()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(p.terminationStatus == 0)
        #expect(text == "65534 0\n")
        #expect(f.log.wait(for: "refused a peer (uid 65534"))
        _ = run
    }

    @Test(arguments: [
        ("r/unit/a/b.service/tok", "is not <random>/unit/<unit>/<credential id>"),
        ("r/unit/../tok", "'..' is not a unit name"),
        ("r/unit/x..y.service/tok", "is not a unit name"),
        ("r/unit/" + String(repeating: "A", count: 90) + "/tok", "is not a unit name"),
        ("r/unit/a\u{1}b.service/tok", "has a character a unit name cannot have"),
        ("r/service/a.service/tok", "is not <random>/unit/<unit>/<credential id>"),
        ("r/unit/a.service/..", "is not a credential id"),
    ])
    func aHostileAddressIsClosedWithALogLine(name: String, why: String) throws {
        #expect(try ServiceManagerPeer.load(f.credentials, .abstract(Array(name.utf8))) == [])
        #expect(f.log.wait(for: why), "\(f.log.all.suffix(3))")
    }

    @Test func aPeerBoundToAFileOrUnnamedIsClosedWithALogLine() throws {
        try f.grant("path.service", "tok", secret: Array("p".utf8))
        let path = f.directory + "/peer-\(UInt32.random(in: 0...UInt32.max)).sock"
        defer { unlink(path) }
        #expect(try ServiceManagerPeer.load(f.credentials, .path(path)) == [])
        #expect(f.log.wait(for: "the peer is bound to a file path, not the service manager's abstract address"))
        #expect(try ServiceManagerPeer.load(f.credentials, .unnamed) == [])
        #expect(f.log.wait(for: "the peer's address is unnamed"))
    }

    @Test func aPeerThatSendsDataGetsNothing() throws {
        try f.grant("talk.service", "tok", secret: Array("t".utf8))
        let fd = try ServiceManagerPeer.connect(f.credentials, .abstract(ServiceManagerPeer.name(unit: "talk.service", id: "tok")))
        defer { close(fd) }
        _ = send(fd, "hello", 5, Int32(MSG_NOSIGNAL))
        shutdown(fd, Int32(SHUT_WR))
        #expect(ServiceManagerPeer.readAll(fd) == [])
        #expect(f.log.wait(for: "credential 'tok' for unit 'talk.service': refused: the peer sent data"))
    }

    @Test func aPeerThatNeverHalfClosesIsClosedAndHoldsUpNobody() throws {
        try f.grant("slow.service", "tok", secret: Array("s".utf8))
        try f.grant("quick.service", "tok", secret: Array("q".utf8))
        let slow = try ServiceManagerPeer.connect(f.credentials, .abstract(ServiceManagerPeer.name(unit: "slow.service", id: "tok")))
        defer { close(slow) }
        let start = Date()
        #expect(try f.load("quick.service", "tok") == Array("q".utf8))
        #expect(Date().timeIntervalSince(start) < 1)
        #expect(ServiceManagerPeer.readAll(slow, timeout: 5) == [])
        #expect(f.log.wait(for: "credential 'tok' for unit 'slow.service': closed: the peer did not half-close"))
    }

    @Test func aThousandConnectionsAtOnceHoldUpNeitherPeersNorPreferenceClients() throws {
        try f.grant("flood.service", "tok", secret: Array("f".utf8))
        try f.grant("calm.service", "tok", secret: Array("c".utf8))
        var flood: [Int32] = []
        defer { for fd in flood { close(fd) } }
        for _ in 0..<1000 {
            guard let fd = try? ServiceManagerPeer.connect(f.credentials, .abstract(ServiceManagerPeer.name(unit: "flood.service", id: "tok"))) else { break }
            flood.append(fd)
        }
        #expect(flood.count == 1000)
        let start = Date()
        #expect(try f.load("calm.service", "tok") == Array("c".utf8))
        #expect(Date().timeIntervalSince(start) < 1)
        let preferences = Date()
        let connection = try PrefsConnection(socketPath: f.socket, root: f.root)
        _ = try connection.call(.status)
        #expect(Date().timeIntervalSince(preferences) < 1)
        #expect(f.log.wait(for: "closed to make room: 256 credential connections were open"))
    }

    /// The resident size of this process (prefsd runs in it), in bytes.
    static func residentBytes() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        return (Int(text.split(separator: " ")[1]) ?? 0) * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    @Test func threeHundredPeersThatNeverReadAMebibyteHoldUpNobodyAndHoldNoMemory() throws {
        let big = (0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ 5) }
        try f.grant("hoard.service", "blob", secret: big)
        try f.grant("real.service", "tok", secret: Array("real".utf8))
        // Once, so that the look-up's own memory is counted before.
        #expect(try f.load("hoard.service", "blob") == big)
        let before = Self.residentBytes()
        var hoard: [Int32] = []
        defer { for fd in hoard { close(fd) } }
        for _ in 0..<300 {
            // Bound with a name of its own each: 300 connections, each half-closed and never read.
            // Each is a fresh look-up (a new name): a fresh secret held, unless handed on.
            guard let fd = try? ServiceManagerPeer.connect(f.credentials, .abstract(ServiceManagerPeer.name(unit: "hoard.service", id: "blob"))) else { break }
            shutdown(fd, Int32(SHUT_WR))
            hoard.append(fd)
        }
        #expect(hoard.count == 300)
        usleep(300_000)
        let start = Date()
        #expect(try f.load("real.service", "tok") == Array("real".utf8))
        #expect(Date().timeIntervalSince(start) < 1)
        #expect(try f.load("hoard.service", "blob") == big)
        let grown = Self.residentBytes() - before
        #expect(grown < 32 << 20, "prefsd grew by \(grown >> 20) MiB for peers that do not read")
        // Every hoarding peer that reads at last gets the whole credential, or nothing: never a part.
        for fd in hoard.prefix(20) {
            let got = ServiceManagerPeer.readAll(fd, timeout: 2)
            #expect(got.isEmpty || got == big, "a part of \(got.count) bytes")
        }
    }

    @Test func aPeerThatReadsLateGetsTheWholeCredential() throws {
        let big = (0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 1) }
        try f.grant("late.service", "blob", secret: big)
        let fd = try ServiceManagerPeer.connect(f.credentials, .abstract(ServiceManagerPeer.name(unit: "late.service", id: "blob")))
        defer { close(fd) }
        shutdown(fd, Int32(SHUT_WR))
        // Past the 5 s a peer has to read.
        usleep(5_500_000)
        let got = ServiceManagerPeer.readAll(fd, timeout: 2)
        #expect(got.count == big.count)
        #expect(got == big)
    }
}
