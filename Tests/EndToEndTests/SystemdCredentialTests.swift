import Foundation
import Testing

/// The built `prefsd` serving a grant the built `security` made, to a peer
/// in another process that speaks as systemd's service manager; and, where
/// systemd is PID 1, to a real `systemd-run --user -p LoadCredential=` unit.
@Suite("systemd credentials from the keychain")
struct SystemdCredentialTests {
    /// A peer of the credential socket that speaks as systemd's service
    /// manager (its abstract address names the unit and the credential):
    /// `python3 -c peer SOCKET UNIT ID` prints what prefsd sends. SandboxTests
    /// runs it too, inside and outside an app's sandbox.
    static let peer = """
    import os, socket, sys
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(b"\\0" + os.urandom(8).hex().encode() + b"/unit/" + sys.argv[2].encode() + b"/" + sys.argv[3].encode())
    os.chdir(os.path.dirname(sys.argv[1]))  # a home's path is longer than a socket address holds
    s.connect(os.path.basename(sys.argv[1]))
    s.shutdown(socket.SHUT_WR)
    out = b""
    while True:
        b = s.recv(65536)
        if not b: break
        out += b
    sys.stdout.buffer.write(out)
    """

    func security(_ t: TempRoot, _ daemon: TestDaemon, _ arguments: [String], stdin: String? = nil) throws -> CommandResult {
        try Subprocess.run(try TestDaemon.binary("security"), ["--root", t.root.path] + arguments,
                           environment: t.environment(daemon.environment.merging(["APPHOME_KEYCHAIN_KEY_STORE": "file"]) { $1 }),
                           stdin: stdin.map { Data($0.utf8) }, ioDirectory: t.io)
    }

    func load(_ t: TempRoot, _ socket: String, unit: String, id: String) throws -> CommandResult {
        try Subprocess.run(URL(fileURLWithPath: "/usr/bin/python3"), ["-c", Self.peer, socket, unit, id], environment: t.environment(), ioDirectory: t.io)
    }

    @Test func aGrantMadeWithSecurityIsServedToItsUnitOnly() throws {
        let t = try TempRoot()
        let daemon = try TestDaemon(t)
        let socket = daemon.socket.deletingLastPathComponent().appendingPathComponent("credentials.sock").path
        let add = try security(t, daemon, ["add-credential", "-u", "web.service", "-c", "token"], stdin: "s3cr3t-token\n")
        #expect(add.status == 0 && add.stderr.isEmpty, "\(add)")
        let listed = try security(t, daemon, ["list-credentials"])
        #expect(listed.stdout == "web.service\ttoken\tafterFirstUnlock\tsecret\n", "\(listed)")
        let served = try load(t, socket, unit: "web.service", id: "token")
        #expect(served.status == 0 && served.stdout == "s3cr3t-token\n", "\(served)")
        let other = try load(t, socket, unit: "evil.service", id: "token")
        #expect(other.status == 0 && other.stdout.isEmpty, "\(other)")
        // A peer started in an app's context gets nothing, even naming a granted unit.
        let fromApp = try Subprocess.run(URL(fileURLWithPath: "/usr/bin/python3"), ["-c", Self.peer, socket, "web.service", "token"],
                                         environment: t.environment(["APPHOME_BUNDLE_ID": "com.example.ScaryBugs"]), ioDirectory: t.io)
        #expect(fromApp.status == 0 && fromApp.stdout.isEmpty, "\(fromApp)")

        if let comm = try? String(contentsOfFile: "/proc/1/comm", encoding: .utf8), comm.hasPrefix("systemd"),
           FileManager.default.isExecutableFile(atPath: "/usr/bin/systemd-run") {
            let unit = try Subprocess.run(URL(fileURLWithPath: "/usr/bin/systemd-run"),
                                          ["--user", "--wait", "--pipe", "--quiet", "-p", "LoadCredential=token:" + socket,
                                           "/bin/sh", "-c", "cat \"$CREDENTIALS_DIRECTORY/token\""],
                                          environment: ProcessInfo.processInfo.environment, ioDirectory: t.io)
            #expect(unit.status == 0 && unit.stdout == "s3cr3t-token\n", "\(unit)")
        } else {
            print("skipped: systemd-run --user -p LoadCredential=token:\(socket): PID 1 is not systemd on this machine")
        }

        let deleted = try security(t, daemon, ["delete-credential", "-u", "web.service", "-c", "token"])
        #expect(deleted.status == 0, "\(deleted)")
        #expect(try load(t, socket, unit: "web.service", id: "token").stdout.isEmpty)
        let stopped = try daemon.stop()
        #expect(stopped.stderr.contains("prefsd: credentials: credential 'token' for unit 'evil.service': refused: not granted"), "\(stopped.stderr)")
        #expect(stopped.stderr.contains("it was started in the context of the app com.example.ScaryBugs"), "\(stopped.stderr)")
        #expect(!stopped.stderr.contains("s3cr3t"))
    }
}
