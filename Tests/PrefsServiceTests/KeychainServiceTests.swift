#if canImport(Glibc)
import Glibc
#endif
import AppHomeSystem
import Containers
import Dispatch
import Foundation
import Keychain
import Preferences
import PrefsClient
import PrefsProtocol
import PrefsService
import PropertyList
import Testing

/// The keychain operations (32–36) on the wire and through a service in process.
@Suite struct KeychainServiceTests {
    static let a = KeychainCaller(bundleIdentifier: "com.example.A", credential: String(repeating: "a", count: 64))

    @Test(arguments: [
        Request.keychainFind(a, query: ["class": .string("genp"), "service": .string("s"), "returnData": .bool(true)]),
        Request.keychainAdd(a, attributes: ["class": .string("genp"), "account": .string("me")], data: Array("s3cret".utf8)),
        Request.keychainUpdate(a, query: ["class": .string("genp")], changes: ["label": .bool(false)], data: [1, 2]),
        Request.keychainUpdate(a, query: ["class": .string("inet")], changes: ["comment": .string("c")], data: nil),
        Request.keychainDelete(a, query: ["class": .string("genp"), "account": .string("me")]),
        Request.keychainLocked(KeychainCaller(bundleIdentifier: "login", credential: String(repeating: "b", count: 64))),
    ])
    func requestsRoundTrip(_ request: Request) throws {
        let decoded = Request.decode(try request.encode(id: 7))
        #expect(decoded.id == 7)
        #expect(try decoded.request.get() == request)
        #expect(Operation.reservedForKeychain.contains(request.operation.rawValue))
    }

    @Test func aKeychainErrorKeepsItsStatusOnTheWire() throws {
        let reply = Reply.response(id: 3, .failure(RemoteError(.keychain, "The specified item could not be found in the keychain.", status: -25300)))
        #expect(try Reply.decode(try reply.encode()) == reply)
    }

    @Test(arguments: [
        (["op": .integer(32), "id": .integer(1), "credential": .string("x"), "query": .dictionary([:])], "a keychain request needs an app"),
        (["op": .integer(32), "id": .integer(1), "app": .string("a"), "query": .dictionary([:])], "a keychain request needs a credential"),
        (["op": .integer(35), "id": .integer(1), "app": .string("a"), "credential": .string("x")], "a keychain request needs a query dictionary"),
        (["op": .integer(33), "id": .integer(1), "app": .string("a"), "credential": .string("x"), "attributes": .dictionary([:])], "keychain add needs data"),
    ] as [([PlistKey: PlistValue], String)])
    func malformedKeychainRequestsAreRefused(fields: [PlistKey: PlistValue], message: String) throws {
        let decoded = Request.decode(try PlistCodec.encode(.dictionary(fields), format: .binary))
        #expect(decoded.request == .failure(.malformed(message)))
    }

    @Test func queriesAttributesAndChangesRoundTripThroughTheWireForm() throws {
        var q = ItemQuery(itemClass: .internetPassword)
        q.server = "example.com"; q.port = 443; q.protocol = "htps"; q.synchronizable = .any; q.matchLimit = .all
        q.generic = [1, 2]; q.returnAttributes = true; q.accessGroup = try AccessGroup("com.example.A")
        #expect(KeychainWire.encode(try KeychainWire.query(KeychainWire.encode(q))) == KeychainWire.encode(q))
        var attributes = ItemAttributes(itemClass: .genericPassword, accessGroup: try AccessGroup("com.example.A"))
        attributes.account = "me"; attributes.service = "s"; attributes.label = "L"; attributes.accessibility = .afterFirstUnlock
        #expect(try KeychainWire.attributes(KeychainWire.encode(attributes)) == attributes)
        var c = ItemChanges()
        c.label = .some(nil); c.comment = "new"; c.port = 8443; c.generic = .some(nil)
        #expect(KeychainWire.encode(try KeychainWire.changes(KeychainWire.encode(c))) == KeychainWire.encode(c))
        #expect(throws: KeychainError.invalidParameter("class must be genp or inet")) { try KeychainWire.query(["class": .string("keys")]) }
        #expect(throws: KeychainError.invalidParameter("port must be an integer")) { try KeychainWire.query(["class": .string("inet"), "port": .string("443")]) }
    }
}

