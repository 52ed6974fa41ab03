import Foundation
import Testing

/// Where domains live, who may read them, and what happens to bad names and bad files.
@Suite("domain files")
struct DomainFileTests {
    private func exists(_ url: URL) -> Bool { FileManager.default.fileExists(atPath: url.path) }

    @Test func namedAndGlobalDomainsLiveUnderLibraryPreferences() throws {
        let root = try TempRoot()
        try root.succeed(["write", "com.example.app", "k", "v"])
        try root.succeed(["write", "-g", "k", "g1"])
        try root.succeed(["write", "-globalDomain", "k2", "g2"])
        try root.succeed(["write", "NSGlobalDomain", "k3", "g3"])
        try root.expectPlist(root.domainFile("com.example.app"), equals: "{'k': 'v'}")
        try root.expectPlist(root.globalFile, equals: "{'k': 'g1', 'k2': 'g2', 'k3': 'g3'}")
    }

    @Test func filesAre0600AndDirectories0700() throws {
        let root = try TempRoot()
        try root.succeed(["write", "com.example.app", "k", "v"])
        try root.succeed(["-currentHost", "write", "com.example.app", "k", "v"])
        #expect(root.permissions(of: root.domainFile("com.example.app")) == 0o600)
        for directory in [root.root, root.root.appendingPathComponent("Library"), root.preferences, root.byHost] {
            #expect(root.permissions(of: directory) == 0o700, "\(directory.path)")
        }
        let byHostFiles = try FileManager.default.contentsOfDirectory(atPath: root.byHost.path)
        for name in byHostFiles where !name.hasPrefix(".") {
            #expect(root.permissions(of: root.byHost.appendingPathComponent(name)) == 0o600, "\(name)")
        }
    }

    @Test func hostIdentifierIsAStableUppercaseUUID() throws {
        let root = try TempRoot()
        let first = try root.succeed(["printHostIdentifier"]).stdout
        let second = try root.succeed(["printhostidentifier"]).stdout
        #expect(first == second)
        let id = first.trimmingCharacters(in: .newlines)
        #expect(first == id + "\n")
        #expect(UUID(uuidString: id) != nil && id == id.uppercased(), "not an uppercase UUID: \(id)")
        let other = try TempRoot()
        #expect(try other.succeed(["printHostIdentifier"]).stdout != first, "each root keeps its own identifier")
    }

    @Test func currentHostAndHostUseByHostFiles() throws {
        let root = try TempRoot()
        let id = try root.succeed(["printHostIdentifier"]).stdout.trimmingCharacters(in: .newlines)
        try root.succeed(["-currentHost", "write", "com.example.app", "k", "current"])
        try root.succeed(["-host", "otherbox", "write", "com.example.app", "k", "other"])
        try root.succeed(["-currentHost", "write", "-g", "k", "global"])
        try root.expectPlist(root.byHost.appendingPathComponent("com.example.app.\(id).plist"), equals: "{'k': 'current'}")
        try root.expectPlist(root.byHost.appendingPathComponent("com.example.app.otherbox.plist"), equals: "{'k': 'other'}")
        try root.expectPlist(root.byHost.appendingPathComponent(".GlobalPreferences.\(id).plist"), equals: "{'k': 'global'}")
        #expect(!exists(root.domainFile("com.example.app")), "ByHost writes must not touch the plain domain")
        try root.expectOutput(["-currentHost", "read", "com.example.app", "k"], "current\n")
        try root.expectOutput(["-host", "otherbox", "read", "com.example.app", "k"], "other\n")
        let plain = try root.run(["read", "com.example.app"])
        #expect(plain.isFailure(1), "\(plain)")
    }

    @Test func absolutePathDomainsNameAPlistFile() throws {
        let root = try TempRoot()
        let bare = root.work.appendingPathComponent("settings")
        try root.succeed(["write", bare.path, "k", "-int", "5"])
        let file = root.work.appendingPathComponent("settings.plist")
        try root.expectPlist(file, equals: "{'k': 5}")
        #expect(try Data(contentsOf: file).starts(with: Data("bplist00".utf8)))
        try root.expectOutput(["read", file.path, "k"], "5\n")
        try root.expectOutput(["read", bare.path, "k"], "5\n")
        try root.succeed(["write", file.path, "j", "x"])
        try root.expectPlist(file, equals: "{'k': 5, 'j': 'x'}")
        #expect(!exists(root.work.appendingPathComponent("settings.plist.plist")))
        #expect(!exists(root.root), "an absolute path domain does not touch the root")
    }

    struct RootCase: Sendable, CustomTestStringConvertible {
        var name: String
        var useOption: Bool
        var useVariable: Bool
        var useXDG: Bool
        var testDescription: String { name }
    }

