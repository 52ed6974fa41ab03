import Foundation
import Testing

/// `apphome run` and `launch` confine the app with the real bubblewrap, and
/// the services know the app by its sandbox, never by its environment. Every
/// wall is checked against a control that shows the same probe succeeding
/// outside (`--no-sandbox`), so a check cannot pass for the wrong reason.
@Suite("the app's sandbox (bubblewrap)")
struct SandboxTests {
    static let walled = "com.example.Walled"
    static let neighbour = "com.example.Neighbour"
    static let group = "group.com.example.walled"

    /// `probe VERB ARG…` prints `VERB=ok` or `VERB=<errno name>` for each
    /// call it makes; every call fails harmlessly when allowed (Flatpak's
    /// `try-syscall.c` is the model).
    static let probeSource = #"""
    #define _GNU_SOURCE
    #include <dirent.h>
    #include <errno.h>
    #include <fcntl.h>
    #include <sched.h>
    #include <signal.h>
    #include <stdio.h>
    #include <string.h>
    #include <sys/personality.h>
    #include <sys/ptrace.h>
    #include <sys/syscall.h>
    #include <sys/wait.h>
    #include <unistd.h>

    static const char *name(int e) {
        switch (e) {
        case 0: return "ok";
        case EPERM: return "EPERM"; case EACCES: return "EACCES"; case ENOENT: return "ENOENT";
        case ENOSYS: return "ENOSYS"; case ESRCH: return "ESRCH"; case EINVAL: return "EINVAL";
        case EROFS: return "EROFS"; case EAFNOSUPPORT: return "EAFNOSUPPORT";
        default: return strerror(e);
        }
    }
    static void report(const char *what, long rc) { printf("%s=%s\n", what, rc < 0 ? name(errno) : "ok"); }

