#if canImport(Glibc)
import Glibc
#endif
import AppHomeSystem
import CommandSupport
import Containers
import DefaultsCommand
import Preferences
import PrefsClient
import SettingsApp

/// `apphome-settings` (run by `apphome settings`): serves the Settings app
/// until SIGTERM or SIGINT, printing its URL with the token first.
public enum SettingsServerCommand {
    /// What the command was asked to do.
    public struct Options: Equatable, Sendable {
        public var root: String?
        /// `--listen HOST:PORT` (loopback only); `127.0.0.1:0` by default.
        public var host = "127.0.0.1"
        public var port = 0
        /// `--socket PATH`: a Unix socket instead of TCP.
        public var socket: String?
        public var help = false
    }

    public static let usage = """
        usage: apphome settings [--root DIR] [--listen 127.0.0.1:PORT | --socket PATH]

        Serves the Settings app: every installed app's Settings.bundle drawn as a
        page, live. The first line of output is the URL to open (it holds a
        one-time token). Port 0 or none picks a free port. Stop it with Ctrl-C
        or SIGTERM.

        """

    /// Scans the arguments.
    public static func options(_ arguments: [String]) throws(CommandFailure) -> Options {
        var options = Options()
        var scanner = ArgumentScanner(arguments)
        let matches = try scanner.leadingOptions(
            [.init("--root", .required("a directory"), empty: "a directory"), .init("--listen", .required("an address"), empty: "an address"),
             .init("--socket", .required("a path"), empty: "a path"), .init("--help"), .init("-h")],
            unknown: { .usage("unknown option \($0)") })
        if let extra = scanner.rest.first { throw .usage("unexpected argument \(extra)") }
        var listen: String?
        for m in matches {
            switch m.name {
            case "--root": options.root = m.value
            case "--listen": listen = m.value
            case "--socket": options.socket = m.value
            default: options.help = true
            }
        }
        if listen != nil && options.socket != nil { throw .usage("--listen and --socket cannot be used together") }
        if let listen {
            (options.host, options.port) = try parseListen(listen)
        }
        return options
    }

    /// `127.0.0.1:8080`, `[::1]:8080`, `localhost:0`: a loopback address and a port.
    static func parseListen(_ text: String) throws(CommandFailure) -> (String, Int) {
        var host: Substring, portText: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]"), text[text.index(after: close)...].hasPrefix(":") else {
                throw .usage("--listen takes HOST:PORT, not \(text)")
            }
            host = text[text.index(after: text.startIndex)..<close]
            portText = text[text.index(close, offsetBy: 2)...]
        } else {
            guard let colon = text.lastIndex(of: ":") else { throw .usage("--listen takes HOST:PORT, not \(text)") }
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
        }
        guard let port = Int(portText), (0...65535).contains(port) else { throw .usage("--listen: \(portText) is not a port (0 to 65535)") }
        let h = host == "localhost" ? "127.0.0.1" : String(host)
        guard isLoopback(h) else {
            throw .usage("--listen: \(host) is not a loopback address; the Settings app listens on 127.0.0.1 or ::1 only (put a proxy on --socket to reach it from elsewhere)")
        }
        return (h, port)
    }

    /// `127.x.y.z` or `::1`.
    static func isLoopback(_ host: String) -> Bool {
        if host == "::1" { return true }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4, parts.allSatisfy({ UInt8($0) != nil }) else { return false }
        return parts[0] == "127"
    }

    /// Runs the server; returns the exit status.
    public static func run(_ arguments: [String], configuration: Configuration, console: Console) -> Int32 {
        do {
            let options = try Self.options(arguments)
            if options.help {
                console.out(usage)
                return 0
            }
            // The Settings app changes every app's settings: an app may not start it.
            if configuration.inAppContext {
                throw CommandFailure.failure("refusing to run in an app's context (APPHOME_BUNDLE_ID or APPHOME_HOME is set): the Settings app changes every app's settings")
            }
            guard let root = options.root ?? configuration.root else {
                throw CommandFailure.failure("cannot find the AppHome root: set APPHOME_ROOT or HOME, or pass --root")
            }
            let prefsd: PrefsdSettings
            do { prefsd = try PrefsdSettings(configuration: configuration) } catch { throw CommandFailure.failure(error.description) }
            // SIGTERM and SIGINT stop the server (GLib turns them into main-loop
            // events); a parent may have left them blocked, which exec keeps.
            var stopSignals = sigset_t()
            sigemptyset(&stopSignals)
            sigaddset(&stopSignals, SIGTERM)
            sigaddset(&stopSignals, SIGINT)
            pthread_sigmask(SIG_UNBLOCK, &stopSignals, nil)
            let managed = ManagedPreferences(directory: configuration.managedDirectory)
            let server = try SettingsHTTPServer(root: root, prefsd: prefsd, managed: managed, console: console)
            try server.listen(options)
            console.out(server.gate.startURL + "\n")
            console.flushOutput()
            server.run()
            return 0
        } catch {
            return CommandFailure.report(error, command: "apphome settings", help: "usage: apphome settings [--listen 127.0.0.1:PORT | --socket PATH]", to: console)
        }
    }
}
