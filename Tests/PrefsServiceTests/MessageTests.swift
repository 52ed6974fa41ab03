import AppHomeSystem
import Testing
import Preferences
import PrefsClient
import PrefsProtocol
import PrefsService
import PropertyList

@Suite struct MessageTests {
    static let address = DomainAddress(.named("com.example.a"))

    @Test(arguments: [
        Request.hello(root: "/r"), .status, .listDomains, .hostIdentifier,
        .read(address, key: nil), .read(DomainAddress(.global, scope: .currentHost), key: "k"),
        .read(DomainAddress(.file(path: "/tmp/x.plist"), scope: .named("host1")), key: nil),
        .write(address, set: ["k": .integer(1), "d": .dictionary(["x": .data([1, 2])])]),
        .delete(address, keys: nil), .delete(address, keys: ["a", "b"]),
        .batch(address, ChangeSet(set: ["a": .bool(true)], remove: ["b"], removeAll: true, expected: ["a": nil, "b": .some(.string("x"))])),
        .subscribe(address), .unsubscribe(7), .uninstall(bundleIdentifier: "com.example.App", hookEnvironment: HookEnvironment(from: ["LANG": "C.UTF-8"])),
        .location(address),
    ])
    func everyRequestSurvivesTheWire(request: Request) throws {
        let (id, decoded) = Request.decode(try request.encode(id: 42))
        #expect(id == 42)
        #expect(try decoded.get() == request)
    }

    /// The plain success reply is written by hand; it must be the very bytes
    /// the binary writer gives the same dictionary, for every width of id.
    @Test(arguments: [0, 1, 127, 128, 255, 256, 257, 0xFFFF, 0x1_0000, 0x7FFF_FFFF, 0xFFFF_FFFF, 0x1_0000_0000, Int.max, -1, Int.min])
    func aPlainSuccessIsWhatTheWriterWrites(id: Int) throws {
        let general = try PlistCodec.encode(.dictionary(["id": .integer(Int128(id)), "ok": .bool(true)]), format: .binary)
        let reply = Reply.response(id: id, .success([:]))
        #expect(try reply.encode() == general)
        #expect(try Reply.decode(reply.encode()) == reply)
    }

    @Test func keychainOperationsUseTheirReservedCodes() {
        let keychain = Operation.allCases.filter { Operation.reservedForKeychain.contains($0.rawValue) }
        #expect(keychain == [.keychainFind, .keychainAdd, .keychainUpdate, .keychainDelete, .keychainLocked])
        #expect(keychain.map(\.rawValue) == [32, 33, 34, 35, 36])
        #expect(Operation.reservedForKeychain == 32...47)
    }

    @Test(arguments: [
        Reply.response(id: 3, .success([:])), .response(id: 4, .success(["contents": .dictionary(["k": .integer(1)])])),
        .response(id: 5, .failure(RemoteError(.conflict, "changed"))),
        .change(DomainChange(subscription: 2, address: address, set: ["k": .real(0.5)], removed: ["gone"])),
    ])
    func everyReplySurvivesTheWire(reply: Reply) throws {
        #expect(try Reply.decode(try reply.encode()) == reply)
    }

    @Test func aChangeListsNewAndChangedKeysAndRemovedOnes() {
        let change = DomainChange.between(["a": .integer(1), "b": .integer(2), "c": .integer(3)],
                                          ["a": .integer(1), "b": .integer(9), "d": .integer(4)], subscription: 1, address: Self.address)
        #expect(change?.set == ["b": .integer(9), "d": .integer(4)])
        #expect(change?.removed == ["c"])
        #expect(DomainChange.between(["a": .integer(1)], ["a": .integer(1)], subscription: 1, address: Self.address) == nil)
    }

    @Test func aChangeSetAppliesOnlyWhileItsExpectationsHold() {
        let change = ChangeSet(set: ["a": .integer(2)], remove: ["b"], expected: ["a": .some(.integer(1)), "z": nil])
        var contents: [PlistKey: PlistValue] = ["a": .integer(1), "b": .integer(1)]
        #expect(change.holds(in: contents))
        change.apply(to: &contents)
        #expect(contents == ["a": .integer(2)])
        #expect(!change.holds(in: contents))
        #expect(!change.holds(in: ["a": .integer(1), "z": .bool(false)]))
    }
}

@Suite struct SettingsTests {
    @Test(arguments: [
        ([:], PrefsdMode.auto, "/run/user/1/apphome/prefsd.sock"),
        (["APPHOME_PREFSD": "off"], .off, "/run/user/1/apphome/prefsd.sock"),
        (["APPHOME_PREFSD": "REQUIRE", "APPHOME_SOCKET": "/s"], .require, "/s"),
    ])
    func theModeAndSocketComeFromTheEnvironment(extra: [String: String], mode: PrefsdMode, socket: String) throws {
        let variables = extra.merging(["XDG_RUNTIME_DIR": "/run/user/1"]) { a, _ in a }
        let settings = try PrefsdSettings(configuration: Configuration(variable: { variables[$0] }))
        #expect(settings.mode == mode)
        #expect(settings.socketPath == socket)
    }

    @Test func anUnknownModeIsRefusedByName() {
        #expect(throws: PrefsdSettingsError.unknownMode("maybe")) { try PrefsdSettings(configuration: Configuration(variable: { ["APPHOME_PREFSD": "maybe"][$0] })) }
        #expect(PrefsdSettingsError.unknownMode("maybe").description == "APPHOME_PREFSD is \"maybe\"; use off, auto or require")
    }

    @Test(arguments: [
        (String?.none, String?.none, String?.none, String?.none),
        (nil, nil, "relative/dir", nil),
        ("/opt", "/env", "/run", "/opt"),
        (nil, "/env", "/run", "/env"),
        (nil, "", "/run", "/run/apphome/prefsd.sock"),
    ])
    func theSocketIsOptionThenVariableThenRuntimeDirectory(option: String?, variable: String?, runtime: String?, expected: String?) {
        #expect(SocketLocation.resolve(option: option, apphomeSocket: variable, runtimeDirectory: runtime) == expected)
    }

    @Test func autoWithoutAServiceMeansTheFiles() throws {
        let settings = PrefsdSettings(mode: .auto, socketPath: "/nonexistent/prefsd.sock")
        #expect(try settings.connect(root: "/r") == nil)
        #expect(try PrefsdSettings(mode: .off, socketPath: "/nonexistent").connect(root: "/r") == nil)
        #expect(throws: PrefsClientError.notRunning(socket: "/nonexistent/prefsd.sock", reason: "No such file or directory")) {
            try PrefsdSettings(mode: .require, socketPath: "/nonexistent/prefsd.sock").connect(root: "/r")
        }
    }
}
