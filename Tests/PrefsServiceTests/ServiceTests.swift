#if canImport(Glibc)
import Glibc
#endif
import AppHomeSystem
import CommandSupport
import Foundation
import Preferences
import PrefsClient
import PrefsdCommand
import PrefsProtocol
import PrefsService
import PropertyList
import Testing

/// A service in process on a temporary root.
final class ServiceFixture {
    let directory: String
    let socket: String
    let service: InProcessService

    init() throws {
        directory = NSTemporaryDirectory() + "prefsd-tests-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        socket = directory + "/run/prefsd.sock"
        service = try InProcessService(configuration: ServerConfiguration(root: directory + "/root", socketPath: socket, ownerUID: getuid(), log: { _ in }))
    }

    var root: String { directory + "/root" }

    func connect() throws -> PrefsConnection { try PrefsConnection(socketPath: socket, root: root) }

    deinit {
        service.stop()
        try? FileManager.default.removeItem(atPath: directory)
    }
}

@Suite struct ServiceTests {
    static let address = DomainAddress(.named("com.example.s"))

    @Test func theSocketAndItsDirectoryArePrivate() throws {
        let f = try ServiceFixture()
        var st = stat()
        #expect(stat(f.socket, &st) == 0 && st.st_mode & 0o777 == 0o600)
        #expect(stat(f.directory + "/run", &st) == 0 && st.st_mode & 0o777 == 0o700)
    }

