#if canImport(Glibc)
import Glibc
#endif

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

/// The one way AppHome runs another program: `posix_spawn` (no `fork` in
/// Swift, no Foundation), waited for with `waitpid`.
///
/// - The child gets standard input, output and error as asked and the
///   descriptors in `passing` (as 3, 4, …); every other descriptor is closed
///   in the child, whether or not it was opened close-on-exec.
/// - Its signal mask is empty and `SIGPIPE` back at its default.
/// - A time limit kills it (with its process group, when it has one) and
///   reports ``Termination/timedOut``.
/// - A program that cannot be started is a ``SystemError`` naming it
///   (`ENOENT`: not found on `PATH`).
public final class ChildProcess {
    /// What the child reads on standard input.
    public enum Input: Sendable {
        /// This process's standard input.
        case inherit
        /// `/dev/null`.
        case null
        /// One end of a socket pair; the other is ``standardInput`` (send with
        /// `MSG_NOSIGNAL`: a child that has ended gives `EPIPE`, not a signal).
        case socket
    }

    /// Where the child's standard output or error goes.
    public enum Output: Sendable {
        /// This process's.
        case inherit
        /// `/dev/null`.
        case null
        /// A pipe, read by ``collect(timeout:abort:)``.
        case capture
    }

    /// What a finished child gave.
    public struct Outcome: Sendable {
        public var termination: Termination
        public var standardOutput: [UInt8]
        public var standardError: [UInt8]
    }

    /// The child's process id.
    public let pid: pid_t
    /// The write end of the child's standard input (``Input/socket``), or -1.
    public private(set) var standardInput: Int32
    private var standardOutput: Int32
    private var standardError: Int32
    private let ownGroup: Bool
    private var reaped = false

    private typealias FileAction = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32
    private typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32

    /// glibc ≥ 2.29 has `posix_spawn_file_actions_addchdir_np` and ≥ 2.34
    /// `posix_spawn_file_actions_addclosefrom_np`, which the Swift Glibc
    /// module does not declare: looked up at run time.
    private static let addChdir = CLibrary.function("posix_spawn_file_actions_addchdir_np", as: FileAction.self)
    private static let addCloseFrom = CLibrary.function("posix_spawn_file_actions_addclosefrom_np", as: CloseFrom.self)

    /// The environment this process hands its children: `environ`, read
    /// only to pass it on (configuration comes from ``Configuration``).
    public static func inheritedEnvironment() -> [String: String] {
        variables(of: environ)
    }

