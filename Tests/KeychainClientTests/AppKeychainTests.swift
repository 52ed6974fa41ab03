#if canImport(Glibc)
import Glibc
#endif
import AppHomeSystem
import Containers
import Foundation
import Keychain
import KeychainClient
import PrefsClient
import PrefsProtocol
import PrefsService
import PropertyList
import TestSupport
import Testing

/// `AppKeychain`, the client API services use: through prefsd or on the
/// files, with the same items and errors, and only the app's own groups.
@Suite struct AppKeychainTests {
    static let clock: @Sendable () -> PlistDate = { PlistDate(secondsSince1970: 1_800_000_000) }

    /// A root with apps A and B installed the way `apphome install` does
    /// (the keychain participant issues their credentials), and a prefsd.
    final class World {
        let path: String
        var root: String { path + "/root" }
        var socket: String { path + "/run/prefsd.sock" }
        var service: InProcessService?

        init() throws {
            path = ScratchDirectory.make("appkeychain-test")
            let participant = KeychainParticipant(root: root, policy: .fileOnly, now: AppKeychainTests.clock)
            let manager = ContainerManager(root: root, participants: [participant])
            for id in ["com.example.A", "com.example.B"] {
                let bundle = path + "/bundles/" + id + "/App.app"
                try FileManager.default.createDirectory(atPath: bundle, withIntermediateDirectories: true)
                let info: PlistValue = .dictionary(["CFBundleIdentifier": .string(id), "CFBundleVersion": .string("1")])
                try Data(PlistCodec.encode(info, format: .xml)).write(to: URL(fileURLWithPath: bundle + "/Info.plist"))
                let report = try manager.install(AppBundle(path: bundle))
                #expect(report.participantFailures.isEmpty)
            }
            var configuration = ServerConfiguration(root: root, socketPath: socket, ownerUID: getuid(), log: { _ in })
            configuration.keyPolicy = .fileOnly
            configuration.keychainClock = AppKeychainTests.clock
            service = try InProcessService(configuration: configuration)
        }

        deinit {
            service = nil
            ScratchDirectory.remove(path)
        }

        var daemon: [String: String] { ["APPHOME_PREFSD": "require", "APPHOME_SOCKET": socket, "APPHOME_KEYCHAIN_KEY_STORE": "file"] }
        var files: [String: String] { ["APPHOME_PREFSD": "off", "APPHOME_KEYCHAIN_KEY_STORE": "file"] }

        func keychain(_ app: String, _ environment: [String: String]) throws -> AppKeychain {
            try AppKeychain(app: app, root: root, configuration: Configuration(variable: { environment[$0] }), now: AppKeychainTests.clock)
        }

        func home(_ app: String) throws -> ApplicationHome { try ContainerManager(root: root).home(for: BundleIdentifier(app)) }
    }

    static func password(_ account: String, _ service: String) -> ItemAttributes {
        var a = ItemAttributes(itemClass: .genericPassword)
        a.account = account
        a.service = service
        return a
    }

    static func text(_ s: SecureBytes) -> String { String(decoding: s.exposedCopy(), as: UTF8.self) }

    static func status(_ body: () throws(KeychainError) -> Void) -> Int32? {
        do throws(KeychainError) { try body(); return nil } catch { return error.status }
    }