    @Test func aSecondServiceOnTheSameSocketIsRefused() throws {
        let f = try ServiceFixture()
        #expect(throws: ServiceError.alreadyRunning(f.socket)) {
            _ = try InProcessService(configuration: ServerConfiguration(root: f.root, socketPath: f.socket, ownerUID: getuid(), log: { _ in }))
        }
        #expect(ServiceError.alreadyRunning("/s").description == "another prefsd is already serving /s")
    }

    @Test func aBatchWhoseExpectationFailedChangesNothing() throws {
        let f = try ServiceFixture()
        let c = try f.connect()
        _ = try c.call(.write(Self.address, set: ["a": .integer(1)]))
        #expect(throws: PrefsClientError.remote(RemoteError(.conflict, "the domain com.example.s changed; nothing was written"))) {
            try c.call(.batch(Self.address, ChangeSet(set: ["a": .integer(3), "b": .integer(3)], expected: ["a": .some(.integer(2))])))
        }
        #expect(try c.call(.read(Self.address, key: nil))["contents"] == .dictionary(["a": .integer(1)]))
        _ = try c.call(.batch(Self.address, ChangeSet(set: ["b": .integer(2)], remove: ["a"], expected: ["a": .some(.integer(1))])))
        #expect(try c.call(.read(Self.address, key: "b"))["value"] == .integer(2))
        #expect(try c.call(.read(Self.address, key: "a"))["value"] == nil)
    }

    @Test func subscribersHearOfWritesFromOtherConnections() throws {
        let f = try ServiceFixture()
        let watcher = try f.connect(), writer = try f.connect()
        let (sub, contents) = try watcher.subscribe(Self.address)
        #expect(contents == nil)
        _ = try writer.call(.write(Self.address, set: ["k": .string("v")]))
        _ = try writer.call(.delete(Self.address, keys: nil))
        #expect(try watcher.nextChange() == DomainChange(subscription: sub, address: Self.address, set: ["k": .string("v")], removed: []))
        #expect(try watcher.nextChange() == DomainChange(subscription: sub, address: Self.address, set: [:], removed: ["k"]))
        _ = try watcher.call(.unsubscribe(sub))
        #expect(throws: PrefsClientError.remote(RemoteError(.noSuchSubscription, "no subscription \(sub) on this connection"))) {
            try watcher.call(.unsubscribe(sub))
        }
    }

    @Test func theAsyncStreamDeliversChanges() async throws {
        let f = try ServiceFixture()
        let stream = try DomainChanges.stream(socketPath: f.socket, root: f.root, address: Self.address)
        let writer = try f.connect()
        _ = try writer.call(.write(Self.address, set: ["n": .integer(1)]))
        var iterator = stream.makeAsyncIterator()
        let change = try await iterator.next()
        #expect(change?.set == ["n": .integer(1)])
    }

    @Test func aDirectEditIsSeenByTheNextRead() throws {
        let f = try ServiceFixture()
        let c = try f.connect()
        _ = try c.call(.write(Self.address, set: ["k": .integer(1)]))
        #expect(try c.call(.read(Self.address, key: "k"))["value"] == .integer(1))
        try FilePreferenceStore(root: f.root).update(.named("com.example.s"), scope: .anyHost) { $0["k"] = .integer(2) }
        #expect(try c.call(.read(Self.address, key: "k"))["value"] == .integer(2))
        let status = try c.call(.status)
        #expect(status["durability"] == .string("write-through, group commit"))
        #expect(status["root"] == .string(f.root))
    }

    /// A commit goes into the inode the domain's previous commit freed
    /// (ReplacementSpares); a direct writer in between, whose file is a new
    /// inode, is neither lost nor overwritten with stale contents.
    @Test func commitsReuseTheInodeTheLastOneFreed() throws {
        let f = try ServiceFixture()
        let c = try f.connect()
        let store = FilePreferenceStore(root: f.root)
        let domain = Domain.named("com.example.s")
        for n in 0..<4 {
            _ = try c.call(.write(Self.address, set: ["k": .integer(Int128(n))]))
            #expect(try store.read(domain, scope: .anyHost)?["k"] == .integer(Int128(n)), "a direct reader sees each write")
        }
        try store.update(domain, scope: .anyHost) { $0["direct"] = .bool(true) }
        for n in 4..<8 {
            _ = try c.call(.write(Self.address, set: ["k": .integer(Int128(n))]))
        }
        #expect(try store.read(domain, scope: .anyHost) == ["k": .integer(7), "direct": .bool(true)])
        let status = try c.call(.status)
        // The first commit had nothing to replace and the second made the
        // spare; the other six went into it (the direct write in between
        // left prefsd's spare alone).
        #expect(status["commitsIntoSpares"] == .integer(6))
        // The first commit renamed a new file in; each later one swapped names with the file it replaced.
        #expect(status["commitsSwappingNames"] == .integer(7))
        // Each write had a turn of its own, and each of those waited for the disk.
        guard case .dictionary(let turns)? = status["writeTurns"], case .real(let flushing)? = turns["flushingSeconds"],
              case .real(let committing)? = turns["committingSeconds"] else {
            Issue.record("status has no writeTurns: \(status)")
            return
        }
        #expect(turns["turns"] == .integer(8))
        #expect(flushing > 0 && committing > 0)
        let path = try store.location(of: domain, scope: .anyHost)
        #expect(FileSystem.exists(ReplacementSpares.spareName(of: path)))
    }

    /// A writer killed mid-write leaves `.<file>.<random>.tmp` (or an
    /// unfinished `defaults apply`'s `.pending`) beside the domain. prefsd's
    /// next commit of that domain removes it, also after earlier commits,
    /// which skip the look while inotify shows nothing new there; a direct
    /// write's own temporary in between does not make prefsd lose track.
    @Test func theNextCommitRemovesWhatDeadWritersLeft() throws {
        let f = try ServiceFixture()
        let c = try f.connect()
        let store = FilePreferenceStore(root: f.root)
        let domain = Domain.named("com.example.s")
        for n in 0..<3 { _ = try c.call(.write(Self.address, set: ["k": .integer(Int128(n))])) }
        let dir = FileSystem.parentDirectory(try store.location(of: domain, scope: .anyHost))
        func leave(_ name: String) {
            #expect(FileManager.default.createFile(atPath: dir + "/" + name, contents: Data("half".utf8)))
        }
        func present(_ name: String) -> Bool { FileSystem.exists(dir + "/" + name) }
        leave(".com.example.s.plist.Ab3dE6gH.tmp")
        leave(".com.example.s.plist.Zz9Yy8Xx.pending")
        leave(".com.example.other.plist.Ab3dE6gH.tmp")
        _ = try c.call(.write(Self.address, set: ["k": .integer(3)]))
        #expect(!present(".com.example.s.plist.Ab3dE6gH.tmp"))
        #expect(!present(".com.example.s.plist.Zz9Yy8Xx.pending"))
        #expect(present(".com.example.other.plist.Ab3dE6gH.tmp"), "another domain's leftover waits for that domain's commit")

        for n in 4..<6 { _ = try c.call(.write(Self.address, set: ["k": .integer(Int128(n))])) }
        try store.update(domain, scope: .anyHost) { $0["direct"] = .bool(true) }
        leave(".com.example.s.plist.Qq1Ww2Ee.tmp")
        _ = try c.call(.write(Self.address, set: ["k": .integer(6)]))
        #expect(!present(".com.example.s.plist.Qq1Ww2Ee.tmp"))
        #expect(try store.read(domain, scope: .anyHost) == ["k": .integer(6), "direct": .bool(true)])

        // The other domain's first commit through prefsd looks too.
        _ = try c.call(.write(DomainAddress(.named("com.example.other")), set: ["k": .integer(1)]))
        #expect(!present(".com.example.other.plist.Ab3dE6gH.tmp"))
    }

    @Test(arguments: [
        (["--help"], 0, "usage: prefsd", ""),
        (["--version"], 0, "prefsd (AppHome) ", ""),
        (["--bogus"], 255, "", "prefsd: unknown argument --bogus\nRun 'prefsd --help' for its options.\n"),
        (["--socket"], 255, "", "prefsd: option --socket needs a value\n"),
    ])
    func theCommandLineIsChecked(arguments: [String], status: Int32, out: String, err: String) {
        let console = CapturingConsole()
        let result = PrefsdCommand.run(arguments, environment: .init(configuration: Configuration(), pid: 1, uid: 0), console: console)
        #expect(result == status)
        #expect(console.standardOutput.hasPrefix(out))
        #expect(console.standardError.hasPrefix(err))
    }

    @Test func withoutARuntimeDirectoryTheSocketMustBeNamed() {
        let console = CapturingConsole()
        let result = PrefsdCommand.run(["--root", "/tmp/x"], environment: .init(configuration: Configuration(), pid: 1, uid: 0), console: console)
        #expect(result == 1)
        #expect(console.standardError == "prefsd: cannot find where to put the socket: set XDG_RUNTIME_DIR or APPHOME_SOCKET, or pass --socket\n")
    }
}

