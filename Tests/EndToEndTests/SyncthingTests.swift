import Foundation
import Testing

/// Settings on every machine, through a real engine: two Syncthing instances on 127.0.0.1
/// (scripts/syncthing-pair.sh: each its own home, loopback addresses, no discovery, relays or
/// NAT, devices and the folder introduced through the REST API, scans asked for through it),
/// two AppHome roots with one signed app whose signature grants a key-value store, each root's
/// sync folder one side of the pair. Root B runs prefsd, which merges on arrival; root A runs
/// `apphome sync now`. Started once for the suite, ended by pid.
@Suite("synced key-value stores through Syncthing", .serialized, .disabled(if: TempRoot.daemonMode, "starts its own prefsd"))
struct SyncthingTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let script = repository.appendingPathComponent("scripts/syncthing-pair.sh").path

    let a: TempRoot
    let b: TempRoot
    let pair: URL

    init() throws {
        a = try TempRoot()
        b = try TempRoot()
        pair = a.base.appendingPathComponent("syncthing")
    }

    @discardableResult
    func pairCommand(_ args: String...) throws -> CommandResult {
        let r = try Subprocess.run(URL(fileURLWithPath: "/bin/bash"), [Self.script] + args.map { $0 == "DIR" ? pair.path : $0 },
                                   environment: ["PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin", "HOME": a.home.path],
                                   ioDirectory: a.io, timeout: 60)
        try #require(r.status == 0, "syncthing-pair.sh \(args.joined(separator: " ")): \(r)")
        return r
    }

    func tool(_ root: TempRoot, _ name: String, _ args: [String]) throws -> CommandResult {
        try Subprocess.run(try TestDaemon.binary(name), ["--root", root.root.path] + args,
                           environment: root.environment(["APPHOME_KEYCHAIN_KEY_STORE": "file", "APPHOME_PREFSD": "off"]), ioDirectory: root.io)
    }

    func ok(_ root: TempRoot, _ name: String, _ args: String...) throws -> String {
        let r = try tool(root, name, args)
        try #require(r.status == 0, "\(name) \(args.joined(separator: " ")): \(r)")
        return r.stdout
    }

    /// Waits until `read` returns what `want` accepts (20 s at most), running `step` between tries.
    func eventually(_ what: String, _ read: () throws -> String, step: () throws -> Void = {}, _ want: (String) -> Bool) throws -> String {
        let deadline = Date().addingTimeInterval(20)
        var last = ""
        while Date() < deadline {
            last = try read()
            if want(last) { return last }
            try step()
            usleep(100_000)
        }
        Issue.record("\(what): still '\(last)' after 20 s")
        return last
    }

    func conflictCopies(_ folder: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.contains(".sync-conflict-") }
    }

    @Test func aWriteOnOneRootIsReadOnTheOtherAndConcurrentWritesConvergeAfterReconnection() throws {
        try pairCommand("start", "DIR")
        defer { _ = try? pairCommand("stop", "DIR") }
        let folderA = pair.appendingPathComponent("a/folder"), folderB = pair.appendingPathComponent("b/folder")

        // One signed app, installed in both roots, granted one key-value store.
        let key = a.workFile("team.key").path
        let team = try #require(try ok(a, "apphome", "keygen", key).split(separator: "\n").first?.split(separator: " ").last.map(String.init))
        let app = a.workFile("Notes.app")
        try FileManager.default.createDirectory(at: app, withIntermediateDirectories: true)
        try Data("{ CFBundleIdentifier = com.example.Notes; CFBundleVersion = 1; \"com.apple.developer.ubiquity-kvstore-identifier\" = \"$(TeamIdentifierPrefix)com.example.Notes\"; }\n".utf8)
            .write(to: app.appendingPathComponent("Info.plist"))
        try Data("#!/bin/sh\n".utf8).write(to: app.appendingPathComponent("Notes"))
        _ = try ok(a, "apphome", "sign", app.path, "--key", key)
        _ = try ok(a, "apphome", "install", app.path)
        _ = try ok(b, "apphome", "install", app.path)
        let store = team + ".com.example.Notes"
        _ = try ok(a, "apphome", "sync", "setup", folderA.path)
        _ = try ok(b, "apphome", "sync", "setup", folderB.path)
        let daemon = try TestDaemon(b)
        defer { _ = try? daemon.stop() }

        // A write on A is read on B: Syncthing carries A's log, B's prefsd merges it.
        _ = try ok(a, "defaults", "--synced", "write", store, "fontSize", "-int", "14")
        try pairCommand("scan", "DIR", "a")
        let seen = try eventually("fontSize on B", { try tool(b, "defaults", ["--synced", "read", store, "fontSize"]).stdout }) { $0 == "14\n" }
        #expect(seen == "14\n")
        // The app's own copy in its home on B holds it too.
        let homeB = try ok(b, "apphome", "container", "com.example.Notes", "data").trimmingCharacters(in: .newlines)
        #expect(FileManager.default.fileExists(atPath: homeB + "/Library/SyncedPreferences/\(store).plist"))

        // Disconnected, both write one key; after reconnection both end with one winner.
        try pairCommand("pause", "DIR", "a")
        try pairCommand("pause", "DIR", "b")
        _ = try ok(a, "defaults", "--synced", "write", store, "theme", "dark")
        usleep(20_000)
        _ = try ok(b, "defaults", "--synced", "write", store, "theme", "light")
        // Really apart: B's change cannot reach A while the devices are paused.
        try pairCommand("scan", "DIR", "b")
        usleep(1_500_000)
        _ = try ok(a, "apphome", "sync", "now")
        #expect(try tool(a, "defaults", ["--synced", "read", store, "theme"]).stdout == "dark\n")
        try pairCommand("resume", "DIR", "a")
        try pairCommand("resume", "DIR", "b")
        try pairCommand("wait-connected", "DIR")
        try pairCommand("scan", "DIR", "a")
        try pairCommand("scan", "DIR", "b")
        // B's write is the later one (same machine clock, 20 ms on): it wins on both.
        let onA = try eventually("theme on A", { try tool(a, "defaults", ["--synced", "read", store, "theme"]).stdout },
                                 step: { _ = try tool(a, "apphome", ["sync", "now"]) }) { $0 == "light\n" }
        let onB = try eventually("theme on B", { try tool(b, "defaults", ["--synced", "read", store, "theme"]).stdout }) { $0 == "light\n" }
        #expect(onA == "light\n" && onB == "light\n")
        #expect(try tool(a, "defaults", ["--synced", "read", store, "fontSize"]).stdout == "14\n")
        // Each device wrote only its own log: Syncthing had nothing to conflict on.
        #expect(try conflictCopies(folderA).isEmpty)
        #expect(try conflictCopies(folderB).isEmpty)
    }
}