    /// `--root` > `APPHOME_ROOT` > `$XDG_DATA_HOME/apphome` > `$HOME/.local/share/apphome`.
    @Test(arguments: [
        RootCase(name: "--root beats everything", useOption: true, useVariable: true, useXDG: true),
        RootCase(name: "APPHOME_ROOT beats XDG_DATA_HOME", useOption: false, useVariable: true, useXDG: true),
        RootCase(name: "XDG_DATA_HOME/apphome", useOption: false, useVariable: false, useXDG: true),
        RootCase(name: "HOME/.local/share/apphome", useOption: false, useVariable: false, useXDG: false),
    ])
    func theRootIsChosenInOrder(_ row: RootCase) throws {
        let t = try TempRoot()
        let optionRoot = t.base.appendingPathComponent("option-root")
        let variableRoot = t.base.appendingPathComponent("variable-root")
        let xdgRoot = t.dataHome.appendingPathComponent("apphome")
        let homeRoot = t.home.appendingPathComponent(".local/share/apphome")
        var arguments = ["write", "com.example.where", "k", "v"]
        if row.useOption { arguments = ["--root", optionRoot.path] + arguments }
        var env = row.useVariable ? ["APPHOME_ROOT": variableRoot.path] : [:]
        // No prefsd serves these roots: auto mode falls back to the files (in daemon runs too).
        env["APPHOME_PREFSD"] = "auto"
        let result = try t.run(arguments, env: env, unsetting: row.useXDG ? [] : ["XDG_DATA_HOME"],
                               passRoot: false)
        #expect(result.status == 0 && result.stderr.isEmpty, "\(result)")
        let expected = row.useOption ? optionRoot : row.useVariable ? variableRoot : row.useXDG ? xdgRoot : homeRoot
        for candidate in [optionRoot, variableRoot, xdgRoot, homeRoot] {
            let file = candidate.appendingPathComponent("Library/Preferences/com.example.where.plist")
            #expect(exists(file) == (candidate == expected), "\(file.path)")
        }
    }

    @Test(arguments: ["..", "../escape", "a/b", "com.example/../../x", "", "foo/..", "./x"])
    func invalidDomainNamesAreRefusedBeforeAnyFileIsTouched(_ name: String) throws {
        let root = try TempRoot()
        try root.succeed(["write", "com.example.app", "k", "v"])
        let before = root.snapshot()
        for arguments in [["write", name, "k", "v"], ["read", name], ["read", name, "k"], ["delete", name],
                          ["import", name, "-"], ["rename", name, "a", "b"]] {
            let result = try root.run(arguments, stdin: Data("{a = 1;}".utf8))
            #expect(result.isFailure(1), "\(arguments): \(result)")
            #expect(result.stderr.contains("Invalid domain name"), "\(arguments): \(result)")
        }
        root.expectUnchanged(since: before, after: "invalid domain \(name)")
        let outside = try FileManager.default.contentsOfDirectory(atPath: root.base.path).sorted()
        #expect(outside == ["home", "io", "root", "run", "work", "xdg-config", "xdg-data"])
    }

    @Test(arguments: ["../escape", "a/b"])
    func hostNamesCannotLeadOutOfByHost(_ host: String) throws {
        let root = try TempRoot()
        try root.succeed(["write", "com.example.app", "k", "v"])
        let before = root.snapshot()
        let result = try root.run(["-host", host, "write", "com.example.app", "k", "v"])
        #expect(result.status != 0 && !result.signaled && result.stderr.hasPrefix("defaults: "), "\(result)")
        root.expectUnchanged(since: before, after: "-host \(host)")
        #expect(!exists(root.preferences.appendingPathComponent("com.example.app.escape.plist")))
    }

    struct CorruptCase: Sendable, CustomTestStringConvertible {
        var name: String
        var bytes: [UInt8]
        var testDescription: String { name }
    }

    @Test(arguments: [
        CorruptCase(name: "binary header, garbage body", bytes: Array("bplist00\u{1}\u{2}garbage".utf8)),
        CorruptCase(name: "truncated XML", bytes: Array("<?xml version=\"1.0\"?><plist><dict><key>a</key>".utf8)),
        CorruptCase(name: "unterminated text", bytes: Array("{ a = (1, 2;".utf8)),
        CorruptCase(name: "not a dictionary", bytes: Array("(a, b)".utf8)),
        CorruptCase(name: "random bytes", bytes: (0..<256).map { (i: Int) -> UInt8 in UInt8((i * 37 + 11) % 256) }),
    ])
    func corruptDomainFilesAreReportedAndNeverRewritten(_ row: CorruptCase) throws {
        let root = try TempRoot()
        try root.succeed(["write", "com.example.app", "k", "v"])
        let file = root.domainFile("com.example.app")
        try Data(row.bytes).write(to: file)
        let before = root.snapshot()
        for arguments in [["read", "com.example.app"], ["read", "com.example.app", "k"],
                          ["write", "com.example.app", "k", "new"], ["delete", "com.example.app", "k"],
                          ["rename", "com.example.app", "k", "j"], ["import", "com.example.app", "-"],
                          ["export", "com.example.app", "-"]] {
            let result = try root.run(arguments, stdin: Data("{a = 1;}".utf8))
            #expect(result.isFailure(1), "\(arguments): \(result)")
            #expect(result.stderr.contains("Could not read domain") && result.stderr.contains(file.path),
                    "\(arguments): \(result)")
        }
        root.expectUnchanged(since: before, after: row.name)
    }
}