@Suite struct LiveDomainTests {
    @Test func aLiveDomainSeesEveryAcknowledgedWriteWithoutAskingAgain() throws {
        let f = try ServiceFixture()
        let address = DomainAddress(.named("com.example.live"))
        let live = try LiveDomain(connection: try f.connect(), address: address)
        #expect(try live.contents() == [:])
        let other = try f.connect()
        for i in 0..<50 {
            _ = try other.call(.write(address, set: ["n": .integer(Int128(i))]))
            // Acknowledged to the other connection: the notification is already on its way.
            var seen = try live.value(forKey: "n")
            var tries = 0
            while seen != .integer(Int128(i)) && tries < 1000 { usleep(100); seen = try live.value(forKey: "n"); tries += 1 }
            #expect(seen == .integer(Int128(i)))
        }
        try live.set(["own": .bool(true)])
        #expect(try live.value(forKey: "own") == .bool(true))
        _ = try other.call(.delete(address, keys: ["n"]))
        var gone = try live.value(forKey: "n")
        for _ in 0..<1000 where gone != nil { usleep(100); gone = try live.value(forKey: "n") }
        #expect(gone == nil)
    }
}

@Suite struct TimeoutTests {
    @Test func aClientThatStopsMidFrameIsDisconnectedWhileOthersAreServed() throws {
        let directory = NSTemporaryDirectory() + "prefsd-timeout-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var configuration = ServerConfiguration(root: directory + "/root", socketPath: directory + "/prefsd.sock", ownerUID: getuid(), log: { _ in })
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        chmod(directory, 0o700)
        configuration.partialFrameTimeout = 0.2
        let service = try InProcessService(configuration: configuration)
        defer { service.stop() }
        let stalled = try UnixSocket.connect(to: configuration.socketPath, timeout: 5)
        defer { close(stalled) }
        try UnixSocket.sendAll(stalled, Frame.magic + [Frame.version, 0, 0, 0, 0, 50, 1, 2])
        let other = try PrefsConnection(socketPath: configuration.socketPath, root: configuration.root)
        #expect(try other.call(.status)["root"] == .string(configuration.root))
        usleep(1_500_000)  // the loop wakes at least once a second to check timeouts
        var byte: UInt8 = 0
        #expect(recv(stalled, &byte, 1, 0) == 0, "the stalled client is still connected")
        #expect(try other.call(.listDomains)["domains"] == .array([]))
    }

    @Test func aFileWhereTheSocketGoesIsNeverRemoved() throws {
        let directory = NSTemporaryDirectory() + "prefsd-notsock-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        chmod(directory, 0o700)
        #expect(FileManager.default.createFile(atPath: directory + "/prefsd.sock", contents: Data("keep".utf8)))
        #expect(throws: ServiceError.unsafeDirectory(directory, reason: "\(directory)/prefsd.sock exists and is not a socket")) {
            _ = try InProcessService(configuration: ServerConfiguration(root: directory, socketPath: directory + "/prefsd.sock", ownerUID: getuid(), log: { _ in }))
        }
        #expect(FileManager.default.contents(atPath: directory + "/prefsd.sock") == Data("keep".utf8))
    }
}