    /// The variables of a `NAME=value` block in `environ`'s form (a null
    /// pointer after the last entry); an entry without "=" is skipped, and
    /// a later entry of the same name wins.
    public static func variables(of block: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> [String: String] {
        var variables: [String: String] = [:]
        var cursor = block
        while let entry = cursor.pointee {
            // Split at the first "=" byte (POSIX), not by `Character`: a
            // grapheme-aware search of every variable cost more than the rest
            // of `apphome run`'s set-up, and "=" followed by a combining mark
            // is not a `Character` "=".
            if let eq = strchr(entry, Int32(UInt8(ascii: "="))) {
                let name = String(decoding: UnsafeRawBufferPointer(start: entry, count: entry.distance(to: eq)), as: UTF8.self)
                variables[name] = String(cString: eq + 1)
            }
            cursor += 1
        }
        return variables
    }

    /// Starts `arguments[0]` (looked up on this process's `PATH` when it has
    /// no `/`) with exactly `environment`, in `workingDirectory`.
    ///
    /// - Parameters:
    ///   - passing: descriptors the child gets, as 3, 4, … in this order.
    ///   - newProcessGroup: put the child in a process group of its own, so
    ///     that a time limit kills everything it started.
    public init(_ arguments: [String], environment: [String: String], workingDirectory: String? = nil,
                standardInput input: Input = .inherit, standardOutput output: Output = .inherit,
                standardError error: Output = .inherit, passing: [Int32] = [],
                newProcessGroup: Bool = false) throws(SystemError) {
        precondition(!arguments.isEmpty)
        var argv = arguments
        var opened: [Int32] = []          // closed whatever happens
        var parentEnds: [Int32] = []      // kept on success
        func fail(_ e: SystemError) -> SystemError {
            for fd in opened + parentEnds { close(fd) }
            return e
        }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }

        // Standard input, output, error.
        var stdinWrite: Int32 = -1, stdoutRead: Int32 = -1, stderrRead: Int32 = -1
        switch input {
        case .inherit: break
        case .null: posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        case .socket:
            var pair: [Int32] = [0, 0]
            guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0 else {
                throw fail(SystemError("socketpair", path: argv[0], errno: errno))
            }
            opened.append(pair[0]); parentEnds.append(pair[1])
            stdinWrite = pair[1]
            posix_spawn_file_actions_adddup2(&actions, pair[0], 0)
        }
        for (target, mode) in [(Int32(1), output), (Int32(2), error)] {
            switch mode {
            case .inherit: break
            case .null: posix_spawn_file_actions_addopen(&actions, target, "/dev/null", O_WRONLY, 0)
            case .capture:
                var fds: [Int32] = [0, 0]
                guard pipe(&fds) == 0 else { throw fail(SystemError("pipe", path: argv[0], errno: errno)) }
                for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
                opened.append(fds[1]); parentEnds.append(fds[0])
                if target == 1 { stdoutRead = fds[0] } else { stderrRead = fds[0] }
                posix_spawn_file_actions_adddup2(&actions, fds[1], target)
            }
        }
        // Passed descriptors: copied above the range they go to (a source in
        // that range would be overwritten by an earlier dup2), then dup2'd
        // down to 3, 4, …; dup2 clears close-on-exec in the child.
        let firstClosed = Int32(3 + passing.count)
        for (i, fd) in passing.enumerated() {
            let copy = fcntl(fd, F_DUPFD_CLOEXEC, firstClosed)
            guard copy >= 0 else { throw fail(SystemError("fcntl F_DUPFD_CLOEXEC", path: "descriptor \(fd)", errno: errno)) }
            opened.append(copy)
            posix_spawn_file_actions_adddup2(&actions, copy, Int32(3 + i))
        }
        // Everything else is closed in the child.
        if let addCloseFrom = Self.addCloseFrom {
            let rc = addCloseFrom(&actions, firstClosed)
            guard rc == 0 else { throw fail(SystemError("posix_spawn_file_actions_addclosefrom_np", path: argv[0], errno: rc)) }
        } else {
            for fd in Self.openDescriptors() where fd >= firstClosed { posix_spawn_file_actions_addclose(&actions, fd) }
        }
        if let dir = workingDirectory {
            if let addChdir = Self.addChdir {
                let rc = dir.withCString { addChdir(&actions, $0) }
                guard rc == 0 else { throw fail(SystemError("posix_spawn_file_actions_addchdir_np", path: dir, errno: rc)) }
            } else {
                argv = ["/bin/sh", "-c", "cd \"$0\" && exec \"$@\"", dir] + argv
            }
        }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var flags = Int32(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF)
        if newProcessGroup {
            flags |= Int32(POSIX_SPAWN_SETPGROUP)
            posix_spawnattr_setpgroup(&attributes, 0)
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
            cEnv.withUnsafeBufferPointer { e in posix_spawnp(&pid, argv[0], &actions, &attributes, a.baseAddress!, e.baseAddress!) }
        }
        guard rc == 0 else { throw fail(SystemError("posix_spawn", path: arguments[0], errno: rc)) }
        for fd in opened { close(fd) }
        self.pid = pid
        self.standardInput = stdinWrite
        self.standardOutput = stdoutRead
        self.standardError = stderrRead
        self.ownGroup = newProcessGroup
    }

    deinit {
        for fd in [standardInput, standardOutput, standardError] where fd >= 0 { close(fd) }
    }

