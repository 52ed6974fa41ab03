#if canImport(Glibc)
import Glibc
#endif
import AppHomeSystem
import Preferences

/// The outcome of one uninstall hook.
public struct HookResult: Equatable, Sendable {
    /// The hook's path.
    public var path: String
    /// How it ended; `nil` when it could not be started.
    public var termination: Termination?
    /// Why it could not be started, if it could not.
    public var startFailure: String?

    /// Whether the hook ran and exited with status 0.
    public var succeeded: Bool { termination == .exited(0) }

    /// A one-line description of a failure, for stderr.
    public var failureDescription: String? {
        if let startFailure { return "uninstall hook \(path) could not be started: \(startFailure)" }
        switch termination {
        case .exited(0)?, nil: return nil
        case .exited(let s)?: return "uninstall hook \(path) failed with exit status \(s)"
        case .signalled(let sig)?: return "uninstall hook \(path) was killed by signal \(sig)"
        case .timedOut?: return "uninstall hook \(path) timed out and was killed"
        }
    }
}

extension Uninstaller {
    /// Runs the executables in `directory`, sorted by name.
    func runHooks(in directory: String, environment: [String: String], timeout: Double) throws(ContainersError) -> [HookResult] {
        let names = try containersErrors { try FileSystem.directoryEntries(directory) }
        var results: [HookResult] = []
        for name in names.sorted(by: { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }) where !name.hasPrefix(".") {
            let path = directory + "/" + name
            var st = stat()
            guard stat(path, &st) == 0, st.st_mode & S_IFMT == S_IFREG, st.st_mode & 0o111 != 0 else { continue }
            do {
                let hook = try ChildProcess([path], environment: environment, workingDirectory: "/", newProcessGroup: true)
                let termination = try hook.wait(timeout: timeout)
                results.append(HookResult(path: path, termination: termination, startFailure: nil))
            } catch {
                results.append(HookResult(path: path, termination: nil, startFailure: error.reason))
            }
        }
        return results
    }
}
