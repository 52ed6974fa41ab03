import Containers
import Keychain
import Preferences
import PrefsProtocol
import PropertyList

/// Everything the service needs from outside, decided by `main` (libraries
/// never read the environment).
public struct ServerConfiguration: Sendable {
    /// The AppHome root whose preferences are served.
    public var root: String
    /// Where the socket is (or, with socket activation, was) bound.
    public var socketPath: String
    /// A listening socket handed over by systemd (`LISTEN_FDS`), used
    /// instead of binding ``socketPath``.
    public var inheritedListener: Int32?
    /// Where the credential socket is bound (systemd's `LoadCredential=`
    /// protocol, docs/credentials.md), or `nil` for none:
    /// `$XDG_RUNTIME_DIR/apphome/credentials.sock` for a user's prefsd,
    /// `/run/apphome/credentials.sock` for a system instance.
    public var credentialSocketPath: String?
    /// The largest frame payload accepted.
    public var maximumPayload: Int = Frame.defaultMaximumPayload
    /// Seconds a client may take to finish a frame it started.
    public var partialFrameTimeout: Double = 5
    /// Seconds a client may leave replies unread while they pile up.
    public var stalledWriteTimeout: Double = 10
    /// Bytes of unread replies at which the service stops reading a
    /// client's requests until it reads: a client that sends without
    /// reading cannot make the queue grow.
    public var clientOutputPauseBytes: Int = 1 << 20
    /// Bytes of unread replies past which a client is dropped at once
    /// (change notices keep coming while requests are paused). Above the
    /// pause bound by more than the largest reply, so one big read is fine.
    public var clientOutputDropBytes: Int = Frame.defaultMaximumPayload + (4 << 20)
    /// Bytes of unread replies of all clients together at which every
    /// client with replies waiting is paused: 100 flooding clients hold
    /// this much, not 100 times the per-client bound. A client that reads
    /// its replies is never paused by it.
    public var totalOutputPauseBytes: Int = 32 << 20
    /// Connections served at once; more are refused.
    public var maximumClients: Int = 1000
    /// The uid served (besides root's): the service's own.
    public var ownerUID: UInt32
    /// Whether SIGTERM, SIGINT and SIGHUP stop the service (the daemon's
    /// `main`); an in-process service leaves the process's signals alone.
    public var handleSignals = true
    /// Where the keychain's device key is kept, for keychain calls and
    /// the keychain cleanup of an uninstall: the daemon's own choice (its
    /// `main` decides), never a client's. The default: the key file, never
    /// the Secret Service.
    public var keyPolicy: DeviceKeyPolicy = .fileOnly
    /// The rules every write must keep (the domains' settings schemas),
    /// applied by the one commit path to every client's writes.
    public var writePolicy: (any WritePolicy)?
    /// The registry as the service last read it, shared by the write policy
    /// and the keychain calls (`nil`: the service makes its own).
    public var registryCache: RegistryCache?
    /// The administrator's forced values: the service watches their
    /// directory and tells subscribers when a domain's managed values
    /// change (the write policy refuses writes of them).
    public var managed: ManagedPreferences?
    /// The clock that dates keychain items (tests pin it).
    public var keychainClock: @Sendable () -> PlistDate = ContainerManager.systemClock
    /// Whether the service runs the synced key-value stores' merge passes
    /// as logs arrive in the sync folder (`apphome sync`); on by default.
    public var syncPasses = true
    /// Where diagnostics go (one line each, no trailing newline).
    public var log: @Sendable (String) -> Void

    public init(root: String, socketPath: String, inheritedListener: Int32? = nil, ownerUID: UInt32,
                log: @escaping @Sendable (String) -> Void) {
        self.root = root
        self.socketPath = socketPath
        self.inheritedListener = inheritedListener
        self.ownerUID = ownerUID
        self.log = log
    }
}
