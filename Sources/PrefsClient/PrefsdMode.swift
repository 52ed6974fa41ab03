import AppHomeSystem
import Preferences
import PrefsProtocol

/// Whether commands talk to prefsd (`APPHOME_PREFSD`).
public typealias PrefsdMode = Configuration.ServiceMode

/// How a command reaches the preferences, decided once from the environment.
public struct PrefsdSettings: Sendable, Equatable {
    public var mode: PrefsdMode
    /// The socket, or `nil` when nothing names one.
    public var socketPath: String?
    /// Seconds each call may wait for the service.
    public var timeout: Double

    public init(mode: PrefsdMode = .auto, socketPath: String?, timeout: Double = 30) {
        self.mode = mode; self.socketPath = socketPath; self.timeout = timeout
    }

    /// The settings of `configuration` (`APPHOME_PREFSD`, the socket).
    ///
    /// - Throws: ``PrefsdSettingsError`` for an unknown mode.
    public init(configuration: Configuration) throws(PrefsdSettingsError) {
        switch configuration.serviceMode {
        case .success(let mode): self.init(mode: mode, socketPath: configuration.socketPath)
        case .failure(.unknownServiceMode(let raw)): throw .unknownMode(raw)
        }
    }

    /// A session with prefsd for `root`, or `nil` when the commands should
    /// use the files (mode `off`, or mode `auto` and no service for this
    /// root answers).
    ///
    /// - Throws: ``PrefsClientError`` in mode `require` when no service answers.
    public func connect(root: String) throws(PrefsClientError) -> PrefsConnection? {
        switch mode {
        case .off: return nil
        case .auto:
            guard let socketPath else { return nil }
            return try? PrefsConnection(socketPath: socketPath, root: root, timeout: timeout)
        case .require:
            guard let socketPath else {
                throw .notRunning(socket: "(no socket: XDG_RUNTIME_DIR and APPHOME_SOCKET are unset)", reason: "APPHOME_PREFSD=require")
            }
            return try PrefsConnection(socketPath: socketPath, root: root, timeout: timeout)
        }
    }
}

/// A bad `APPHOME_PREFSD` value.
public enum PrefsdSettingsError: Error, Equatable, Sendable, CustomStringConvertible {
    case unknownMode(String)
    public var description: String { "APPHOME_PREFSD is \"\(self.value)\"; use off, auto or require" }
    var value: String { if case .unknownMode(let v) = self { return v }; return "" }
}
