import Foundation
import Testing

/// How `defaults` chooses between prefsd and the files, and `defaults watch`.
@Suite("prefsd modes and watch")
struct PrefsdModeTests {
    static let domain = "com.example.modes"

    @Test func autoFallsBackToTheFilesWhenNoPrefsdAnswers() throws {
        let t = try TempRoot()
        let env = ["APPHOME_PREFSD": "auto", "APPHOME_SOCKET": t.base.appendingPathComponent("none.sock").path]
        try t.succeed(["write", Self.domain, "k", "-int", "1"], env: env)
        try t.expectPlist(t.domainFile(Self.domain), equals: "{'k': 1}")
    }

    @Test(arguments: [
        (["APPHOME_PREFSD": "require", "APPHOME_SOCKET": "/nonexistent/prefsd.sock"],
         "defaults: prefsd is not answering on /nonexistent/prefsd.sock: No such file or directory\n"),
        (["APPHOME_PREFSD": "sometimes"], "defaults: APPHOME_PREFSD is \"sometimes\"; use off, auto or require\n"),
    ])
    func aModeThatCannotBeHonouredFailsAndWritesNothing(env: [String: String], message: String) throws {
        let t = try TempRoot()
        let before = t.snapshot()
        let result = try t.run(["write", Self.domain, "k", "-int", "1"], env: env)
        #expect(result.isFailure(1), "\(result)")
        #expect(result.stderr == message)
        t.expectUnchanged(since: before, after: "defaults write")
    }

    @Test func requireWithADaemonOfAnotherRootFails() throws {
        let t = try TempRoot()
        let daemon = try TestDaemon(t)
        let other = t.base.appendingPathComponent("other-root").path
        let result = try t.run(["--root", other, "write", Self.domain, "k", "1"], env: daemon.environment, passRoot: false)
        #expect(result.stderr == "defaults: prefsd serves the root \(t.root.path), not \(other)\n", "\(result)")
        #expect(result.status == 1)
    }

    @Test func bothModesGiveTheSameFileAndOutput() throws {
        let t = try TempRoot()
        let daemon = try TestDaemon(t)
        let steps: [[String]] = [
            ["write", Self.domain, "a", "-int", "1"], ["write", Self.domain, "b", "-array", "x", "y"],
            ["write", Self.domain, "b", "-array-add", "z"], ["rename", Self.domain, "a", "c"],
            ["delete", Self.domain, "missing"], ["read", Self.domain], ["read-type", Self.domain, "c"],
        ]
        var outputs: [String: [String]] = [:]
        var files: [String: Data] = [:]
        for mode in ["off", "daemon"] {
            let env = mode == "off" ? ["APPHOME_PREFSD": "off"] : daemon.environment
            let domain = Self.domain
            _ = try t.run(["delete", domain], env: env)
            outputs[mode] = try steps.map { step in
                let r = try t.run(step, env: env)
                return "\(r.status) \(r.stdout) \(r.stderr)"
            }
            files[mode] = try Data(contentsOf: t.domainFile(domain))
        }
        #expect(outputs["off"] == outputs["daemon"])
        #expect(files["off"] == files["daemon"])
    }

    @Test(arguments: ["daemon", "files"])
    func watchPrintsChangesFromEveryWriterWithOrWithoutPrefsd(_ mode: String) throws {
        let t = try TempRoot()
        let daemon = mode == "daemon" ? try TestDaemon(t) : nil
        let env = daemon?.environment ?? ["APPHOME_PREFSD": "off"]
        try t.succeed(["write", Self.domain, "volume", "-int", "1"], env: env)
        let watch = try t.start(["watch", Self.domain], env: env)
        let keyWatch = try t.start(["watch", Self.domain, "volume"], env: env)
        usleep(300_000)
        try t.succeed(["write", Self.domain, "volume", "-int", "2"], env: env)
        try t.succeed(["write", Self.domain, "name", "hello world"], env: env)
        // A direct edit of the file, with no defaults involved: noticed through inotify.
        try t.writePlist("{'volume': 3}", to: t.domainFile(Self.domain))
        usleep(500_000)
        // The output is flushed line by line, so a kill loses none of it.
        watch.kill(SIGKILL)
        keyWatch.kill(SIGKILL)
        let all = try watch.finish(), one = try keyWatch.finish()
        #expect(all.signaled && all.status == SIGKILL && all.stderr.isEmpty, "\(all)")
        #expect(all.stdout == "volume = 2\nname = \"hello world\"\nname deleted\nvolume = 3\n", "\(all)")
        #expect(one.stdout == "volume = 2\nvolume = 3\n", "\(one)")
    }

