import Foundation
import Testing

/// `defaults --synced`, `apphome sync` and `uninstall --forget-synced` with the built
/// binaries, no engine: two roots whose sync folders the test copies between.
@Suite("synced key-value stores from the shell")
struct SyncedStoreCommandTests {
    let a: TempRoot
    let b: TempRoot
    init() throws {
        a = try TempRoot()
        b = try TempRoot()
    }

    func tool(_ root: TempRoot, _ name: String, _ args: [String]) throws -> CommandResult {
        try Subprocess.run(try TestDaemon.binary(name), ["--root", root.root.path] + args,
                           environment: root.environment(["APPHOME_KEYCHAIN_KEY_STORE": "file"]), ioDirectory: root.io)
    }

    @discardableResult
    func ok(_ root: TempRoot, _ name: String, _ args: String...) throws -> String {
        let r = try tool(root, name, args)
        try #require(r.status == 0, "\(name) \(args.joined(separator: " ")): \(r)")
        return r.stdout
    }

    /// A bundle claiming `store` (raw, placeholders allowed), signed with `key` when given.
    func bundle(_ dir: String, store: String, key: String?) throws -> String {
        let app = a.workFile(dir).appendingPathComponent("Notes.app")
        try FileManager.default.createDirectory(at: app, withIntermediateDirectories: true)
        try Data("{ CFBundleIdentifier = com.example.Notes; CFBundleVersion = 1; \"com.apple.developer.ubiquity-kvstore-identifier\" = \"\(store)\"; }\n".utf8)
            .write(to: app.appendingPathComponent("Info.plist"))
        try Data("#!/bin/sh\n".utf8).write(to: app.appendingPathComponent("Notes"))
        if let key { try ok(a, "apphome", "sign", app.path, "--key", key) }
        return app.path
    }

    @Test func theShellReadsWritesAndSyncsOnlyAGrantedStoreWithinItsLimits() throws {
        let key = a.workFile("team.key").path
        let team = try #require(try ok(a, "apphome", "keygen", key).split(separator: "\n").first?.split(separator: " ").last.map(String.init))
        let store = team + ".com.example.Notes"

        // An unsigned bundle cannot claim a store.
        let unsigned = try bundle("unsigned", store: store, key: nil)
        let refused = try tool(a, "apphome", ["install", unsigned])
        #expect(refused.status == 1 && refused.stderr.contains("unsigned"), "\(refused)")

        let app = try bundle("signed", store: "$(TeamIdentifierPrefix)com.example.Notes", key: key)
        try ok(a, "apphome", "install", app)
        try ok(b, "apphome", "install", app)
        let folderA = a.workFile("folderA"), folderB = b.workFile("folderB")
        for f in [folderA, folderB] { try FileManager.default.createDirectory(at: f, withIntermediateDirectories: true) }
        try ok(a, "apphome", "sync", "setup", folderA.path)
        try ok(b, "apphome", "sync", "setup", folderB.path)

        try ok(a, "defaults", "--synced", "write", store, "fontSize", "-int", "14")
        try ok(a, "defaults", "--synced", "write", store, "ratio", "-float", "1.5")
        try ok(a, "defaults", "--synced", "write", store, "tags", "-array", "a", "b")
        #expect(try ok(a, "defaults", "--synced", "read-type", store, "ratio") == "Type is float\n")
        // Ordinary domains are never synced: no app is granted "com.example.Notes" as a store.
        let plain = try tool(a, "defaults", ["--synced", "write", "com.example.Notes", "k", "1"])
        #expect(plain.status == 1 && plain.stderr.contains("no installed app's signature grants"), "\(plain)")
        let long = try tool(a, "defaults", ["--synced", "write", store, String(repeating: "k", count: 65), "1"])
        #expect(long.status == 1 && long.stderr.contains("quota violation"), "\(long)")

        for name in try FileManager.default.contentsOfDirectory(atPath: folderA.path) {
            try FileManager.default.copyItem(at: folderA.appendingPathComponent(name), to: folderB.appendingPathComponent(name))
        }
        // A hostile log beside it is skipped with a warning; the pass still merges the good one.
        try Data("garbage".utf8).write(to: folderB.appendingPathComponent("0123456789ABCDEF0123456789ABCDEF.kvlog"))
        let pass = try tool(b, "apphome", ["sync", "now"])
        #expect(pass.status == 1, "\(pass)")
        #expect(pass.stderr.contains("skipped the sync log 0123456789ABCDEF0123456789ABCDEF.kvlog"))
        // With a prefsd per root (APPHOME_TEST_PREFSD=daemon) it may have merged them first.
        if !TempRoot.daemonMode { #expect(pass.stdout.contains("3 key(s) changed (initial sync)")) }
        #expect(try ok(b, "defaults", "--synced", "read", store, "fontSize") == "14\n")
        #expect(try ok(b, "defaults", "--synced", "read", store, "tags") == "(\n    a,\n    b\n)\n")
        let status = try ok(b, "apphome", "sync", "status")
        #expect(status.contains("store \(store): 3 key(s)"))

        // Uninstall keeps the values elsewhere; --forget-synced removes them everywhere.
        try ok(a, "apphome", "uninstall", "com.example.Notes", "--forget-synced")
        for name in try FileManager.default.contentsOfDirectory(atPath: folderA.path) {
            try? FileManager.default.removeItem(at: folderB.appendingPathComponent(name))
            try FileManager.default.copyItem(at: folderA.appendingPathComponent(name), to: folderB.appendingPathComponent(name))
        }
        try FileManager.default.removeItem(at: folderB.appendingPathComponent("0123456789ABCDEF0123456789ABCDEF.kvlog"))
        try ok(b, "apphome", "sync", "now")
        #expect(try tool(b, "defaults", ["--synced", "read", store]).status == 1)
        let home = try ok(b, "apphome", "container", "com.example.Notes", "data").trimmingCharacters(in: .newlines)
        #expect(!FileManager.default.fileExists(atPath: home + "/Library/SyncedPreferences/\(store).plist"))
    }
}
