import AppHomeSystem
import CommandSupport
import Foundation
import TestSupport
import Testing
@testable import AppHomeCommand
import Containers
import Keychain
import Preferences

/// Runs `apphome` in process against a temporary root.
final class World: @unchecked Sendable {
    let base: String
    var root: String { base + "/root" }
    let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
    var v1: String { repo + "/examples/ScaryBugs-v1/ScaryBugs.app" }
    var v2: String { repo + "/examples/ScaryBugs-v2/ScaryBugs.app" }

    init() {
        base = ScratchDirectory.make("apphome-cmd")
    }

    deinit { ScratchDirectory.remove(base) }

    struct Result { var status: Int32; var out: String; var err: String }

    @discardableResult
    func apphome(_ args: String..., variables: [String: String] = ["PATH": "/usr/bin:/bin"], hookTimeout: Double = 10,
                 freeBytes: @escaping (String) throws(SystemError) -> UInt64 = ContainerManager.availableBytes) -> Result {
        apphome(args, variables: variables, hookTimeout: hookTimeout, freeBytes: freeBytes)
    }

    /// Runs `apphome --root <root> args…` in process; `prompter` answers `--password`.
    func apphome(_ args: [String], prompter: (any SecretPrompter)? = nil, variables: [String: String] = ["PATH": "/usr/bin:/bin"],
                 hookTimeout: Double = 10,
                 freeBytes: @escaping (String) throws(SystemError) -> UInt64 = ContainerManager.availableBytes) -> Result {
        let console = CapturingConsole()
        let status = AppHomeCommand.run(["--root", root] + args, environment: AppHomeEnvironment(configuration: Configuration(variable: { variables[$0] })),
                                        console: console, prompter: prompter, hookTimeout: hookTimeout, freeBytes: freeBytes)
        return Result(status: status, out: console.standardOutput, err: console.standardError)
    }

    func read(_ path: String) -> String? { FileManager.default.contents(atPath: path).map { String(decoding: $0, as: UTF8.self) } }
}