    @Test(arguments: ["daemon", "files"])
    func aFileCaughtHalfWrittenIsReadAgainWhenItIsDone(_ mode: String) throws {
        let t = try TempRoot()
        let daemon = mode == "daemon" ? try TestDaemon(t) : nil
        let env = daemon?.environment ?? ["APPHOME_PREFSD": "off"]
        try t.succeed(["write", Self.domain, "volume", "-int", "1"], env: env)
        let watch = try t.start(["watch", Self.domain], env: env)
        usleep(300_000)
        // A writer that truncates the file in place, then fills it: the empty
        // file cannot be read; the finished one must still be reported.
        let file = t.domainFile(Self.domain)
        let handle = try FileHandle(forWritingTo: file)
        try handle.truncate(atOffset: 0)
        try handle.close()
        usleep(300_000)
        let plist = try PropertyListSerialization.data(fromPropertyList: ["volume": 7], format: .binary, options: 0)
        let again = try FileHandle(forWritingTo: file)
        try again.write(contentsOf: plist)
        try again.close()
        usleep(500_000)
        watch.kill(SIGKILL)
        let seen = try watch.finish()
        #expect(seen.signaled && seen.stderr.isEmpty, "\(seen)")
        #expect(seen.stdout == "volume = 7\n", "\(seen)")
    }

    @Test func withNoPrefsdAnsweringWatchWaitsForTheDomainsDirectoryAndFile() throws {
        let t = try TempRoot()
        let env = ["APPHOME_PREFSD": "auto", "APPHOME_SOCKET": t.base.appendingPathComponent("none.sock").path]
        #expect(!FileManager.default.fileExists(atPath: t.preferences.path))
        let watch = try t.start(["watch", Self.domain], env: env)
        usleep(300_000)
        try t.succeed(["write", Self.domain, "volume", "-int", "1"], env: env)
        usleep(800_000)
        try t.succeed(["delete", Self.domain], env: env)
        usleep(500_000)
        watch.kill(SIGKILL)
        let result = try watch.finish()
        #expect(result.stderr.isEmpty, "\(result)")
        #expect(result.stdout == "volume = 1\nvolume deleted\n", "\(result)")
    }

    @Test func watchWithRequireAndNoPrefsdFails() throws {
        let t = try TempRoot()
        let socket = t.base.appendingPathComponent("none.sock").path
        let result = try t.run(["watch", Self.domain], env: ["APPHOME_PREFSD": "require", "APPHOME_SOCKET": socket])
        #expect(result.isFailure(1))
        #expect(result.stderr == "defaults: prefsd is not answering on \(socket): No such file or directory\n")
    }

    @Test func socketActivationServesTheInheritedSocket() throws {
        let t = try TempRoot()
        let socket = t.base.appendingPathComponent("activated.sock").path
        let prefsd = try TestDaemon.binary("prefsd").path
        // systemd's part, in python: bind and listen, then exec prefsd with the socket as fd 3.
        let script = """
            import os, socket, time, signal
            s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(16)
            pid = os.fork()
            if pid == 0:
                os.dup2(s.fileno(), 3)
                os.set_inheritable(3, True)
                env = dict(os.environ, LISTEN_PID=str(os.getpid()), LISTEN_FDS='1')
                os.execve(sys.argv[2], [sys.argv[2], '--root', sys.argv[3], '--socket', sys.argv[1]], env)
            s.close()
            time.sleep(0.3)
            ok = os.system('APPHOME_PREFSD=require APPHOME_SOCKET=%s %s --root %s write com.example.activated k -int 7'
                           % (sys.argv[1], sys.argv[4], sys.argv[3])) == 0
            os.kill(pid, signal.SIGTERM)
            _, status = os.waitpid(pid, 0)
            report(ok and os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0 and os.path.exists(sys.argv[1]),
                   'write ok %s, status %d' % (ok, status))
            """
        let defaults = try DefaultsBinary.url().path
        try t.pythonCheck(script, [socket, prefsd, t.root.path, defaults])
        try t.expectPlist(t.domainFile("com.example.activated"), equals: "{'k': 7}")
    }
}

/// `apphome uninstall` through prefsd: same output, and watchers of the app's domain hear of it.
@Suite("apphome uninstall through prefsd")
struct UninstallThroughPrefsdTests {
    static let bundleID = InstalledAppTests.bundleID

    func apphome(_ root: TempRoot, _ arguments: [String], env: [String: String]) throws -> CommandResult {
        try Subprocess.run(try TestDaemon.binary("apphome"), ["--root", root.root.path] + arguments,
                           environment: root.environment(env), ioDirectory: root.io)
    }

    @Test func uninstallGoesThroughPrefsdAndWatchersSeeTheDomainGo() throws {
        let t = try TempRoot()
        let daemon = try TestDaemon(t)
        let bundle = InstalledAppTests.examples.appendingPathComponent("ScaryBugs-v1/ScaryBugs.app").path
        try #require(try apphome(t, ["install", bundle], env: daemon.environment).status == 0)
        try t.succeed(["write", Self.bundleID, "maxBugs", "-int", "12"], env: daemon.environment)
        let watch = try t.start(["watch", Self.bundleID], env: daemon.environment)
        usleep(300_000)
        let home = try apphome(t, ["container", Self.bundleID, "data"], env: daemon.environment).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let result = try apphome(t, ["uninstall", Self.bundleID], env: daemon.environment)
        #expect(result.status == 0 && result.stderr.isEmpty, "\(result)")
        #expect(result.stdout == "uninstalled \(Self.bundleID) 1.0 (1): removed \(home)\n", "\(result)")
        usleep(300_000)
        watch.kill(SIGKILL)
        #expect(try watch.finish().stdout == "maxBugs deleted\n")
        let again = try apphome(t, ["uninstall", Self.bundleID], env: daemon.environment)
        let direct = try apphome(t, ["uninstall", Self.bundleID], env: ["APPHOME_PREFSD": "off"])
        #expect(again.status == 1 && again.stderr == direct.stderr, "\(again) vs \(direct)")
    }

