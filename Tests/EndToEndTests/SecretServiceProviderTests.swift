import Foundation
import Testing

/// apphome-secretd as the only Secret Service on a private session bus,
/// driven by the real clients: secret-tool (libsecret, the dh session),
/// secretstorage (a plain session), PyPI keyring's SecretService backend,
/// git-credential-libsecret built from Debian's git, and
/// docker-credential-secretservice, with `security` on the same login
/// keychain, locking and unlocking, and hostile requests.
/// scripts/test-secret-service.sh holds the checks; the suite starts one
/// bus and one provider for all of them.
@Suite("The Secret Service provider with real clients")
struct SecretServiceProviderTests {
    @Test(.enabled(if: !TempRoot.daemonMode, "the provider works on the files whatever the mode: run once, in the files run"))
    func realClientsStoreFindAndLoseTheirSecretsInTheLoginKeychain() throws {
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let venv = try PythonKeyringTests.venv.get()
        let bin = try TestDaemon.binary("apphome-secretd").deletingLastPathComponent()
        let io = FileManager.default.temporaryDirectory.appendingPathComponent("apphome-ss-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: io, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: io) }
        var environment = ProcessInfo.processInfo.environment
        environment["DBUS_SESSION_BUS_ADDRESS"] = nil
        // `env --default-signal` first, as in DeviceKeyStoreTests: the test runner's children
        // inherit its blocked signals, and a bus daemon that cannot get SIGTERM outlives
        // dbus-run-session (one was left behind by every run).
        let r = try Subprocess.run(try RealClients.tool("env"),
                                   ["--default-signal", try RealClients.tool("dbus-run-session").path,
                                    "--", "/bin/sh", repository.appendingPathComponent("scripts/test-secret-service.sh").path, bin.path, venv.path],
                                   environment: environment, ioDirectory: io, timeout: 300)
        let failures = r.stdout.split(separator: "\n").filter { $0.hasPrefix("FAIL:") }
        #expect(r.status == 0 && failures.isEmpty, "\(failures.joined(separator: "\n"))\n\(r)")
        #expect(r.stdout.split(separator: "\n").filter { $0.hasPrefix("ok:") }.count >= 73, "\(r.stdout)")
    }
}
