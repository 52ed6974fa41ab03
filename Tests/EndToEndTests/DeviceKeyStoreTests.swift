import Foundation
import Testing

/// Where a new keychain's device key goes when a session bus is reachable,
/// against real D-Bus sessions (`dbus-run-session`): one whose bus has no
/// Secret Service at all, and one where gnome-keyring answers but has no
/// login keyring (it would have to prompt, and cannot without a display).
/// Either way making the keychain fails, names libsecret's reason and
/// `APPHOME_KEYCHAIN_KEY_STORE=file`, and leaves no key file. In daemon
/// mode the keychain is made by a prefsd started inside the same bus.
@Suite("the device key store on a session bus")
struct DeviceKeyStoreTests {
    let t: TempRoot
    /// A root of its own: in daemon mode the prefsd on this bus serves it.
    let root: URL
    init() throws {
        t = try TempRoot()
        root = t.work.appendingPathComponent("root")
    }

    /// A session bus configuration whose only activatable service is
    /// `activatable` (none when nil): without one nobody owns
    /// `org.freedesktop.secrets`; with gnome-keyring and no prompter it
    /// cannot ask for a new login keyring's password (as on a machine
    /// without a display), and says so at once.
    func busConfiguration(activatable: (name: String, exec: String)? = nil) throws -> URL {
        var serviceDirectory = ""
        if let activatable {
            let dir = t.work.appendingPathComponent("bus-services")
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            try Data("[D-BUS Service]\nName=\(activatable.name)\nExec=\(activatable.exec)\n".utf8)
                .write(to: dir.appendingPathComponent(activatable.name + ".service"))
            serviceDirectory = "  <servicedir>\(dir.path)</servicedir>\n"
        }
        let url = t.work.appendingPathComponent("session.conf")
        try Data("""
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <type>session</type>
              <listen>unix:tmpdir=\(t.work.path)</listen>
              <auth>EXTERNAL</auth>
            \(serviceDirectory)  <policy context="default">
                <allow send_destination="*" eavesdrop="true"/>
                <allow eavesdrop="true"/>
                <allow own="*"/>
              </policy>
            </busconfig>

            """.utf8).write(to: url)
        return url
    }

    /// Runs `security --root <root> arguments` inside a new session bus
    /// set up by `configuration`, with
    /// `stdin`; in daemon mode through a prefsd started on that bus first.
    /// Returns security's status and its own lines of standard error (the
    /// bus daemon and gnome-keyring write theirs there too).
    func onABus(_ configuration: URL, _ arguments: [String], stdin: String = "", env: [String: String] = [:]) throws -> (status: Int32, stdout: String, errors: [String]) {
        let socket = t.work.appendingPathComponent("bus-prefsd.sock").path
        let script = """
            if [ -n "$TEST_PREFSD" ]; then
                "$TEST_PREFSD" --foreground --root "$TEST_ROOT" --socket "$TEST_SOCKET" 2>"$TEST_PREFSD_LOG" & pid=$!
                i=0; while [ ! -S "$TEST_SOCKET" ] && [ $i -lt 500 ]; do sleep 0.02; i=$((i+1)); done
                sleep 0.1
            fi
            "$TEST_SECURITY" --root "$TEST_ROOT" "$@"; status=$?
            if [ -n "$TEST_PREFSD" ]; then kill $pid; wait $pid; fi
            exit $status
            """
        var vars = env
        vars["TEST_ROOT"] = root.path
        vars["TEST_SECURITY"] = try TestDaemon.binary("security").path
        if TempRoot.daemonMode {
            vars["TEST_PREFSD"] = try TestDaemon.binary("prefsd").path
            vars["TEST_SOCKET"] = socket
            vars["TEST_PREFSD_LOG"] = t.work.appendingPathComponent("bus-prefsd.log").path
            vars["APPHOME_PREFSD"] = "require"
            vars["APPHOME_SOCKET"] = socket
        }
        // `env --default-signal` first: children of the test runner inherit
        // its blocked signals, and a bus daemon that cannot get SIGTERM
        // outlives dbus-run-session.
        let r = try Subprocess.run(try RealClients.tool("env"), ["--default-signal", try RealClients.tool("dbus-run-session").path,
                                                                  "--config-file=" + configuration.path, "--", "/bin/sh", "-c", script, "sh"] + arguments,
                                   environment: t.environment(vars, unsetting: ["DBUS_SESSION_BUS_ADDRESS"]),
                                   stdin: Data(stdin.utf8), ioDirectory: t.io)
        #expect(!r.signaled, "\(r)")
        return (r.status, r.stdout, r.stderr.split(separator: "\n").map(String.init).filter { $0.hasPrefix("security: ") })
    }