    @Test func aHookRunThroughPrefsdGetsOnlyTheAllowedVariablesOfItsCaller() throws {
        let t = try TempRoot()
        let daemon = try TestDaemon(t)
        let bundle = InstalledAppTests.examples.appendingPathComponent("ScaryBugs-v1/ScaryBugs.app").path
        try #require(try apphome(t, ["install", bundle], env: daemon.environment).status == 0)
        let hooks = t.root.appendingPathComponent("Hooks/uninstall.d")
        try FileManager.default.createDirectory(at: hooks, withIntermediateDirectories: true)
        let seen = t.base.appendingPathComponent("hook-environment.txt")
        let hook = hooks.appendingPathComponent("10-record")
        try "#!/bin/sh\nenv > '\(seen.path)'\n".write(to: hook, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: hook.path)
        var env = daemon.environment
        env["TZ"] = "Etc/GMT+3"
        env["APPHOME_TEST_NOT_FOR_HOOKS"] = "leaked"
        let result = try apphome(t, ["uninstall", Self.bundleID], env: env)
        #expect(result.status == 0 && result.stderr.isEmpty, "\(result)")
        let lines = Set(try String(contentsOf: seen, encoding: .utf8).split(separator: "\n").map(String.init))
        // Allowed: TZ, LANG, HOME, PATH of the caller; the uninstall's own APPHOME_ variables.
        #expect(lines.contains("TZ=Etc/GMT+3") && lines.contains("LANG=C.UTF-8"), "\(lines)")
        #expect(lines.contains("APPHOME_BUNDLE_ID=\(Self.bundleID)"), "\(lines)")
        // Not allowed: anything else the caller had, down to its prefsd settings.
        #expect(!lines.contains { $0.hasPrefix("APPHOME_TEST_NOT_FOR_HOOKS=") || $0.hasPrefix("XDG_DATA_HOME=") || $0.hasPrefix("APPHOME_SOCKET=") }, "\(lines)")
    }

    @Test(arguments: ["daemon", "files"])
    func aWatcherFollowsTheDomainIntoAHomeAndBackWhenAppsComeAndGo(_ mode: String) throws {
        let t = try TempRoot()
        let daemon = mode == "daemon" ? try TestDaemon(t) : nil
        let env = daemon?.environment ?? ["APPHOME_PREFSD": "off"]
        let bundle = InstalledAppTests.examples.appendingPathComponent("ScaryBugs-v1/ScaryBugs.app").path
        try t.succeed(["write", Self.bundleID, "beforeInstall", "-int", "1"], env: env)
        let watch = try t.start(["watch", Self.bundleID], env: env)
        usleep(300_000)
        // Installed without the service: the domain now lives in the new home.
        try #require(try apphome(t, ["install", bundle], env: ["APPHOME_PREFSD": "off"]).status == 0)
        usleep(300_000)
        try t.succeed(["write", Self.bundleID, "maxBugs", "-int", "12"], env: env)
        usleep(300_000)
        // Uninstalled without the service: the domain is the root's file again.
        try #require(try apphome(t, ["uninstall", Self.bundleID], env: ["APPHOME_PREFSD": "off"]).status == 0)
        usleep(500_000)
        watch.kill(SIGKILL)
        let seen = try watch.finish()
        let lines = seen.stdout.split(separator: "\n").map(String.init)
        #expect(Array(lines.prefix(2)) == ["beforeInstall deleted", "maxBugs = 12"], "\(seen)")
        // The uninstall removes the home's file and moves the domain back: one
        // notification or two (the home's file going first), the same state.
        #expect(Set(lines.dropFirst(2)) == ["beforeInstall = 1", "maxBugs deleted"] && lines.count == 4, "\(seen)")
    }

    @Test func requireWithoutPrefsdLeavesTheAppInstalled() throws {
        let t = try TempRoot()
        let bundle = InstalledAppTests.examples.appendingPathComponent("ScaryBugs-v1/ScaryBugs.app").path
        try #require(try apphome(t, ["install", bundle], env: ["APPHOME_PREFSD": "off"]).status == 0)
        let socket = t.base.appendingPathComponent("none.sock").path
        let result = try apphome(t, ["uninstall", Self.bundleID], env: ["APPHOME_PREFSD": "require", "APPHOME_SOCKET": socket])
        #expect(result.status == 1)
        #expect(result.stderr == "apphome: prefsd is not answering on \(socket): No such file or directory\n")
        #expect(try apphome(t, ["list"], env: ["APPHOME_PREFSD": "off"]).stdout.contains(Self.bundleID))
    }
}