    int main(int argc, char **argv) {
        for (int i = 1; i < argc; i++) {
            const char *v = argv[i];
            errno = 0;
            if (!strcmp(v, "open") && i + 1 < argc) {
                int fd = open(argv[++i], O_RDONLY); report("open", fd); if (fd >= 0) close(fd);
            } else if (!strcmp(v, "list") && i + 1 < argc) {
                DIR *d = opendir(argv[++i]); report("list", d ? 0 : -1); if (d) closedir(d);
            } else if (!strcmp(v, "write") && i + 1 < argc) {
                int fd = open(argv[++i], O_WRONLY | O_CREAT | O_TRUNC, 0600);
                report("write", fd < 0 ? -1 : write(fd, "walled\n", 7)); if (fd >= 0) close(fd);
            } else if (!strcmp(v, "ptrace")) {
                pid_t child = fork();
                if (child == 0) { pause(); _exit(0); }
                long rc = ptrace(PTRACE_ATTACH, child, 0, 0); report("ptrace", rc);
                kill(child, SIGKILL); waitpid(child, 0, 0);
            } else if (!strcmp(v, "keyctl")) {
                report("keyctl", syscall(SYS_keyctl, 0 /* GET_KEYRING_ID */, -4 /* user keyring */, 0));
                errno = 0; report("add_key", syscall(SYS_add_key, "user", "apphome-probe", "x", 1, -100 /* bad ring */));
                errno = 0; report("request_key", syscall(SYS_request_key, "user", "apphome-probe-none", NULL, 0));
            } else if (!strcmp(v, "userns")) {
                report("userns", unshare(CLONE_NEWUSER));
            } else if (!strcmp(v, "personality")) {
                report("personality", personality(0x0008 /* PER_LINUX32 */));
            } else if (!strcmp(v, "perf")) {
                report("perf", syscall(SYS_perf_event_open, NULL, 0, -1, -1, 0));
            } else {
                fprintf(stderr, "probe: unknown verb %s\n", v); return 2;
            }
        }
        return 0;
    }
    """#

    /// The probe, built once per cache (rebuilt when its source changes).
    static func probe() throws -> URL {
        try RealClients.cached("sandbox-probe", source: probeSource, sourceName: "probe.c") { source, output, io in
            let r = try Subprocess.run(URL(fileURLWithPath: "/usr/bin/cc"), ["-O", "-o", output.path, source.path],
                                       environment: ProcessInfo.processInfo.environment, ioDirectory: io, timeout: 120)
            guard r.status == 0 else { throw HarnessError.helper("cc failed: \(r)") }
        }
    }

    /// A python client of prefsd's protocol: `client SOCKET ROOT OP JSON`
    /// sends `hello` then the request, prints the reply's `ok` and error.
    static let prefsdClient = #"""
    import json, plistlib, socket, struct, sys
    s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
    def call(d):
        p = plistlib.dumps(d, fmt=plistlib.FMT_BINARY)
        s.sendall(b"pf\x01\x00" + struct.pack(">I", len(p)) + p)
        h = b""
        while len(h) < 8: h += s.recv(8 - len(h))
        n = struct.unpack(">I", h[4:])[0]; b = b""
        while len(b) < n: b += s.recv(n - len(b))
        return plistlib.loads(b)
    call({"op": 1, "id": 1, "root": sys.argv[2]})
    r = call(dict({"op": int(sys.argv[3]), "id": 2}, **json.loads(sys.argv[4])))
    print("ok" if r.get("ok") else "refused: " + r.get("error", {}).get("message", "?"))
    """#

    let t: TempRoot
    init() throws { t = try TempRoot() }

    func apphome(_ arguments: [String], env: [String: String] = [:]) throws -> CommandResult {
        try Subprocess.run(try TestDaemon.binary("apphome"), ["--root", t.root.path] + arguments,
                           environment: t.environment(env), ioDirectory: t.io, timeout: 120)
    }

    func home(of id: String) throws -> String {
        let r = try apphome(["container", id, "data"])
        try #require(r.status == 0, "\(r)")
        return r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Signs and installs the walled app (the probe as its executable, the
    /// group) and its neighbour.
    func installApps() throws {
        let key = t.workFile("team.key").path
        try #require(try apphome(["keygen", key]).status == 0)
        for (id, name, groups) in [(Self.walled, "Walled", [Self.group]), (Self.neighbour, "Neighbour", [])] {
            let app = t.workFile("\(name).app")
            try FileManager.default.createDirectory(at: app, withIntermediateDirectories: true)
            try FileManager.default.copyItem(at: try Self.probe(), to: app.appendingPathComponent("probe"))
            let groupList = groups.map { "'\($0)'" }.joined(separator: ", ")
            try t.writePlist("{'CFBundleIdentifier': '\(id)', 'CFBundleVersion': '1', 'CFBundleExecutable': 'probe', 'com.apple.security.application-groups': [\(groupList)]}",
                             to: app.appendingPathComponent("Info.plist"), format: "xml")
            for r in [try apphome(["sign", app.path, "--key", key]), try apphome(["install", app.path])] {
                try #require(r.status == 0, "\(r)")
            }
        }
    }

    @Test func theAppSeesOnlyItsOwnHomeAndCannotTraceOrUseTheKernelKeyring() throws {
        try installApps()
        let walledHome = try home(of: Self.walled), neighbourHome = try home(of: Self.neighbour)
        let planted = t.home.appendingPathComponent(".ssh/id_ed25519")
        try FileManager.default.createDirectory(at: planted.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data("PRIVATE KEY\n".utf8).write(to: planted)
        try FileManager.default.createDirectory(at: t.root.appendingPathComponent("Keychains"), withIntermediateDirectories: true)
        let registry = t.root.appendingPathComponent("Applications/registry.plist").path
        // A process of the user's, outside any sandbox.
        let sleeper = try Subprocess.start(URL(fileURLWithPath: "/bin/sleep"), ["30"], environment: t.environment(), ioDirectory: t.io)
        defer { sleeper.kill(); _ = try? sleeper.finish() }
        let environ = "/proc/\(sleeper.pid)/environ"
        let probes = ["list", neighbourHome, "open", neighbourHome + "/Library/Preferences", "open", registry,
                      "list", t.root.appendingPathComponent("Keychains").path, "open", planted.path, "list", t.home.path, "open", environ,
                      "ptrace", "keyctl", "userns", "perf", "personality", "write", walledHome + "/Documents/note.txt"]

        let inside = try apphome(["launch", Self.walled, "--"] + probes)
        #expect(inside.status == 0, "\(inside)")
        #expect(inside.stdout == """
            list=ENOENT
            open=ENOENT
            open=ENOENT
            list=ENOENT
            open=ENOENT
            list=ENOENT
            open=ENOENT
            ptrace=EPERM
            keyctl=EPERM
            add_key=EPERM
            request_key=EPERM
            userns=EPERM
            perf=EPERM
            personality=EPERM
            write=ok

