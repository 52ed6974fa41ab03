import AppHomeSystem

/// Where prefsd's socket is: `--socket`, else `APPHOME_SOCKET`, else
/// `$XDG_RUNTIME_DIR/apphome/prefsd.sock`.
public enum SocketLocation {
    /// The socket path, or `nil` when nothing names one.
    ///
    /// - Parameters:
    ///   - option: the `--socket` argument, if given.
    ///   - apphomeSocket: `APPHOME_SOCKET`.
    ///   - runtimeDirectory: `XDG_RUNTIME_DIR` (ignored unless absolute).
    public static func resolve(option: String? = nil, apphomeSocket: String?, runtimeDirectory: String?) -> String? {
        Configuration.socketPath(option: option, apphomeSocket: apphomeSocket, runtimeDirectory: runtimeDirectory)
    }
}
