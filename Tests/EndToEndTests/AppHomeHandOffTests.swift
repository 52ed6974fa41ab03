import Foundation
import Testing

/// The static `apphome` runs `run`, `launch`, `list`, `container` and `settings` itself
/// and hands every other verb to `apphome-secret-service` (which may load
/// libsecret) before anything is read or written; without that sibling such
/// a verb fails plainly and changes nothing.
@Suite("apphome hands verbs that may need the Secret Service to apphome-secret-service")
struct AppHomeHandOffTests {
    let t: TempRoot
    init() throws { t = try TempRoot() }

    func lonelyAppHome() throws -> URL { try t.lonelyCopy(of: "apphome") }

    func install() throws {
        let app = InstalledAppTests.examples.appendingPathComponent("ScaryBugs-v1/ScaryBugs.app").path
        let r = try Subprocess.run(try TestDaemon.binary("apphome"), ["--root", t.root.path, "install", app],
                                   environment: t.environment(["APPHOME_PREFSD": "off"]), ioDirectory: t.io)
        try #require(r.status == 0, "\(r)")
    }

    @Test func withoutTheSiblingOtherVerbsFailPlainlyAndChangeNothing() throws {
        try install()
        let apphome = try lonelyAppHome()
        let before = t.snapshot()
        let env = t.environment(["APPHOME_PREFSD": "off"])
        for args in [["backup", InstalledAppTests.bundleID], ["uninstall", InstalledAppTests.bundleID], ["doctor"]] {
            let r = try Subprocess.run(apphome, ["--root", t.root.path] + args, environment: env, ioDirectory: t.io)
            #expect(r.status == 1 && r.stdout.isEmpty, "\(args): \(r)")
            #expect(r.stderr.hasPrefix("apphome: this command may need the Secret Service (the keychain's device key is kept there), which apphome "
                                       + "reaches through apphome-secret-service, but it is in neither ")
                    && r.stderr.contains("lonely/bin/apphome-secret-service nor ") && r.stderr.hasSuffix("; reinstall AppHome\n"), "\(r)")
        }
        t.expectUnchanged(since: before, after: "apphome without its sibling")
        // Help and usage errors need nothing but the program.
        let help = try Subprocess.run(apphome, ["help", "backup"], environment: env, ioDirectory: t.io)
        #expect(help.status == 0 && help.stdout.hasPrefix("usage: apphome [--root DIR] backup"), "\(help)")
        let unknown = try Subprocess.run(apphome, ["frobnicate"], environment: env, ioDirectory: t.io)
        #expect(unknown.status != 0 && unknown.stderr.contains("unknown verb 'frobnicate'"), "\(unknown)")
    }

    @Test func theStaticVerbsNeedNoSibling() throws {
        try install()
        let apphome = try lonelyAppHome()
        let env = t.environment(["APPHOME_PREFSD": "off"])
        let list = try Subprocess.run(apphome, ["--root", t.root.path, "list"], environment: env, ioDirectory: t.io)
        #expect(list.status == 0 && list.stdout.contains(InstalledAppTests.bundleID), "\(list)")
        let home = try Subprocess.run(apphome, ["--root", t.root.path, "container", InstalledAppTests.bundleID, "data"], environment: env, ioDirectory: t.io)
        #expect(home.status == 0 && home.stdout.hasPrefix(t.root.path + "/Applications/"), "\(home)")
        // Outside the sandbox (bubblewrap may be missing where this runs); the sandboxed run is SandboxTests'.
        let run = try Subprocess.run(apphome, ["--root", t.root.path, "run", "--no-sandbox", InstalledAppTests.bundleID, "--", "/bin/sh", "-c", "echo $HOME"],
                                     environment: env, ioDirectory: t.io)
        #expect(run.status == 0 && run.stdout == home.stdout, "\(run)")
    }
}
