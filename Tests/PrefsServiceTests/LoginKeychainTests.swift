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
}