    @Test func itemsAddedThroughPrefsdAreFoundOnTheFilesAndTheOtherWay() throws {
        let w = try World()
        let viaDaemon = try w.keychain("com.example.A", w.daemon)
        let direct = try w.keychain("com.example.A", w.files)
        #expect(viaDaemon.throughPrefsd)
        #expect(!direct.throughPrefsd)

        try viaDaemon.add(Self.password("ray", "sync.example.com"), data: SecureBytes(utf8: "through prefsd"))
        #expect(Self.text(try direct.genericPassword(service: "sync.example.com", account: "ray")) == "through prefsd")
        try direct.add(Self.password("ray", "mail.example.com"), data: SecureBytes(utf8: "on the files"))
        #expect(Self.text(try viaDaemon.genericPassword(service: "mail.example.com")) == "on the files")

        // The same errors both ways.
        for k in [viaDaemon, direct] {
            #expect(Self.status { () throws(KeychainError) in try k.add(Self.password("ray", "sync.example.com"), data: SecureBytes(utf8: "x")) } == -25299)
            #expect(Self.status { () throws(KeychainError) in _ = try k.genericPassword(service: "nowhere.example.com") } == -25300)
        }

        var changes = ItemChanges()
        changes.data = SecureBytes(utf8: "rotated")
        var query = ItemQuery(itemClass: .genericPassword)
        query.service = "sync.example.com"
        try viaDaemon.update(query, with: changes)
        #expect(Self.text(try direct.genericPassword(service: "sync.example.com")) == "rotated")
        try viaDaemon.delete(query)
        #expect(Self.status { () throws(KeychainError) in _ = try direct.genericPassword(service: "sync.example.com") } == -25300)
    }

    @Test func anotherAppSeesNothingOfTheAppsItemsEitherWay() throws {
        let w = try World()
        try w.keychain("com.example.A", w.daemon).add(Self.password("ray", "sync.example.com"), data: SecureBytes(utf8: "A's"))
        for environment in [w.daemon, w.files] {
            let b = try w.keychain("com.example.B", environment)
            #expect(Self.status { () throws(KeychainError) in _ = try b.genericPassword(service: "sync.example.com") } == -25300)
            var query = ItemQuery(itemClass: .genericPassword)
            query.accessGroup = try AccessGroup("com.example.A")
            #expect(Self.status { () throws(KeychainError) in _ = try b.copyMatching(query) } == -34018)
        }
    }

    @Test func theCredentialIssuedAtInstallIsWhatTheServiceChecks() throws {
        let w = try World()
        let home = try w.home("com.example.A")
        let issued = try #require(try AppCredential.read(home: home))
        let k = try w.keychain("com.example.A", w.daemon)
        try k.add(Self.password("ray", "sync.example.com"), data: SecureBytes(utf8: "s"))
        #expect(try AppCredential.read(home: home) == issued)

        // Naming the app with another token gets nothing.
        let connection = try #require(try PrefsdSettingsForTests.connect(w))
        let forged = DaemonKeychain(connection: connection, caller: KeychainCaller(bundleIdentifier: "com.example.A", credential: String(repeating: "0", count: 64)),
                                    directory: w.root + "/Keychains")
        var query = ItemQuery(itemClass: .genericPassword)
        query.returnData = true
        // The same hand-made client with the issued token works…
        let genuine = DaemonKeychain(connection: connection, caller: KeychainCaller(bundleIdentifier: "com.example.A", credential: issued),
                                     directory: w.root + "/Keychains")
        #expect(try genuine.copyMatching(query, context: k.context).map { Self.text($0.data!) } == ["s"])
        // …and with any other token it is refused.
        #expect(Self.status { () throws(KeychainError) in _ = try forged.copyMatching(query, context: k.context) } == DaemonKeychain.refusedStatus)
        // B's own credential does not open A's items either.
        let bToken = try #require(try AppCredential.read(home: w.home("com.example.B")))
        let asB = DaemonKeychain(connection: connection, caller: KeychainCaller(bundleIdentifier: "com.example.A", credential: bToken),
                                 directory: w.root + "/Keychains")
        #expect(Self.status { () throws(KeychainError) in _ = try asB.copyMatching(query, context: k.context) } == DaemonKeychain.refusedStatus)
    }