/// A service in process on a root with apps A and B installed.
final class KeychainFixture {
    let service: ServiceFixture
    let manager: ContainerManager

    init() throws {
        service = try ServiceFixture()
        manager = ContainerManager(root: service.root)
        for id in ["com.example.A", "com.example.B"] {
            let bundle = service.directory + "/bundles/" + id + "/App.app"
            try FileManager.default.createDirectory(atPath: bundle, withIntermediateDirectories: true)
            let info: [PlistKey: PlistValue] = ["CFBundleIdentifier": .string(id), "CFBundleVersion": .string("1")]
            try Data(PlistCodec.encode(.dictionary(info), format: .xml)).write(to: URL(fileURLWithPath: bundle + "/Info.plist"))
            _ = try manager.install(AppBundle(path: bundle))
        }
    }

    func home(_ id: String) throws -> ApplicationHome {
        let entry = try manager.entry(for: BundleIdentifier(id))
        return manager.layout.home(uuid: entry.homeUUID, bundleName: entry.bundleName)
    }

    /// The app's own caller, with its credential (issued now if needed).
    func caller(_ id: String) throws -> KeychainCaller {
        KeychainCaller(bundleIdentifier: id, credential: try AppCredential.issue(home: home(id)))
    }

    static let genp: [PlistKey: PlistValue] = ["class": .string("genp"), "service": .string("svc"), "account": .string("me")]
    static var find: [PlistKey: PlistValue] { genp.merging(["returnData": .bool(true), "returnAttributes": .bool(true)]) { $1 } }
}

@Suite struct KeychainIsolationTests {
    static let notFound = PrefsClientError.remote(RemoteError(.keychain, "The specified item could not be found in the keychain.", status: -25300))

    @Test func anAppGetsOnlyItsOwnItemsThroughTheService() throws {
        let f = try KeychainFixture()
        let c = try f.service.connect()
        let a = try f.caller("com.example.A"), b = try f.caller("com.example.B")
        _ = try c.call(.keychainAdd(a, attributes: KeychainFixture.genp, data: Array("A's secret".utf8)))
        // B sees nothing of A's, cannot delete it or change it.
        #expect(throws: Self.notFound) { try c.call(.keychainFind(b, query: KeychainFixture.find)) }
        #expect(throws: Self.notFound) { try c.call(.keychainDelete(b, query: ["class": .string("genp")])) }
        #expect(throws: Self.notFound) { try c.call(.keychainUpdate(b, query: ["class": .string("genp")], changes: [:], data: [0x42])) }
        let missing = PrefsClientError.remote(RemoteError(.keychain, "A required entitlement isn't present. (The app does not hold the keychain access group 'com.example.A'.)", status: -34018))
        #expect(throws: missing) { try c.call(.keychainFind(b, query: KeychainFixture.find.merging(["accessGroup": .string("com.example.A")]) { $1 })) }
        // A still has its item, secret intact.
        let found = try c.call(.keychainFind(a, query: KeychainFixture.find))
        guard case .array(let items)? = found["items"], case .dictionary(let item)? = items.first else { Issue.record("no items: \(found)"); return }
        #expect(items.count == 1)
        #expect(item["data"] == .data(Array("A's secret".utf8)))
        #expect(item["attributes"]?.dictionaryValue?["accessGroup"] == .string("com.example.A"))
        // A's delete works.
        _ = try c.call(.keychainDelete(a, query: ["class": .string("genp")]))
        #expect(throws: Self.notFound) { try c.call(.keychainFind(a, query: KeychainFixture.find)) }
    }

