/// Everything AppHome takes from the process environment, read once by a
/// command's `main` and passed down typed. No library reads the environment:
/// they get these fields (or values built from them) instead.
///
/// | Variable | Field |
/// |---|---|
/// | `APPHOME_ROOT`, `XDG_DATA_HOME`, `HOME` | ``root`` (see ``Paths/defaultRoot(apphomeRoot:xdgDataHome:home:)``) |
/// | `APPHOME_PREFSD` | ``serviceMode`` (`off`, `auto`, `require`) |
/// | `APPHOME_SOCKET`, `XDG_RUNTIME_DIR` | ``socketPath`` |
/// | `APPHOME_KEYCHAIN_KEY_STORE` | ``keyStore`` (`file` forces the key file) |
/// | `DBUS_SESSION_BUS_ADDRESS` | ``sessionBusAvailable`` |
/// | `APPHOME_KEYCHAIN_KEY_CACHE` | ``keyCacheSeconds`` (unset: until reboot) |
/// | `APPHOME_BUNDLE_ID` | ``bundleIdentifier`` (set by `apphome run`; inside a sandbox, the sandbox's app instead) |
/// | `APPHOME_HOME` | ``appHome`` (set by `apphome run`; inside a sandbox, the sandbox's home instead) |
///
/// Besides the environment, ``sandbox`` is the file `/.apphome-info` of the
/// process's own root: inside an app's sandbox it decides which app the
/// command acts for, whatever the environment says.
/// | `LISTEN_PID`, `LISTEN_FDS` | ``socketActivation`` (systemd, for prefsd) |
/// | `APPHOME_MANAGED_DIR` | ``managedDirectory`` (default ``defaultManagedDirectory``) |
/// | `PATH`, `HOME`, `LANG`, `LC_ALL`, `TZ`, `TMPDIR` | ``hookVariables`` (what uninstall hooks are given) |
public struct Configuration: Sendable, Equatable {
    /// How commands reach prefsd.
    public enum ServiceMode: String, Sendable, CaseIterable {
        /// Never: always the files, under their lock.
        case off
        /// When its socket answers for the same root; otherwise the files.
        case auto
        /// Always: fail when prefsd does not answer.
        case require
    }

    /// Where a new keychain's device root key goes.
    public enum KeyStore: Sendable, Equatable {
        /// The Secret Service when a session bus is reachable, else the key file.
        case automatic
        /// The key file, even when a Secret Service is reachable.
        case file
    }

    /// The AppHome root when no `--root` is given, or `nil` when nothing names one.
    public var root: String?
    /// `APPHOME_PREFSD`, or the text it held when it is none of the modes
    /// (reported when a command needs the service, so `help` still works).
    public var serviceMode: Result<ServiceMode, ConfigurationError>
    /// prefsd's socket, or `nil` when nothing names one.
    public var socketPath: String?
    public var keyStore: KeyStore
    /// Whether a D-Bus session bus is set (the Secret Service may answer).
    public var sessionBusAvailable: Bool
    /// At most how many seconds keychain class keys stay in the kernel's
    /// user keyring (`nil`: until reboot or logout; 0: not kept).
    public var keyCacheSeconds: UInt32?
    /// The app a command acts for, when started inside `apphome run`.
    public var bundleIdentifier: String?
    /// The app home a command runs in, when started inside `apphome run`.
    public var appHome: String?
    /// The app's sandbox this command runs in (``SandboxInfo/current()``),
    /// or `nil` outside any.
    public var sandbox: SandboxInfo?
    /// systemd socket activation: the process it was meant for and how many
    /// descriptors it passed.
    public var socketActivation: (pid: Int32, count: Int)?
    /// The variables uninstall hooks are given (besides AppHome's own).
    public var hookVariables: [String: String] {
        get { Dictionary(uniqueKeysWithValues: zip(hookNames, hookValues)) }
        set {
            hookNames = Array(newValue.keys)
            hookValues = hookNames.map { newValue[$0]! }
        }
    }
    /// ``hookVariables`` as names and values side by side: parsing the
    /// environment at start-up builds no dictionary and no array of pairs
    /// (each a generic type the runtime would instantiate first).
    private var hookNames: [String]
    private var hookValues: [String]
    /// The administrator's directory of managed (forced) preferences.
    public var managedDirectory: String

    /// Where managed preferences are when `APPHOME_MANAGED_DIR` is unset.
    public static let defaultManagedDirectory = "/etc/apphome/managed"

    /// Whether the command runs in an app's context (inside `apphome run`
    /// or `launch`): then the user's login keychain is out of its reach.
    public var inAppContext: Bool { sandbox != nil || bundleIdentifier != nil || appHome != nil }

    /// The names copied into ``hookVariables``.
    public static let hookVariableNames = ["PATH", "HOME", "LANG", "LC_ALL", "TZ", "TMPDIR"]

