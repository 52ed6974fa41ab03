#if canImport(Glibc)
import Glibc
#endif
import AppHomeSystem
import CommandSupport
import Containers
import Keychain
import KeychainSecretService
import Preferences
import PrefsProtocol
import PrefsService
import SettingsBundle

/// The `prefsd` command line: options, socket activation, then the service.
public enum PrefsdCommand {
    /// The options of `prefsd` (it has no verbs but `help`): what its help,
    /// `prefsd.8` and the completions are checked against.
    public static let reference = CommandReference(
        command: "prefsd", options: ["--foreground", "--root", "--socket", "--credential-socket", "--help", "-h", "--version"], verbs: [.init("help")])

    static let help = """
    usage: prefsd [--foreground] [--root <dir>] [--socket <path>] [--credential-socket <path>|none]

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
      --credential-socket <path>|none
                       where to serve systemd credentials (LoadCredential=;
                       default: credentials.sock beside the socket, so
                       $XDG_RUNTIME_DIR/apphome/credentials.sock for a user and
                       /run/apphome/credentials.sock for a system instance
                       with --socket /run/apphome/prefsd.sock); none: no
                       credential socket. See docs/credentials.md.
      -h, --help       print this help (also: prefsd help)
      --version        print the version

    With systemd socket activation (LISTEN_PID, LISTEN_FDS) prefsd serves the
    socket it is given. SIGTERM or SIGINT stops it; every acknowledged write
    is already on disk. While it runs it keeps the keychain's open class
    keys (its keybag), dropping the whenUnlocked ones the moment the Secret
    Service collection locks.

    """

    /// What `prefsd` takes from outside, decided by its `main`.
    public struct Environment: Sendable {
        public var configuration: Configuration
        public var pid: Int32
        public var uid: UInt32
        public init(configuration: Configuration, pid: Int32, uid: UInt32) {
            self.configuration = configuration; self.pid = pid; self.uid = uid
        }
    }

    /// Runs prefsd until it is told to stop; returns the exit status.
    public static func run(_ arguments: [String], environment: Environment, console: Console) -> Int32 {
        do {
            var scanner = ArgumentScanner(arguments)
            var root: String?, socket: String?, credentialSocket: String?
            let options: [ArgumentScanner.Option] = [.init("-h"), .init("--help"), .init("help"), .init("--version"), .init("--foreground"),
                                                     .init("--root", .required("a value"), empty: "a value"),
                                                     .init("--socket", .required("a value"), empty: "a value"),
                                                     .init("--credential-socket", .required("a value"), empty: "a value")]
            for match in try scanner.allOptions(options, unexpected: { arg, _ in .usage("unknown argument \(arg)") }) {
                switch match.name {
                case "-h", "--help", "help":
                    console.out(help)
                    return 0
                case "--version":
                    console.out(AppHomeVersion.line(command: "prefsd"))
                    return 0
                case "--root": root = match.value
                case "--socket": socket = match.value
                case "--credential-socket": credentialSocket = match.value
                default: break
                }
            }
            let parsed = environment.configuration
            guard let root = root ?? parsed.root else {
                throw CommandFailure.failure("cannot find the AppHome root: set APPHOME_ROOT or HOME, or pass --root")
            }
            guard let socketPath = socket ?? parsed.socketPath else {
                throw CommandFailure.failure("cannot find where to put the socket: set XDG_RUNTIME_DIR or APPHOME_SOCKET, or pass --socket")
            }
            var configuration = ServerConfiguration(root: root, socketPath: socketPath,
                                                    inheritedListener: inheritedListener(parsed, pid: environment.pid),
                                                    ownerUID: environment.uid) { line in
                let text = line + "\n"
                _ = text.withCString { write(2, $0, strlen($0)) }
            }
            configuration.maximumClients = 1000
            if credentialSocket != "none" {
                configuration.credentialSocketPath = credentialSocket ?? FileSystem.parentDirectory(socketPath) + "/credentials.sock"
            }
            configuration.keyPolicy = DeviceKeyPolicy(configuration: parsed)
            // The keybag: class keys stay open while prefsd runs; the
            // whenUnlocked ones only while the Secret Service says unlocked.
            let keybag = Keybag()
            configuration.keyPolicy.keybag = keybag
            if configuration.keyPolicy.secretStore != nil {
                do throws(KeychainError) { try SecretServiceLockWatch.start(keybag: keybag) } catch {
                    configuration.log("prefsd: warning: cannot watch the Secret Service for locks (\(error)); every keychain call asks it")
                    configuration.keyPolicy.keybag = nil
                }
            }
            raiseDescriptorLimit()
            let managed = ManagedPreferences(directory: parsed.managedDirectory) { message in
                let text = "prefsd: warning: " + message + "\n"
                _ = text.withCString { write(2, $0, strlen($0)) }
            }
            configuration.managed = managed
            // A domain given by its file's path is checked as the named domain
            // (the registry looked at then, as it may have changed). The
            // registry is read again only when its file changed.
            let registry = RegistryCache(root: root)
            configuration.registryCache = registry
            configuration.writePolicy = CanonicalDomainPolicy(CombinedWritePolicy(ManagedWritePolicy(managed),
                                                                                  SettingsWritePolicy(root: root, registryCache: registry))) { domain in
                DomainResolver(root: root, appPreferencesDirectories: ContainerRegistry.preferencesDirectories(registry.current(), layout: ContainerLayout(root: root)))
                    .canonical(domain)
            }
            let server: PrefsServer
            do { server = try PrefsServer(configuration: configuration) } catch {
                throw CommandFailure.failure(error.description)
            }
            server.run()
            return 0
        } catch {
            return CommandFailure.report(error, command: "prefsd", help: reference.helpLine(for: nil), to: console)
        }
    }

    /// Raises the soft limit on open descriptors to the hard one: 1,000
    /// preference clients and the credential socket's connections fit.
    static func raiseDescriptorLimit() {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < limit.rlim_max else { return }
        limit.rlim_cur = limit.rlim_max
        _ = setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
    }

    /// The listening socket systemd passed (fd 3), when `LISTEN_PID` is
    /// this process and `LISTEN_FDS` is at least 1.
    static func inheritedListener(_ configuration: Configuration, pid: Int32) -> Int32? {
        guard let activation = configuration.socketActivation, activation.pid == pid, activation.count >= 1 else { return nil }
        return 3
    }
}
