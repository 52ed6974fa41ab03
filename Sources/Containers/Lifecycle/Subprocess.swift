#if canImport(Glibc)
import Glibc
#endif
import AppHomeSystem
import Preferences

/// How a child process ended.
public enum Termination: Equatable, Sendable {
    /// It called `exit` with this status.
    case exited(Int32)
    /// A signal ended it.
    case signalled(Int32)
    /// It ran past its time limit and was killed.
    case timedOut

    /// The status a shell would report: the exit status, or 128 + signal.
    public var shellStatus: Int32 {
        switch self {
        case .exited(let s): return s
        case .signalled(let sig): return 128 + sig
        case .timedOut: return 128 + SIGKILL
        }
    }
}

/// Starts programs with `posix_spawn` and waits for them with `waitpid`;
/// no `fork` in Swift, no Foundation.
enum Subprocess {
    private typealias AddChdir = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32

    /// glibc ≥ 2.29 has `posix_spawn_file_actions_addchdir_np`, but the
    /// Swift Glibc module does not declare it, so it is looked up at run time.
    private static let addChdir: AddChdir? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addchdir_np") else { return nil }
        return unsafeBitCast(symbol, to: AddChdir.self)
    }()

    /// Starts `arguments[0]` (looked up in the caller's `PATH` when it has
    /// no `/`) with exactly `environment`, in `workingDirectory`.
    ///
    /// - Parameter newProcessGroup: put the child in its own process group,
    ///   so that a timeout can kill everything it started.
    /// - Returns: the child's process id.
    /// The environment this process hands its children: `environ`, read
    /// only to pass it on (configuration comes from ``Configuration``).
    static func inheritedEnvironment() -> [String: String] {
        var variables: [String: String] = [:]
        var cursor = environ
        while let entry = cursor.pointee {
            let pair = String(cString: entry)
            if let eq = pair.firstIndex(of: "=") { variables[String(pair[..<eq])] = String(pair[pair.index(after: eq)...]) }
            cursor += 1
        }
        return variables
    }

    ///
    /// - Parameter detached: a new session, standard input, output and error on
    ///   `/dev/null` (a daemon that outlives the caller; prefsd, which logs to
    ///   the journal under systemd, is then quiet).
    static func spawn(_ arguments: [String], environment: [String: String], workingDirectory: String?,
                      newProcessGroup: Bool = false, detached: Bool = false) throws -> pid_t {
        precondition(!arguments.isEmpty)
        var argv = arguments
        var chdirAction: String? = workingDirectory
        if let dir = workingDirectory, addChdir == nil {
            argv = ["/bin/sh", "-c", "cd \"$0\" && exec \"$@\"", dir] + arguments
            chdirAction = nil
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if let dir = chdirAction, let addChdir {
            let rc = dir.withCString { addChdir(&actions, $0) }
            guard rc == 0 else { throw SystemError("posix_spawn_file_actions_addchdir_np", path: dir, errno: rc) }
        }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var flags = Int32(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF)
        if newProcessGroup {
            flags |= Int32(POSIX_SPAWN_SETPGROUP)
            posix_spawnattr_setpgroup(&attributes, 0)
        }
        if detached {
            flags |= 0x80  // POSIX_SPAWN_SETSID (glibc ≥ 2.26)
            for fd: Int32 in [0, 1, 2] { posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", O_RDWR, 0) }
        }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGPIPE)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(flags))

        let cArgs = argv.map { strdup($0) } + [nil]
        let cEnv = environment.sorted { $0.key < $1.key }.map { strdup($0.key + "=" + $0.value) } + [nil]
        defer {
            cArgs.forEach { free($0) }
            cEnv.forEach { free($0) }
        }
        var pid: pid_t = 0
        let rc = cArgs.withUnsafeBufferPointer { a in
            cEnv.withUnsafeBufferPointer { e in
                posix_spawnp(&pid, argv[0], &actions, &attributes, a.baseAddress!, e.baseAddress!)
            }
        }
        guard rc == 0 else { throw SystemError("posix_spawn", path: argv[0], errno: rc) }
        return pid
    }

    /// `pipe`, both ends close-on-exec (the Swift Glibc module has no `pipe2`).
    static func pipeCloseOnExec(_ fds: inout [Int32]) -> Bool {
        guard pipe(&fds) == 0 else { return false }
        _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)
        return true
    }

    /// Runs `arguments` (stdin and stderr on `/dev/null`) and returns what
    /// it printed on stdout (at most 1 MiB), or `nil` when it failed.
    static func output(_ arguments: [String]) throws -> String? {
        var fds: [Int32] = [-1, -1]
        guard Subprocess.pipeCloseOnExec(&fds) else { throw SystemError("pipe2", path: "", errno: errno) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, fds[1], 1)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        let cArgs = arguments.map { strdup($0) } + [nil]
        defer { cArgs.forEach { free($0) } }
        var noEnvironment: [UnsafeMutablePointer<CChar>?] = [nil]
        var pid: pid_t = 0
        let rc = cArgs.withUnsafeBufferPointer { a in posix_spawn(&pid, arguments[0], &actions, nil, a.baseAddress!, &noEnvironment) }
        close(fds[1])
        defer { close(fds[0]) }
        guard rc == 0 else { throw SystemError("posix_spawn", path: arguments[0], errno: rc) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16_384)
        while bytes.count < 1 << 20 {
            let n = chunk.withUnsafeMutableBytes { read(fds[0], $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            bytes += chunk[0..<n]
        }
        guard case .exited(0) = try wait(pid) else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Waits for `pid`; with a `timeout` (seconds), kills its process group
    /// (or the process) with `SIGKILL` when it runs longer.
    static func wait(_ pid: pid_t, timeout: Double? = nil, killGroup: Bool = false) throws -> Termination {
        var status: Int32 = 0
        guard let timeout else {
            while waitpid(pid, &status, 0) < 0 {
                guard errno == EINTR else { throw SystemError("waitpid", path: "\(pid)", errno: errno) }
            }
            return decode(status)
        }
        let deadline = SystemClock.monotonicSeconds() + timeout
        var pause = timespec(tv_sec: 0, tv_nsec: 1_000_000)
        while true {
            let r = waitpid(pid, &status, WNOHANG)
            if r == pid { return decode(status) }
            if r < 0 && errno != EINTR { throw SystemError("waitpid", path: "\(pid)", errno: errno) }
            if SystemClock.monotonicSeconds() >= deadline {
                _ = killGroup ? kill(-pid, SIGKILL) : kill(pid, SIGKILL)
                while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
                return .timedOut
            }
            nanosleep(&pause, nil)
            if pause.tv_nsec < 20_000_000 { pause.tv_nsec *= 2 }
        }
    }

    private static func decode(_ status: Int32) -> Termination {
        let signal = status & 0x7F
        return signal == 0 ? .exited((status >> 8) & 0xFF) : .signalled(signal)
    }
}