@Suite struct AppHomeCommandTests {
    @Test func installListInfoContainerUpdateUninstall() throws {
        let w = World()
        let installed = w.apphome("install", w.v1)
        #expect(installed.status == 0, "\(installed.err)")
        let app = w.apphome("container", "com.example.ScaryBugs").out
        let home = w.apphome("container", "com.example.ScaryBugs", "data").out.dropLast()
        #expect(app == home + "/ScaryBugs.app\n")
        #expect(installed.out == "installed com.example.ScaryBugs 1.0 (1) at \(home)\n")
        for (kind, suffix) in [("documents", "/Documents"), ("library", "/Library"), ("caches", "/Library/Caches"), ("tmp", "/tmp")] {
            #expect(w.apphome("container", "com.example.ScaryBugs", kind).out == home + suffix + "\n")
        }
        let list = w.apphome("list").out
        #expect(list == """
            BUNDLE ID              VERSION  NAME           HOME
            com.example.ScaryBugs  1.0 (1)  ScaryBugs.app  \(home)

            """)
        let json = try JSONSerialization.jsonObject(with: Data(w.apphome("list", "--json").out.utf8)) as? [[String: String]]
        #expect(json?.first?["bundleIdentifier"] == "com.example.ScaryBugs")
        #expect(json?.first?["home"] == String(home))
        #expect(json?.first?["shortVersion"] == "1.0")
        #expect(w.apphome("info", "com.example.ScaryBugs").out.contains("Display name: Scary Bugs\nVersion: 1.0\nBuild: 1\n"))

        // The app writes user data; the update keeps it.
        let run = w.apphome("run", "com.example.ScaryBugs", "--", String(app.dropLast()) + "/ScaryBugs")
        #expect(run.status == 0)
        let updated = w.apphome("update", w.v2)
        #expect(updated.status == 0, "\(updated.err)")
        let newHome = w.apphome("container", "com.example.ScaryBugs", "data").out.dropLast()
        #expect(newHome != home)
        #expect(updated.out.hasPrefix("updated com.example.ScaryBugs from 1.0 (1) to 2.0 (2) at \(newHome)\nmoved 4 item(s) of user data (0 bytes copied); bundle: "))
        #expect(w.read(newHome + "/Documents/launches.txt") == "launched version 1\n")
        #expect(!FileManager.default.fileExists(atPath: String(home)))

        let removed = w.apphome("uninstall", "com.example.ScaryBugs")
        #expect(removed.status == 0)
        #expect(removed.out == "uninstalled com.example.ScaryBugs 2.0 (2): removed \(newHome)\n")
        #expect(w.apphome("list").out == "BUNDLE ID  VERSION  NAME  HOME\n")
        #expect(w.apphome("list", "--json").out == "[]\n")
    }

    @Test(arguments: [
        (["install"], 255, "apphome: missing bundle path\n"),
        (["container", "com.example.ScaryBugs", "bogus"], 255,
         "apphome: unknown container kind 'bogus' (use app, data, documents, library, caches, tmp, groups)\n"),
        (["frobnicate"], 255, "apphome: unknown verb 'frobnicate'\n"),
        (["list", "extra"], 255, "apphome: unexpected argument 'extra'\n"),
        (["run", "com.example.ScaryBugs", "--"], 255, "apphome: missing command to run\n"),
        (["info", "com.example.ScaryBugs"], 1, "apphome: com.example.ScaryBugs is not installed\n"),
        (["container", "noDots"], 255,
         "apphome: invalid bundle identifier 'noDots': it must be reverse-DNS with at least two components, like com.example.App\n"),
        (["uninstall", "../evil"], 255, "apphome: invalid bundle identifier '../evil': it must not start or end with '.'\n"),
        (["install", "/nonexistent/X.app"], 1, "apphome: cannot use bundle /nonexistent/X.app: it is not a directory\n"),
        (["install", "/nonexistent/X"], 1, "apphome: cannot use bundle /nonexistent/X: the directory name must end in '.app'\n"),
    ] as [([String], Int32, String)])
    func errorsHaveFixedMessagesAndStatuses(_ args: [String], _ status: Int32, _ firstLine: String) {
        let w = World()
        let console = CapturingConsole()
        let result = AppHomeCommand.run(["--root", w.root] + args, environment: AppHomeEnvironment(), console: console)
        #expect(result == status)
        #expect(console.standardOutput.isEmpty)
        #expect(console.standardError.hasPrefix(firstLine))
        // A usage error is its reason and one line pointing at the help; no other failure has that line.
        let lines = console.standardError.split(separator: "\n")
        #expect(lines.count == (status == 255 ? 2 : 1), "\(console.standardError)")
        if status == 255 { #expect(lines.last?.hasPrefix("Run 'apphome help") == true, "\(console.standardError)") }
        #expect(!FileManager.default.fileExists(atPath: w.root + "/Applications/registry.plist"))
    }

    @Test func updateOfAnAppNotInstalledPointsAtInstall() {
        let w = World()
        let r = w.apphome("update", w.v2)
        #expect(r.status == 1)
        #expect(r.err == "apphome: com.example.ScaryBugs is not installed; use 'apphome install' first\n")
    }

    @Test func secondInstallPointsAtUpdate() {
        let w = World()
        w.apphome("install", w.v1)
        let r = w.apphome("install", w.v2)
        #expect(r.status == 1)
        #expect(r.err == "apphome: com.example.ScaryBugs is already installed; use 'apphome update' to install a new version\n")
    }

    @Test(arguments: [["help"], ["--help"], ["-h"]])
    func helpGoesToStandardOutput(_ args: [String]) {
        let console = CapturingConsole()
        #expect(AppHomeCommand.run(args, environment: AppHomeEnvironment(), console: console) == 0)
        #expect(console.standardOutput.hasPrefix("usage: apphome [--root DIR] <verb>"))
        #expect(console.standardError.isEmpty)
    }

    @Test func missingVerbIsAUsageError() {
        let console = CapturingConsole()
        #expect(AppHomeCommand.run([], environment: AppHomeEnvironment(), console: console) == 255)
        #expect(console.standardError.hasPrefix("apphome: missing verb\n\nusage: apphome"))
    }

    @Test(arguments: [
        (["APPHOME_ROOT": "/a", "XDG_DATA_HOME": "/x", "HOME": "/h"], "/a"),
        (["XDG_DATA_HOME": "/x", "HOME": "/h"], "/x/apphome"),
        (["XDG_DATA_HOME": "relative", "HOME": "/h"], "/h/.local/share/apphome"),
        (["HOME": "/h"], "/h/.local/share/apphome"),
        ([:], nil),
    ] as [([String: String], String?)])
    func rootComesFromTheEnvironment(_ variables: [String: String], _ root: String?) {
        #expect(AppHomeEnvironment(configuration: Configuration(variable: { variables[$0] })).defaultRoot() == root)
    }

    @Test func runPassesTheExitStatusThrough() {
        let w = World()
        w.apphome("install", w.v1)
        #expect(w.apphome("run", "com.example.ScaryBugs", "--", "/bin/sh", "-c", "exit 42").status == 42)
        #expect(w.apphome("run", "com.example.ScaryBugs", "/bin/sh", "-c", "test \"$PWD\" = \"$APPHOME_HOME\"").status == 0)
    }

    @Test func failingUninstallHookIsReportedOnStandardError() throws {
        let w = World()
        w.apphome("install", w.v1)
        let hooks = w.root + "/Hooks/uninstall.d"
        try FileManager.default.createDirectory(atPath: hooks, withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: hooks + "/50-fail", contents: Data("#!/bin/sh\nexit 2\n".utf8), attributes: [.posixPermissions: 0o755])
        let r = w.apphome("uninstall", "com.example.ScaryBugs")
        #expect(r.status == 0)
        #expect(r.err == "apphome: warning: uninstall hook \(hooks)/50-fail failed with exit status 2\n")
        #expect(w.apphome("list", "--json").out == "[]\n")
    }

    @Test func invalidBundleInstallsNothing() throws {
        let w = World()
        let bundle = w.base + "/Broken.app"
        try FileManager.default.createDirectory(atPath: bundle, withIntermediateDirectories: true)
        let r = w.apphome("install", bundle)
        #expect(r.status == 1)
        #expect(r.err == "apphome: cannot use bundle \(bundle): Info.plist is missing\n")
        #expect(((try? FileManager.default.contentsOfDirectory(atPath: w.root + "/Applications")) ?? []).filter { $0.count == 36 }.isEmpty)
    }
}