    public init(root: String? = nil, serviceMode: Result<ServiceMode, ConfigurationError> = .success(.auto),
                socketPath: String? = nil, keyStore: KeyStore = .automatic, sessionBusAvailable: Bool = false,
                keyCacheSeconds: UInt32? = nil, bundleIdentifier: String? = nil, appHome: String? = nil,
                socketActivation: (pid: Int32, count: Int)? = nil, hookVariables: [String: String] = [:],
                managedDirectory: String = Configuration.defaultManagedDirectory, sandbox: SandboxInfo? = nil) {
        self.root = root
        self.serviceMode = serviceMode
        self.socketPath = socketPath
        self.keyStore = keyStore
        self.sessionBusAvailable = sessionBusAvailable
        self.keyCacheSeconds = keyCacheSeconds
        self.bundleIdentifier = bundleIdentifier
        self.appHome = appHome
        self.sandbox = sandbox
        if let sandbox {
            // The sandbox names the app; the environment cannot change it.
            self.bundleIdentifier = sandbox.bundleIdentifier
            self.appHome = sandbox.home
        }
        self.socketActivation = socketActivation
        self.hookNames = []
        self.hookValues = []
        self.managedDirectory = managedDirectory
        if !hookVariables.isEmpty { self.hookVariables = hookVariables }
    }

    /// Parses the variables `variable` looks up (the mains pass `getenv`).
    public init(variable: (String) -> String?) {
        func value(_ name: String) -> String? {
            guard let v = variable(name), !v.isEmpty else { return nil }
            return v
        }
        let mode = value("APPHOME_PREFSD")
        self.init(
            root: Paths.defaultRoot(apphomeRoot: value("APPHOME_ROOT"), xdgDataHome: value("XDG_DATA_HOME"), home: value("HOME")),
            serviceMode: mode.map { m in ServiceMode(rawValue: m.lowercased()).map { .success($0) } ?? .failure(.unknownServiceMode(m)) } ?? .success(.auto),
            socketPath: Self.socketPath(option: nil, apphomeSocket: value("APPHOME_SOCKET"), runtimeDirectory: value("XDG_RUNTIME_DIR")),
            keyStore: value("APPHOME_KEYCHAIN_KEY_STORE") == "file" ? .file : .automatic,
            sessionBusAvailable: value("DBUS_SESSION_BUS_ADDRESS") != nil,
            keyCacheSeconds: value("APPHOME_KEYCHAIN_KEY_CACHE").map { UInt32($0) ?? 0 },
            bundleIdentifier: value("APPHOME_BUNDLE_ID"),
            appHome: value("APPHOME_HOME"),
            socketActivation: value("LISTEN_PID").flatMap(Int32.init).flatMap { pid in value("LISTEN_FDS").flatMap(Int.init).map { (pid, $0) } },
            managedDirectory: value("APPHOME_MANAGED_DIR") ?? Self.defaultManagedDirectory,
            sandbox: SandboxInfo.current())
        // Set but empty counts here: a hook is given `LANG=` as the command was.
        for name in Self.hookVariableNames {
            if let v = variable(name) {
                hookNames.append(name)
                hookValues.append(v)
            }
        }
    }

    /// prefsd's socket: `--socket`, else `APPHOME_SOCKET`, else
    /// `$XDG_RUNTIME_DIR/apphome/prefsd.sock` (an absolute one only).
    public static func socketPath(option: String?, apphomeSocket: String?, runtimeDirectory: String?) -> String? {
        if let option, !option.isEmpty { return option }
        if let s = apphomeSocket, !s.isEmpty { return s }
        if let r = runtimeDirectory, r.hasPrefix("/") { return r + "/apphome/prefsd.sock" }
        return nil
    }

    public static func == (a: Configuration, b: Configuration) -> Bool {
        a.root == b.root && a.serviceMode == b.serviceMode && a.socketPath == b.socketPath && a.keyStore == b.keyStore
            && a.sessionBusAvailable == b.sessionBusAvailable && a.keyCacheSeconds == b.keyCacheSeconds
            && a.bundleIdentifier == b.bundleIdentifier && a.appHome == b.appHome && a.socketActivation?.pid == b.socketActivation?.pid
            && a.socketActivation?.count == b.socketActivation?.count
            && (a.hookNames == b.hookNames ? a.hookValues == b.hookValues : a.hookVariables == b.hookVariables)
            && a.managedDirectory == b.managedDirectory && a.sandbox == b.sandbox
    }
}

/// A variable that holds none of the values it may.
public enum ConfigurationError: Error, Equatable, Sendable, CustomStringConvertible {
    case unknownServiceMode(String)

    public var description: String {
        switch self {
        case .unknownServiceMode(let v): return "APPHOME_PREFSD is \"\(v)\"; use off, auto or require"
        }
    }
}
