import Foundation
import Testing

/// The static `security` never loads libsecret: a command that opens the
/// keychain's files with the device key in the Secret Service (or may make
/// one there) runs again in `security-secret-service`, before anything is
/// read or written; without that sibling it fails plainly and changes nothing.
@Suite("security hands Secret Service commands to security-secret-service")
struct SecurityHandOffTests {
    let t: TempRoot
    init() throws { t = try TempRoot() }

    func lonelySecurity() throws -> URL { try t.lonelyCopy(of: "security") }

    @Test func withoutTheSiblingASecretServiceCommandFailsPlainlyAndChangesNothing() throws {
        let security = try lonelySecurity()
        let before = t.snapshot()
        let env = t.environment(["APPHOME_PREFSD": "off", "DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent"])
        for args in [["add-generic-password", "-a", "ray", "-s", "bugs"], ["find-generic-password", "-s", "bugs", "-w"], ["lock-keychain"]] {
            let r = try Subprocess.run(security, ["--root", t.root.path] + args, environment: env, stdin: Data("centipede\n".utf8), ioDirectory: t.io)
            #expect(r.status == 1 && r.stdout.isEmpty, "\(args): \(r)")
            #expect(r.stderr.hasPrefix("security: this command needs the Secret Service (the device key is kept there), which security reaches through security-secret-service, but it is in neither ")
                    && r.stderr.contains("lonely/bin/security-secret-service nor ") && r.stderr.hasSuffix("; reinstall AppHome, or run prefsd\n"), "\(r)")
        }
        t.expectUnchanged(since: before, after: "security without its sibling")
    }

    @Test func aKeyFileKeychainNeedsNoSibling() throws {
        let security = try lonelySecurity()
        let env = t.environment(["APPHOME_PREFSD": "off", "APPHOME_KEYCHAIN_KEY_STORE": "file", "DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent"])
        let added = try Subprocess.run(security, ["--root", t.root.path, "add-generic-password", "-a", "ray", "-s", "bugs"], environment: env,
                                       stdin: Data("centipede\n".utf8), ioDirectory: t.io)
        #expect(added.status == 0 && added.stderr.isEmpty, "\(added)")
        // Made with a key file, the keychain is read by its record: no bus setting matters any more.
        let found = try Subprocess.run(security, ["--root", t.root.path, "find-generic-password", "-s", "bugs", "-w"],
                                       environment: t.environment(["APPHOME_PREFSD": "off", "DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent"]), ioDirectory: t.io)
        #expect(found.status == 0 && found.stdout == "centipede\n", "\(found)")
    }

    /// With gnome-keyring on the session bus (the keyring pass of `make test`):
    /// the secret piped to `security` arrives whole in the sibling, which made
    /// the device key in the Secret Service.
    @Test(.enabled(if: ProcessInfo.processInfo.environment["DBUS_SESSION_BUS_ADDRESS"] != nil, "needs a session bus with gnome-keyring (scripts/with-keyring.sh)"))
    func theSiblingGetsTheCommandLineAndStandardInputWhole() throws {
        let bus = ProcessInfo.processInfo.environment["DBUS_SESSION_BUS_ADDRESS"]!
        let env = t.environment(["APPHOME_PREFSD": "off", "DBUS_SESSION_BUS_ADDRESS": bus])
        let security = try TestDaemon.binary("security")
        let added = try Subprocess.run(security, ["--root", t.root.path, "add-generic-password", "-a", "ray", "-s", "bugs", "-T", "/usr/bin/true"],
                                       environment: env, stdin: Data("centipede\n".utf8), ioDirectory: t.io)
        #expect(added.status == 0, "\(added)")
        // The -T note once: printed by the sibling only, after the keychain was chosen.
        #expect(added.stderr.components(separatedBy: "-T and -A are accepted").count == 2, "\(added)")
        let info = try Subprocess.run(security, ["--root", t.root.path, "show-keychain-info"], environment: env, ioDirectory: t.io)
        #expect(info.status == 0 && info.stdout.contains("device key: Secret Service"), "\(info)")
        let found = try Subprocess.run(security, ["--root", t.root.path, "find-generic-password", "-s", "bugs", "-w"], environment: env, ioDirectory: t.io)
        #expect(found.status == 0 && found.stdout == "centipede\n", "\(found)")
        // And the lonely security, with the same keychain, refuses instead of loading libsecret.
        let lonely = try Subprocess.run(try lonelySecurity(), ["--root", t.root.path, "find-generic-password", "-s", "bugs", "-w"],
                                        environment: env, ioDirectory: t.io)
        #expect(lonely.status == 1 && lonely.stderr.contains("security-secret-service"), "\(lonely)")
    }
}