    @Test func theContextOfApphomeRunNamesTheApp() throws {
        let w = try World()
        var environment = w.daemon
        environment["APPHOME_BUNDLE_ID"] = "com.example.B"
        environment["APPHOME_ROOT"] = w.root
        let k = try AppKeychain(configuration: Configuration(variable: { environment[$0] }), now: Self.clock)
        #expect(k.bundleIdentifier == "com.example.B")
        #expect(k.root == w.root)
        #expect(k.context.accessGroups.map(\.rawValue) == ["com.example.B"])
        #expect(try AppKeychain(app: "com.example.A", configuration: Configuration(variable: { environment[$0] }), now: Self.clock).bundleIdentifier == "com.example.A")
    }

    @Test(arguments: [
        (["APPHOME_ROOT": "/nonexistent"], "no app context: name the app, or run inside `apphome run`"),
        (["APPHOME_BUNDLE_ID": "com.example.A"], "cannot find the AppHome root: set APPHOME_ROOT or HOME"),
        (["APPHOME_BUNDLE_ID": "com.example.Missing", "APPHOME_PREFSD": "off", "ROOT": ""], "com.example.Missing is not installed"),
        (["APPHOME_BUNDLE_ID": "com.example.A", "APPHOME_PREFSD": "sometimes", "ROOT": ""], "APPHOME_PREFSD is \"sometimes\"; use off, auto or require"),
    ])
    func openingFailsWithAClearMessage(_ given: [String: String], message: String) throws {
        let w = try World()
        var environment = given
        if environment.removeValue(forKey: "ROOT") != nil { environment["APPHOME_ROOT"] = w.root }
        do {
            _ = try AppKeychain(configuration: Configuration(variable: { environment[$0] }), now: Self.clock)
            Issue.record("opened a keychain with \(given)")
        } catch {
            #expect(error.description == message)
        }
    }

    @Test func requireWithoutAServiceFailsAndAutoFallsBackToTheFiles() throws {
        let w = try World()
        w.service = nil
        var environment = w.daemon
        do {
            _ = try w.keychain("com.example.A", environment)
            Issue.record("opened through a prefsd that is not running")
        } catch {
            #expect("\(error)" == "prefsd is not answering on \(w.socket): No such file or directory")
        }
        environment["APPHOME_PREFSD"] = "auto"
        #expect(try !w.keychain("com.example.A", environment).throughPrefsd)
    }
}

/// A raw connection to the world's prefsd.
enum PrefsdSettingsForTests {
    static func connect(_ w: AppKeychainTests.World) throws -> PrefsConnection? {
        try PrefsdSettings(configuration: Configuration(variable: { w.daemon[$0] })).connect(root: w.root)
    }

}

extension AppKeychainTests {
    /// Issue 23, finding 2: the login keychain is the user's. In an app's
    /// context (its bundle id or its home set, as inside `apphome run`) the
    /// login keychain is refused, with prefsd off and with prefsd required.
    @Test func theLoginKeychainIsRefusedInAnAppsContext() throws {
        let root = ScratchDirectory.make("login-refused")
        defer { ScratchDirectory.remove(root) }
        for mode in [AppHomeSystem.Configuration.ServiceMode.off, .require] {
        for context in [AppHomeSystem.Configuration(root: root, serviceMode: .success(mode), keyStore: .file, bundleIdentifier: "com.example.A"),
                        AppHomeSystem.Configuration(root: root, serviceMode: .success(mode), keyStore: .file, appHome: root + "/Applications/X")] {
            #expect(context.inAppContext)
            do {
                _ = try AppKeychain(loginAt: root, configuration: context)
                Issue.record("the login keychain was opened in an app's context")
            } catch {
                guard case .loginFromApp = error else { Issue.record("unexpected \(error)"); continue }
                #expect(error.description.hasPrefix("the login keychain is the user's and no app may use it"))
            }
        }
        }
        // The user's own context still opens it (files; prefsd is not asked).
        #expect(throws: Never.self) { _ = try AppKeychain(loginAt: root, configuration: AppHomeSystem.Configuration(root: root, serviceMode: .success(.off), keyStore: .file)) }
    }
}