    /// The descriptors open in this process (`/proc/self/fd`), for a glibc
    /// without `posix_spawn_file_actions_addclosefrom_np`.
    private static func openDescriptors() -> [Int32] {
        guard let dir = opendir("/proc/self/fd") else { return [] }
        defer { closedir(dir) }
        let own = dirfd(dir)
        var out: [Int32] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in String(cString: raw.bindMemory(to: CChar.self).baseAddress!) }
            if let fd = Int32(name), fd != own { out.append(fd) }
        }
        return out
    }

    /// Closes the write end of standard input: the child reads its end.
    public func closeStandardInput() {
        if standardInput >= 0 { close(standardInput); standardInput = -1 }
    }

    /// Kills the child (with its process group, when it has its own) with `SIGKILL`.
    public func kill() {
        guard !reaped else { return }
        _ = ownGroup ? Glibc.kill(-pid, SIGKILL) : Glibc.kill(pid, SIGKILL)
    }

    /// Waits for the child; with a `timeout` (seconds), kills it (and its
    /// process group) when it runs longer.
    public func wait(timeout: Double? = nil) throws(SystemError) -> Termination {
        var status: Int32 = 0
        guard let timeout else {
            while waitpid(pid, &status, 0) < 0 {
                guard errno == EINTR else { throw SystemError("waitpid", path: "\(pid)", errno: errno) }
            }
            reaped = true
            return Self.decode(status)
        }
        let deadline = SystemClock.monotonicSeconds() + timeout
        var pause = timespec(tv_sec: 0, tv_nsec: 1_000_000)
        while true {
            let r = waitpid(pid, &status, WNOHANG)
            if r == pid { reaped = true; return Self.decode(status) }
            if r < 0 && errno != EINTR { throw SystemError("waitpid", path: "\(pid)", errno: errno) }
            if SystemClock.monotonicSeconds() >= deadline {
                kill()
                while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
                reaped = true
                return .timedOut
            }
            nanosleep(&pause, nil)
            if pause.tv_nsec < 20_000_000 { pause.tv_nsec *= 2 }
        }
    }

    /// Closes standard input, reads the captured output and error to their
    /// ends and waits for the child; kills it after `timeout` seconds, or as
    /// soon as `abort` says yes to what it wrote on standard error so far.
    public func collect(timeout: Double, abort: (String) -> Bool = { _ in false }) throws(SystemError) -> Outcome {
        closeStandardInput()
        defer {
            if standardOutput >= 0 { close(standardOutput); standardOutput = -1 }
            if standardError >= 0 { close(standardError); standardError = -1 }
        }
        var out: [UInt8] = []
        var err: [UInt8] = []
        var open = [standardOutput, standardError].filter { $0 >= 0 }
        let deadline = SystemClock.monotonicSeconds() + timeout
        var killed: Termination?
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while !open.isEmpty {
            var fds = open.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            let left = deadline - SystemClock.monotonicSeconds()
            if left <= 0 {
                kill()
                killed = .timedOut
                break
            }
            let n = poll(&fds, nfds_t(fds.count), Int32(min(left, 1) * 1000))
            if n < 0 && errno != EINTR { throw SystemError("poll", path: "\(pid)", errno: errno) }
            for p in fds where p.revents != 0 {
                let got = buffer.withUnsafeMutableBytes { read(p.fd, $0.baseAddress, $0.count) }
                if got > 0 {
                    if p.fd == standardOutput { out += buffer[0..<got] } else { err += buffer[0..<got] }
                } else if got == 0 || (errno != EINTR && errno != EAGAIN) {
                    open.removeAll { $0 == p.fd }
                }
            }
            if killed == nil, standardError >= 0, abort(String(decoding: err, as: UTF8.self)) {
                kill()
                killed = .signalled(SIGKILL)
            }
        }
        let status = try wait()
        return Outcome(termination: killed ?? status, standardOutput: out, standardError: err)
    }

    private static func decode(_ status: Int32) -> Termination {
        let signal = status & 0x7F
        return signal == 0 ? .exited((status >> 8) & 0xFF) : .signalled(signal)
    }
}