    var keyFile: String { root.path + "/Keychains/device.key" }
    var deviceRecord: String { root.path + "/Keychains/device.plist" }

    func expectRefusal(_ r: (status: Int32, stdout: String, errors: [String]), cause: String,
                       sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(r.status == 53, "\(r)", sourceLocation: sourceLocation)
        #expect(r.errors.count == 1, "\(r)", sourceLocation: sourceLocation)
        let line = r.errors.first ?? ""
        #expect(line.hasPrefix("security: SecKeychainItemCreateFromContent (<default>): the keychain's device root key is unavailable: "
                               + "the Secret Service could not store a new keychain's device key ("), "\(line)", sourceLocation: sourceLocation)
        #expect(line.contains(cause), "\(line)", sourceLocation: sourceLocation)
        #expect(line.hasSuffix("); set APPHOME_KEYCHAIN_KEY_STORE=file to keep the key in a 0600 file under the root instead"), "\(line)",
                sourceLocation: sourceLocation)
        #expect(!FileManager.default.fileExists(atPath: keyFile), "a key file was written", sourceLocation: sourceLocation)
        #expect(!FileManager.default.fileExists(atPath: deviceRecord), "a device record was written", sourceLocation: sourceLocation)
    }

    @Test func aBusWithoutASecretServiceRefusesToMakeAKeychainAndLeavesNoKeyFile() throws {
        let bus = try busConfiguration()
        expectRefusal(try onABus(bus, ["add-generic-password", "-a", "ray", "-s", "svc"], stdin: "pw\n"),
                      cause: "The name org.freedesktop.secrets was not provided by any .service files")
        // What the message says to do works: the key goes to the file.
        let file = try onABus(bus, ["add-generic-password", "-a", "ray", "-s", "svc"], stdin: "pw\n", env: ["APPHOME_KEYCHAIN_KEY_STORE": "file"])
        #expect(file.status == 0 && file.errors.isEmpty, "\(file)")
        #expect(FileManager.default.fileExists(atPath: keyFile))
        let found = try onABus(bus, ["find-generic-password", "-s", "svc", "-w"])
        #expect(found.status == 0 && found.stdout == "pw\n", "\(found)")
    }

    @Test func gnomeKeyringWithoutALoginKeyringRefusesToMakeAKeychain() throws {
        let daemon = try RealClients.tool("gnome-keyring-daemon").path
        // The throw-away HOME has no keyrings: gnome-keyring is activated and would have to prompt for a new login keyring.
        let bus = try busConfiguration(activatable: ("org.freedesktop.secrets", daemon + " --start --foreground --components=secrets"))
        expectRefusal(try onABus(bus, ["add-internet-password", "-a", "ray", "-s", "host", "-w"], stdin: "pw\n"),
                      cause: "/org/freedesktop/secrets/collection/login")
    }

    /// Keychains made with a key file keep working where no Secret Service answers.
    @Test func anExistingKeychainWithAKeyFileKeepsWorkingOnSuchABus() throws {
        let bus = try busConfiguration()
        let made = try Subprocess.run(try TestDaemon.binary("security"), ["--root", root.path, "add-generic-password", "-a", "ray", "-s", "old"],
                                      environment: t.environment(["APPHOME_KEYCHAIN_KEY_STORE": "file", "APPHOME_PREFSD": "off"]),
                                      stdin: Data("before\n".utf8), ioDirectory: t.io)
        #expect(made.status == 0, "\(made)")
        let added = try onABus(bus, ["add-generic-password", "-a", "ray", "-s", "new"], stdin: "after\n")
        #expect(added.status == 0 && added.errors.isEmpty, "\(added)")
        #expect(try onABus(bus, ["find-generic-password", "-s", "old", "-w"]).stdout == "before\n")
        #expect(try onABus(bus, ["find-generic-password", "-s", "new", "-w"]).stdout == "after\n")
    }
}
