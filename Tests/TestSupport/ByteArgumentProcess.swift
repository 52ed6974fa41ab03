#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// Runs an executable with arguments given as raw bytes.
///
/// Foundation's `Process` takes `String`s, so it can never pass an argument
/// that is not valid UTF-8; this spawns with `posix_spawn` and hands the
/// bytes to the kernel as they are.
public enum ByteArgumentProcess {
    /// What the child left behind.
    public struct Result: Sendable, CustomStringConvertible {
        /// The exit status, or 128 + the signal number when it was killed.
        public var status: Int32
        public var stdout: [UInt8]
        public var stderr: [UInt8]

        public var standardError: String { String(decoding: stderr, as: UTF8.self) }
        public var standardOutput: String { String(decoding: stdout, as: UTF8.self) }

        public var description: String {
            "status \(status)\n--- stdout ---\n\(standardOutput)\n--- stderr ---\n\(standardError)"
        }
    }

    public struct SpawnError: Error, CustomStringConvertible {
        public var description: String
    }

    /// Runs `executable` with `arguments` (after the program name) and
    /// `environment`, standard input from `/dev/null`, and waits for it
    /// (killing it after `timeout` seconds, which only a hung child reaches).
    public static func run(_ executable: String, _ arguments: [[UInt8]], environment: [String: String],
                           timeout: Double = 60) throws -> Result {
        let scratch = ScratchDirectory.make("byte-argv")
        defer { ScratchDirectory.remove(scratch) }
        let outPath = scratch + "/out", errPath = scratch + "/err"

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, errPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)

        // NUL-terminated copies that live until the spawn returns.
        let argv = ([Array(executable.utf8)] + arguments).map { bytes -> UnsafeMutablePointer<CChar>? in
            let p = UnsafeMutablePointer<CChar>.allocate(capacity: bytes.count + 1)
            bytes.withUnsafeBytes { raw in
                for (i, b) in raw.enumerated() { p[i] = CChar(bitPattern: b) }
            }
            p[bytes.count] = 0
            return p
        } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for p in argv { p?.deallocate() }
            for p in envp { free(p) }
        }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, executable, &actions, nil, argv, envp)
        guard spawned == 0 else { throw SpawnError(description: "posix_spawn \(executable): \(String(cString: strerror(spawned)))") }

        var waitStatus: Int32 = 0
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let r = waitpid(pid, &waitStatus, WNOHANG)
            if r == pid { break }
            if r < 0 && errno != EINTR { throw SpawnError(description: "waitpid: \(String(cString: strerror(errno)))") }
            if Date() > deadline {
                kill(pid, SIGKILL)
                _ = waitpid(pid, &waitStatus, 0)
                throw SpawnError(description: "\(executable) did not finish within \(Int(timeout)) s and was killed")
            }
            usleep(2_000)
        }
        // WIFEXITED / WEXITSTATUS / WTERMSIG, which Swift does not import as macros.
        let signal = waitStatus & 0x7F
        let status = signal == 0 ? (waitStatus >> 8) & 0xFF : 128 + signal
        let read = { (path: String) in [UInt8]((try? Data(contentsOf: URL(fileURLWithPath: path))) ?? Data()) }
        return Result(status: status, stdout: read(outPath), stderr: read(errPath))
    }
}

/// An argument as raw bytes: `text`'s UTF-8 followed by `tail`.
public func argumentBytes(_ text: String, _ tail: [UInt8] = []) -> [UInt8] { Array(text.utf8) + tail }