    @Test func aForgedBundleIDWithoutItsCredentialIsRefused() throws {
        let f = try KeychainFixture()
        let c = try f.service.connect()
        let a = try f.caller("com.example.A"), b = try f.caller("com.example.B")
        _ = try c.call(.keychainAdd(a, attributes: KeychainFixture.genp, data: Array("A's secret".utf8)))
        let refused = PrefsClientError.remote(RemoteError(.notAuthorized, "prefsd: the caller did not prove it acts for the app com.example.A"))
        for forged in [KeychainCaller(bundleIdentifier: "com.example.A", credential: b.credential),
                       KeychainCaller(bundleIdentifier: "com.example.A", credential: ""),
                       KeychainCaller(bundleIdentifier: "com.example.A", credential: String(a.credential.reversed()))] {
            #expect(throws: refused) { try c.call(.keychainFind(forged, query: KeychainFixture.find)) }
            #expect(throws: refused) { try c.call(.keychainDelete(forged, query: ["class": .string("genp")])) }
            #expect(throws: refused) { try c.call(.keychainAdd(forged, attributes: ["class": .string("genp"), "service": .string("x"), "account": .string("y")], data: [1])) }
        }
        #expect(throws: PrefsClientError.remote(RemoteError(.notAuthorized, "prefsd: no installed app com.example.Z"))) {
            try c.call(.keychainFind(KeychainCaller(bundleIdentifier: "com.example.Z", credential: a.credential), query: KeychainFixture.find))
        }
        // A's item survived every forged call.
        #expect(try c.call(.keychainFind(a, query: KeychainFixture.find))["items"]?.arrayValue?.count == 1)
    }

    @Test func anAppWhoseCredentialWasNeverIssuedIsRefused() throws {
        let f = try KeychainFixture()
        let c = try f.service.connect()
        #expect(try AppCredential.read(home: f.home("com.example.B")) == nil)
        let guess = KeychainCaller(bundleIdentifier: "com.example.B", credential: String(repeating: "0", count: 64))
        #expect(throws: PrefsClientError.remote(RemoteError(.notAuthorized, "prefsd: the caller did not prove it acts for the app com.example.B"))) {
            try c.call(.keychainFind(guess, query: KeychainFixture.find))
        }
    }

    @Test func theCredentialIsPrivateStableAndChecked() throws {
        let f = try KeychainFixture()
        let home = try f.home("com.example.A")
        let token = try AppCredential.issue(home: home)
        #expect(try AppCredential.issue(home: home) == token)
        #expect(token.utf8.count == 64)
        var st = stat()
        #expect(stat(AppCredential.path(home: home), &st) == 0 && st.st_mode & 0o777 == 0o600)
        #expect(AppCredential.verify(token, home: home))
        #expect(!AppCredential.verify(token, home: try f.home("com.example.B")))
        try Data("garbage\n".utf8).write(to: URL(fileURLWithPath: AppCredential.path(home: home)))
        #expect(throws: KeychainError.corrupt(path: AppCredential.path(home: home), reason: "not an AppHome credential of version 1")) {
            try AppCredential.read(home: home)
        }
        #expect(!AppCredential.verify(token, home: home))
    }

    @Test func aBadQueryIsAKeychainParameterError() throws {
        let f = try KeychainFixture()
        let c = try f.service.connect()
        #expect(throws: PrefsClientError.remote(RemoteError(.keychain, "One or more parameters passed to a function were not valid: class must be genp or inet", status: -50))) {
            try c.call(.keychainFind(try f.caller("com.example.A"), query: ["class": .string("cert")]))
        }
    }
}

@Suite struct KeychainOffTheLoopTests {
    /// A keychain call stuck on the keychain's lock runs on a worker
    /// thread: other clients' preference calls are answered meanwhile.
    @Test func aKeychainCallWaitingForItsLockDoesNotHoldUpPreferences() throws {
        let f = try KeychainFixture()
        try FileManager.default.createDirectory(atPath: f.service.root + "/Keychains", withIntermediateDirectories: true)
        let lock = try FileLock(path: f.service.root + "/Keychains/.lock")
        let a = try f.caller("com.example.A")
        let socket = f.service.socket, root = f.service.root
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            if let c = try? PrefsConnection(socketPath: socket, root: root) {
                _ = try? c.call(.keychainAdd(a, attributes: KeychainFixture.genp, data: Array("late".utf8)))
            }
            done.signal()
        }
        usleep(200_000)
        #expect(done.wait(timeout: .now()) == .timedOut, "the add waits for the lock")
        let other = try f.service.connect()
        let address = DomainAddress(.named("com.example.meanwhile"))
        _ = try other.call(.write(address, set: ["k": .integer(1)]))
        #expect(try other.call(.read(address, key: "k"))["value"] == .integer(1))
        lock.unlock()
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(try other.call(.keychainFind(a, query: KeychainFixture.find))["items"]?.arrayValue?.count == 1)
    }
}
