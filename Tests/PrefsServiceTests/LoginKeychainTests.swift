import AppHomeSystem
import Foundation
import Keychain
import PrefsProtocol
import PropertyList
import Testing
@testable import PrefsService

/// prefsd's keychain jobs keep the login keychain the user's (issue 23,
/// finding 2): a peer started in an app's context is refused it, even
/// when it shows the user's own login credential.
@Suite struct LoginKeychainTests {
    /// A process started with `environment` (it sleeps until killed).
    func sleeper(_ environment: [String: String]) throws -> Process {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/sleep")
        p.arguments = ["30"]
        p.environment = environment
        try p.run()
        return p
    }

    @Test func aPeerInAnAppsContextIsRefusedTheLoginKeychainWhateverItsCredential() throws {
        let root = NSTemporaryDirectory() + "apphome-login-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: root) }
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        let token = try LoginCredential.issue(root: root)
        let caller = KeychainCaller(bundleIdentifier: "login", credential: token)
        let request = Request.keychainFind(caller, query: ["class": .string("inet"), "server": .string("git.example.com"), "returnData": .bool(true)])
        let policy = DeviceKeyPolicy(secretStore: InMemorySecretStore(), kernelKeys: .off)
        for variable in ["APPHOME_BUNDLE_ID": "com.example.Peek", "APPHOME_HOME": root + "/home"] {
            let app = try sleeper(["PATH": "/usr/bin:/bin", variable.key: variable.value])
            defer { kill(app.processIdentifier, SIGKILL); app.waitUntilExit() }
            // Until the child has called exec, /proc shows the parent's environment.
            let deadline = Date().addingTimeInterval(5)
            while KeychainJob.appContext(of: app.processIdentifier) == nil && Date() < deadline { usleep(1_000) }
            #expect(KeychainJob.appContext(of: app.processIdentifier) == variable.value)
            let result = KeychainJob.perform(request, caller: caller, peerPID: app.processIdentifier, root: root, policy: policy, now: { PlistDate(secondsSince1970: 0) })
            #expect(result == .failure(RemoteError(.notAuthorized, "prefsd: the login keychain is the user's and no app may use it: the caller runs in the context of \(variable.value)")))
        }
        // The user's own process, with the same credential: served (nothing is there yet).
        let user = try sleeper(["PATH": "/usr/bin:/bin"])
        defer { kill(user.processIdentifier, SIGKILL); user.waitUntilExit() }
        #expect(KeychainJob.appContext(of: user.processIdentifier) == nil)
        let served = KeychainJob.perform(request, caller: caller, peerPID: user.processIdentifier, root: root, policy: policy, now: { PlistDate(secondsSince1970: 0) })
        if case .failure(let e) = served { #expect(e.status == -25300, "\(e)") }
    }

    /// `security lock-keychain` tells prefsd (`keychainLocked`): only the
    /// user may, never an app (by its credential or its context); the
    /// keybag then holds nothing, its epoch moves on (cached credentials
    /// are dropped), and the next call opens the classes afresh.
    @Test func onlyTheUserLocksTheKeychainAndTheKeybagThenHoldsNothing() throws {
        let root = NSTemporaryDirectory() + "apphome-lock-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: root) }
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        let login = KeychainCaller(bundleIdentifier: "login", credential: try LoginCredential.issue(root: root))
        var policy = DeviceKeyPolicy(secretStore: InMemorySecretStore(), kernelKeys: .off)
        let keybag = Keybag()
        keybag.watcherStarted()
        policy.keybag = keybag
        let user = try sleeper(["PATH": "/usr/bin:/bin"])
        defer { kill(user.processIdentifier, SIGKILL); user.waitUntilExit() }
        func perform(_ request: Request, as caller: KeychainCaller, pid: Int32 = user.processIdentifier) -> Result<[PlistKey: PlistValue], RemoteError> {
            KeychainJob.perform(request, caller: caller, peerPID: pid, root: root, policy: policy, now: { PlistDate(secondsSince1970: 0) })
        }
        let item: [PlistKey: PlistValue] = ["class": .string("genp"), "service": .string("boot"), "account": .string("me"), "accessibility": .string("ck")]
        #expect(perform(.keychainAdd(login, attributes: item, data: Array("s3cret".utf8)), as: login) == .success([:]))
        // A call on the keychain made: its keys are in the keybag now.
        let query: [PlistKey: PlistValue] = ["class": .string("genp"), "service": .string("boot"), "returnData": .bool(true)]
        if case .failure(let e) = perform(.keychainFind(login, query: query), as: login) { Issue.record("\(e)") }
        #expect(!keybag.isEmpty && keybag.holdsRootKey)
        let epoch = keybag.epoch

        let app = KeychainCaller(bundleIdentifier: "com.example.A", credential: String(repeating: "a", count: 64))
        #expect(perform(.keychainLocked(app), as: app) == .failure(RemoteError(.notAuthorized, "prefsd: only the user locks the keychain; com.example.A is an app")))
        let inApp = try sleeper(["PATH": "/usr/bin:/bin", "APPHOME_BUNDLE_ID": "com.example.A"])
        defer { kill(inApp.processIdentifier, SIGKILL); inApp.waitUntilExit() }
        let deadline = Date().addingTimeInterval(5)
        while KeychainJob.appContext(of: inApp.processIdentifier) == nil && Date() < deadline { usleep(1_000) }
        if case .success = perform(.keychainLocked(login), as: login, pid: inApp.processIdentifier) { Issue.record("a peer in an app's context locked the keybag") }
        let forged = KeychainCaller(bundleIdentifier: "login", credential: String(repeating: "0", count: 64))
        if case .success = perform(.keychainLocked(forged), as: forged) { Issue.record("a wrong login credential locked the keybag") }
        #expect(!keybag.isEmpty && keybag.epoch == epoch, "a refused lock changed the keybag")

        #expect(perform(.keychainLocked(login), as: login) == .success(["keybag": .bool(true)]))
        #expect(keybag.isEmpty && !keybag.holdsRootKey)
        #expect(keybag.epoch != epoch)
        // The store is still unlocked: the next call opens the classes again.
        guard case .success(let found) = perform(.keychainFind(login, query: query), as: login),
              case .array(let items)? = found["items"], case .dictionary(let first)? = items.first else {
            Issue.record("the item could not be read after the lock notice")
            return
        }
        #expect(first["data"] == .data(Array("s3cret".utf8)))
        #expect(!keybag.isEmpty)
    }
}
