import Foundation
import Testing

/// `apphome-settings --socket PATH` (for a reverse proxy) with the real `curl`:
/// the socket is the user's alone, a peer process started in an app's context is
/// refused (its identity from `SO_PEERCRED`), any other is served, and
/// SIGTERM ends the server with status 0 and removes the socket.
@Suite("Settings app on a Unix socket", .enabled(if: !TempRoot.daemonMode))
struct SettingsAppSocketTests {
    @Test func aPeerInAnAppContextIsRefusedAndOthersAreServed() throws {
        let t = try TempRoot()
        let bin = try DefaultsBinary.url().deletingLastPathComponent()
        // A short directory: a socket's path has at most 107 bytes.
        let dir = URL(fileURLWithPath: "/tmp").appendingPathComponent("ahs-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let socket = dir.appendingPathComponent("s.sock").path
        let server = try Subprocess.start(bin.appendingPathComponent("apphome-settings"), ["--root", t.root.path, "--socket", socket],
                                          environment: t.environment(), ioDirectory: t.io, timeout: 60)
        var stopped = false
        defer { if !stopped { server.kill() } }
        try #require(waitUntilListening(socket), "apphome-settings did not answer on \(socket)")
        let mode = try FileManager.default.attributesOfItem(atPath: socket)[.posixPermissions] as? Int
        #expect(mode.map { $0 & 0o077 } == 0, "socket mode \(String(mode ?? 0, radix: 8))")

        func curl(_ extra: [String: String]) throws -> CommandResult {
            var env = ProcessInfo.processInfo.environment
            env.merge(extra) { _, new in new }
            return try Subprocess.run(URL(fileURLWithPath: "/usr/bin/curl"),
                                      ["-s", "-w", "%{http_code}", "--unix-socket", socket, "http://proxy.example/api/apps"],
                                      environment: env, ioDirectory: t.io, timeout: 30)
        }
        // No cookie: refused, for that reason (the peer itself is served).
        let plain = try curl([:])
        #expect(plain.stdout.hasSuffix("403") && plain.stdout.contains("open the URL"), "\(plain)")
        let app = try curl(["APPHOME_BUNDLE_ID": "com.example.ScaryBugs"])
        #expect(app.stdout.hasSuffix("403") && app.stdout.contains("runs in the context of the app com.example.ScaryBugs"), "\(app)")

        server.kill(SIGTERM)
        let result = try server.finish()
        stopped = true
        #expect(result.status == 0 && !result.signaled, "\(result)")
        #expect(result.stdout.hasPrefix("unix:\(socket) /?token="), "\(result)")
        #expect(result.stderr.contains("refused a request: process") && result.stderr.contains("com.example.ScaryBugs"), "\(result)")
        #expect(!FileManager.default.fileExists(atPath: socket))
    }
}