            """, "\(inside)")
        #expect(try String(contentsOfFile: walledHome + "/Documents/note.txt", encoding: .utf8) == "walled\n")

        // The control: the same probes outside a sandbox reach everything.
        let outside = try apphome(["launch", "--no-sandbox", Self.walled, "--"] + probes)
        #expect(outside.status == 0 && outside.stderr.contains("WITHOUT a sandbox"), "\(outside)")
        let lines = outside.stdout.split(separator: "\n")
        #expect(lines.prefix(8).allSatisfy { $0.hasSuffix("=ok") }, "\(outside)")
        #expect(lines.contains("keyctl=ok"), "\(outside)")

        // Root's capabilities are all dropped, and only the home's own app is listed.
        let status = try apphome(["run", Self.walled, "--", "/bin/sh", "-c",
                                  "grep -E '^Cap(Eff|Prm|Bnd)' /proc/self/status; ls \"$APPHOME_ROOT/Applications\"; cat /.apphome-info"])
        #expect(status.status == 0, "\(status)")
        for cap in ["CapEff", "CapPrm", "CapBnd"] { #expect(status.stdout.contains(cap + ":\t0000000000000000\n"), "\(status)") }
        #expect(status.stdout.contains(URL(fileURLWithPath: walledHome).lastPathComponent + "\n"))
        #expect(!status.stdout.contains(URL(fileURLWithPath: neighbourHome).lastPathComponent), "\(status)")
        #expect(status.stdout.contains("<key>BundleIdentifier</key>\n\t<string>\(Self.walled)</string>"), "\(status)")
        // The info file cannot be changed from inside.
        let tamper = try apphome(["run", Self.walled, "--", "/bin/sh", "-c", "echo x > /.apphome-info || echo refused"])
        #expect(tamper.stdout == "refused\n", "\(tamper)")
    }

    /// The home is made ready while bubblewrap builds the sandbox; when that
    /// fails, the run fails and the app never starts (bubblewrap is stopped
    /// before it has the filter).
    @Test func aHomeThatCannotBeMadeReadyStopsTheRunBeforeTheAppStarts() throws {
        try installApps()
        let walledHome = try home(of: Self.walled)
        // The global domain is copied into the home's Library/Preferences,
        // here a file where the directory should be.
        let global = t.root.appendingPathComponent("Library/Preferences/.GlobalPreferences.plist")
        try FileManager.default.createDirectory(at: global.deletingLastPathComponent(), withIntermediateDirectories: true)
        try t.writePlist("{'AppleLanguages': ['en']}", to: global, format: "binary")
        let preferences = walledHome + "/Library/Preferences"
        try FileManager.default.removeItem(atPath: preferences)
        try Data("not a directory\n".utf8).write(to: URL(fileURLWithPath: preferences))
        let marker = walledHome + "/Documents/ran"
        let r = try apphome(["run", Self.walled, "--", "/bin/sh", "-c", "echo ran > \"$HOME/Documents/ran\""])
        #expect(r.status != 0 && r.stderr.contains(preferences), "\(r)")
        // Long enough for an app that had been started to write its marker.
        Thread.sleep(forTimeInterval: 0.3)
        #expect(!FileManager.default.fileExists(atPath: marker), "\(r)")
        #expect(try String(contentsOfFile: preferences, encoding: .utf8) == "not a directory\n")
        // Made right again, the app runs.
        try FileManager.default.removeItem(atPath: preferences)
        let ok = try apphome(["run", Self.walled, "--", "/bin/sh", "-c", "echo ran > \"$HOME/Documents/ran\""])
        #expect(ok.status == 0 && FileManager.default.fileExists(atPath: marker), "\(ok)")
    }

    @Test func theNetworkIsSharedUnlessCutAndTheSessionBusIsAbsent() throws {
        try installApps()
        let shared = try apphome(["run", Self.walled, "--", "/bin/sh", "-c", "tail -n +3 /proc/net/dev | wc -l; echo ${DBUS_SESSION_BUS_ADDRESS-none}"],
                                 env: ["DBUS_SESSION_BUS_ADDRESS": "unix:path=/run/user/0/bus"])
        let hostInterfaces = try String(contentsOfFile: "/proc/net/dev", encoding: .utf8).split(separator: "\n").count - 2
        #expect(shared.status == 0 && shared.stdout == "\(hostInterfaces)\nnone\n", "\(shared)")
        let cut = try apphome(["run", Self.walled, "--no-network", "--", "/bin/sh", "-c", "tail -n +3 /proc/net/dev | cut -d: -f1"])
        #expect(cut.status == 0 && cut.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "lo", "\(cut)")
        for name in ["org.freedesktop.secrets", "org.freedesktop.*", "org.gnome.keyring"] {
            let refused = try apphome(["run", Self.walled, "--talk-name", name, "--", "/bin/true"])
            #expect(refused.status != 0 && refused.stderr.contains("can never be granted to an app"), "\(refused)")
        }
    }

    /// `--talk-name` passes a session bus filtered by the real
    /// xdg-dbus-proxy: the bus answers through it, and what the app was
    /// not granted (owning a name) it refuses.
    @Test func talkNamePassesAFilteredSessionBus() throws {
        try installApps()
        let address = "unix:path=" + t.base.appendingPathComponent("bus").path
        let bus = try Subprocess.start(URL(fileURLWithPath: "/usr/bin/dbus-daemon"), ["--session", "--nofork", "--address=" + address],
                                       environment: t.environment(), ioDirectory: t.io, timeout: 120)
        defer { bus.kill(); _ = try? bus.finish() }
        try #require(waitUntilListening(t.base.appendingPathComponent("bus").path), "dbus-daemon did not start")
        let names = "dbus-send --session --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus.ListNames | grep -o '\"[a-z][^\"]*\"' | sort | tr '\\n' ' '"
        let outside = try Subprocess.run(URL(fileURLWithPath: "/bin/sh"), ["-c", names], environment: t.environment(["DBUS_SESSION_BUS_ADDRESS": address]),
                                         ioDirectory: t.io)
        #expect(outside.stdout.contains("\"org.freedesktop.DBus\""), "\(outside)")
        let inside = try apphome(["run", Self.walled, "--talk-name", "com.example.Allowed", "--", "/bin/sh", "-c",
                                  "echo $DBUS_SESSION_BUS_ADDRESS; " + names], env: ["DBUS_SESSION_BUS_ADDRESS": address])
        #expect(inside.status == 0 && inside.stdout.hasPrefix("unix:path=/run/apphome/bus\n"), "\(inside)")
        #expect(inside.stdout.contains("\"org.freedesktop.DBus\""), "\(inside)")
        // The proxy is gone with the app, its socket too.
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: t.runtimeDirectory.path + "/apphome").filter { $0.hasPrefix("bus-") }
        #expect(leftovers.isEmpty, "\(leftovers)")
        // Taking a name is the proxy's to refuse (no --own): outside, the same call succeeds.
        let take = "dbus-send --session --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus.RequestName string:com.example.Stolen uint32:0"
        let tookOutside = try Subprocess.run(URL(fileURLWithPath: "/bin/sh"), ["-c", take], environment: t.environment(["DBUS_SESSION_BUS_ADDRESS": address]),
                                             ioDirectory: t.io)
        #expect(tookOutside.status == 0 && tookOutside.stdout.contains("uint32 1"), "\(tookOutside)")
        let tookInside = try apphome(["run", Self.walled, "--talk-name", "com.example.Allowed", "--", "/bin/sh", "-c", take],
                                     env: ["DBUS_SESSION_BUS_ADDRESS": address])
        #expect(tookInside.status != 0 && !tookInside.stdout.contains("uint32 1"), "\(tookInside)")
    }

    @Test func servicesKnowTheAppByItsSandboxNotByItsEnvironment() throws {
        try installApps()
        let walledHome = try home(of: Self.walled)
        let daemon = try TestDaemon(t)
        var stopped: CommandResult?
        defer { if stopped == nil { _ = try? daemon.stop() } }
        // The credential socket made reachable from inside the app's home
        // (a hard link: the same socket), to show the app is refused by who it is.
        let credentialSocket = walledHome + "/tmp/credentials.sock"
        try #require(link(daemon.socket.deletingLastPathComponent().appendingPathComponent("credentials.sock").path, credentialSocket) == 0)
        let env = daemon.environment.merging(["APPHOME_KEYCHAIN_KEY_STORE": "file"]) { $1 }
        func security(_ arguments: [String], stdin: String? = nil) throws -> CommandResult {
            try Subprocess.run(try TestDaemon.binary("security"), ["--root", t.root.path] + arguments, environment: t.environment(env),
                               stdin: stdin.map { Data($0.utf8) }, ioDirectory: t.io)
        }
        let grant = try security(["add-credential", "-u", "web.service", "-c", "token"], stdin: "s3cr3t-token\n")
        try #require(grant.status == 0, "\(grant)")
        let loginToken = try String(contentsOf: t.root.appendingPathComponent("Keychains/login.credential"), encoding: .utf8)
            .split(separator: " ").last!.trimmingCharacters(in: .whitespacesAndNewlines)
        let loginFind = "{\"app\": \"login\", \"credential\": \"\(loginToken)\", \"query\": {\"class\": \"genp\"}}"
        let neighbourRead = "{\"domain\": \"\(Self.neighbour)\"}"
        let script = "import sys\nexec(sys.argv.pop(1))"
        func python(_ source: String, _ arguments: [String], sandbox: Bool) throws -> CommandResult {
            let run = ["run"] + (sandbox ? [] : ["--no-sandbox"]) + [Self.walled, "--", "/usr/bin/env", "-i", "/usr/bin/python3", "-c", script, source]
            return try apphome(run + arguments, env: env)
        }
        // Outside a sandbox, a child that cleared its environment is the user (the old hole) ...
        let userCredential = try python(SystemdCredentialTests.peer, [credentialSocket, "web.service", "token"], sandbox: false)
        #expect(userCredential.stdout == "s3cr3t-token\n", "\(userCredential)")
        let userLogin = try python(Self.prefsdClient, [daemon.socket.path, t.root.path, "32", loginFind], sandbox: false)
        #expect(userLogin.status == 0 && !userLogin.stdout.isEmpty && !userLogin.stdout.contains("no app may use it"), "\(userLogin)")
        // ... and inside the sandbox it is still the app, whatever its environment.
        let appCredential = try python(SystemdCredentialTests.peer, [credentialSocket, "web.service", "token"], sandbox: true)
        #expect(appCredential.status == 0 && appCredential.stdout.isEmpty, "\(appCredential)")
        let appLogin = try python(Self.prefsdClient, [daemon.socket.path, t.root.path, "32", loginFind], sandbox: true)
        #expect(appLogin.stdout.contains("refused: prefsd: the caller runs in the sandbox of \(Self.walled)")
                || appLogin.stdout.contains("no app may use it"), "\(appLogin)")
        let otherDomain = try python(Self.prefsdClient, [daemon.socket.path, t.root.path, "3", neighbourRead], sandbox: true)
        #expect(otherDomain.stdout.contains("refused: prefsd: the caller runs in the sandbox of \(Self.walled) and may not use the domain \(Self.neighbour)"), "\(otherDomain)")
        stopped = try daemon.stop()
        #expect(stopped?.stderr.contains("it was started in the context of the app \(Self.walled)") == true, "\(stopped?.stderr ?? "")")
    }

    @Test func theAppsOwnPreferencesGroupAndKeychainWorkThroughPrefsd() throws {
        try installApps()
        let daemon = try TestDaemon(t)
        defer { _ = try? daemon.stop() }
        let env = daemon.environment.merging(["APPHOME_KEYCHAIN_KEY_STORE": "file"]) { $1 }
        // AppHome's own commands copied into the app's bundle (read-only
        // inside, the toolchain's runtime they load bound beside them).
        let bundle = try home(of: Self.walled) + "/Walled.app"
        for tool in ["defaults", "security"] {
            try FileManager.default.copyItem(at: try TestDaemon.binary(tool), to: URL(fileURLWithPath: bundle + "/" + tool))
        }
        try t.succeed(["write", Self.neighbour, "secret", "theirs"], env: env)
        let script = """
        set -e
        $0/defaults write \(Self.walled) mine one
        $0/defaults read \(Self.walled) mine
        $0/defaults write \(Self.group) shared two
        env -u APPHOME_BUNDLE_ID -u APPHOME_HOME $0/security add-generic-password -s sync.example.com -a ray -w pw1
        $0/security find-generic-password -s sync.example.com -a ray -w
        $0/defaults read \(Self.neighbour) secret 2>/dev/null || echo neighbour-refused
        """
        let r = try apphome(["run", Self.walled, "--", "/bin/sh", "-c", script, bundle], env: env)
        #expect(r.status == 0 && r.stdout == "one\npw1\nneighbour-refused\n", "\(r)")
        // The writes landed in the app's domain and its group's suite, seen from outside.
        try t.expectOutput(["read", Self.walled, "mine"], "one\n")
        try t.expectOutput(["read", Self.group, "shared"], "two\n")
    }

    /// No decision reads `APPHOME_BUNDLE_ID` or `APPHOME_HOME` outside
    /// `Configuration` and the sandbox code: only setting them for a child
    /// (`env["…"] = …`) and prose mention them elsewhere.
    @Test func noCodeReadsTheAppVariablesButConfigurationAndTheSandbox() throws {
        let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Sources")
        let allowed: Set<String> = ["AppHomeSystem/Configuration.swift", "AppHomeSystem/ProcessContext.swift", "Containers/Lifecycle/Sandbox.swift"]
        var offending: [String] = []
        let files = FileManager.default.enumerator(atPath: sources.path)!.compactMap { $0 as? String }
            .filter { $0.hasSuffix(".swift") || $0.hasSuffix(".c") || $0.hasSuffix(".h") }
        #expect(files.count > 100)
        for file in files where !allowed.contains(file) {
            let text = try String(contentsOf: sources.appendingPathComponent(file), encoding: .utf8)
            for (n, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                let code = line.trimmingCharacters(in: .whitespaces)
                if code.hasPrefix("//") { continue }
                for name in ["\"APPHOME_BUNDLE_ID\"", "\"APPHOME_HOME\"", "APPHOME_BUNDLE_ID=", "APPHOME_HOME="] where code.contains(name) {
                    // Setting the variable for a child is not reading it.
                    if code.range(of: #"\[""# + name.trimmingCharacters(in: CharacterSet(charactersIn: "\"=")) + #""\] = "#, options: .regularExpression) != nil { continue }
                    offending.append("\(file):\(n + 1): \(code)")
                }
            }
        }
        #expect(offending.isEmpty, "\(offending.joined(separator: "\n"))")
    }
}
