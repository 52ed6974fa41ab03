#if canImport(Glibc)
import Glibc
#endif
import AppHomeSystem
import CommandSupport
import Keychain
import KeychainSecretService
import Preferences
import PrefsProtocol
import PrefsService
import SettingsBundle

/// The `prefsd` command line: options, socket activation, then the service.
public enum PrefsdCommand {
    static let help = """
    usage: prefsd [--foreground] [--root <dir>] [--socket <path>]

    The AppHome preferences service: one writer for every domain, cached
    reads, change notifications. `defaults` and `apphome` use it when its
    socket answers (APPHOME_PREFSD=off|auto|require chooses).

    Options:
      --foreground     stay attached to the terminal and log to stderr (prefsd
                       never forks: this is how it always runs, under systemd too)
      --root <dir>     the AppHome root (default: $APPHOME_ROOT, else
                       $XDG_DATA_HOME/apphome, else ~/.local/share/apphome)
      --socket <path>  the socket (default: $APPHOME_SOCKET, else
                       $XDG_RUNTIME_DIR/apphome/prefsd.sock)
      -h, --help       print this help

    With systemd socket activation (LISTEN_PID, LISTEN_FDS) prefsd serves the
    socket it is given. SIGTERM or SIGINT stops it; every acknowledged write
    is already on disk.

    """

    /// What `prefsd` reads from its environment.
    public struct Environment: Sendable {
        public var variables: [String: String]
        public var pid: Int32
        public var uid: UInt32
        public init(variables: [String: String], pid: Int32, uid: UInt32) {
            self.variables = variables; self.pid = pid; self.uid = uid
        }
    }

    /// Runs prefsd until it is told to stop; returns the exit status.
    public static func run(_ arguments: [String], environment: Environment, console: Console) -> Int32 {
        do {
            var rest = arguments[...]
            var root: String?, socket: String?
            func value(_ name: String) throws(CommandFailure) -> String {
                guard let v = rest.popFirst(), !v.isEmpty else { throw .usage("option \(name) needs a value") }
                return v
            }
            while let arg = rest.popFirst() {
                switch arg {
                case "-h", "--help", "help":
                    console.out(help)
                    return 0
                case "--foreground": break
                case "--root": root = try value("--root")
                case "--socket": socket = try value("--socket")
                default:
                    if arg.hasPrefix("--root=") { root = String(arg.dropFirst(7)) }
                    else if arg.hasPrefix("--socket=") { socket = String(arg.dropFirst(9)) }
                    else { throw CommandFailure.usage("unknown argument \(arg)") }
                }
            }
            let v = environment.variables
            guard let root = root ?? defaultRoot(v) else {
                throw CommandFailure.failure("cannot find the AppHome root: set APPHOME_ROOT or HOME, or pass --root")
            }
            guard let socketPath = SocketLocation.resolve(option: socket, apphomeSocket: v["APPHOME_SOCKET"], runtimeDirectory: v["XDG_RUNTIME_DIR"]) else {
                throw CommandFailure.failure("cannot find where to put the socket: set XDG_RUNTIME_DIR or APPHOME_SOCKET, or pass --socket")
            }
            var configuration = ServerConfiguration(root: root, socketPath: socketPath,
                                                    inheritedListener: inheritedListener(v, pid: environment.pid),
                                                    ownerUID: environment.uid) { line in
                let text = line + "\n"
                _ = text.withCString { write(2, $0, strlen($0)) }
            }
            configuration.maximumClients = 1000
            configuration.keyPolicy = DeviceKeyPolicy.forEnvironment(v)
            configuration.writePolicy = SettingsWritePolicy(root: root)
            let server: PrefsServer
            do { server = try PrefsServer(configuration: configuration) } catch {
                throw CommandFailure.failure(error.description)
            }
            server.run()
            return 0
        } catch let failure as CommandFailure {
            return failure.report(command: "prefsd", usage: help, to: console)
        } catch {
            return CommandFailure.failure("\(error)").report(command: "prefsd", usage: help, to: console)
        }
    }

    static func defaultRoot(_ v: [String: String]) -> String? { DomainResolver.defaultRoot(variables: v) }

    /// The listening socket systemd passed (fd 3), when `LISTEN_PID` is
    /// this process and `LISTEN_FDS` is at least 1.
    static func inheritedListener(_ v: [String: String], pid: Int32) -> Int32? {
        guard let p = v["LISTEN_PID"].flatMap({ Int32($0) }), p == pid,
              let n = v["LISTEN_FDS"].flatMap({ Int($0) }), n >= 1 else { return nil }
        return 3
    }
}
