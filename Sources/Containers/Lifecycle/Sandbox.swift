#if canImport(Glibc)
import Glibc
#endif
import AppHomeSystem

/// How `apphome run` and `apphome launch` start an app.
public struct RunOptions: Sendable, Equatable {
    /// Confine the app with bubblewrap (`false`: `--no-sandbox`).
    public var sandbox: Bool
    /// Share the network with the app (`false`: `--no-network`).
    public var network: Bool
    /// The session-bus names the app may talk to, through xdg-dbus-proxy
    /// (`--talk-name`); none: no session bus in the sandbox.
    public var talkNames: [String]
    /// prefsd's socket, bound into the sandbox as its one door (`nil`: none).
    public var prefsdSocket: String?
    /// Start prefsd when none answers on ``prefsdSocket`` (`APPHOME_PREFSD`
    /// is not `off`).
    public var startPrefsd: Bool
    /// The `prefsd` to start: a path, or a name looked up in `PATH`.
    public var prefsdProgram: String
    /// The `bwrap` to run: a path, or a name looked up in `PATH`.
    public var bubblewrap: String
    /// The `xdg-dbus-proxy` to run.
    public var dbusProxy: String

    public init(sandbox: Bool = true, network: Bool = true, talkNames: [String] = [], prefsdSocket: String? = nil,
                startPrefsd: Bool = false, prefsdProgram: String = "prefsd", bubblewrap: String = "bwrap",
                dbusProxy: String = "xdg-dbus-proxy") {
        self.sandbox = sandbox
        self.network = network
        self.talkNames = talkNames
        self.prefsdSocket = prefsdSocket
        self.startPrefsd = startPrefsd
        self.prefsdProgram = prefsdProgram
        self.bubblewrap = bubblewrap
        self.dbusProxy = dbusProxy
    }

    /// The bus names no app may be granted: the Secret Service holds the
    /// user's secrets (and gnome-keyring's own interface the same).
    public static let forbiddenBusNames = ["org.freedesktop.secrets", "org.gnome.keyring"]

    /// Checks a `--talk-name` value: a well-known bus name (or `NAME.*`),
    /// never one that reaches ``forbiddenBusNames``.
    public static func checkTalkName(_ name: String) throws(ContainersError) {
        let base = name.hasSuffix(".*") ? String(name.dropLast(2)) : name
        let elements = base.split(separator: ".", omittingEmptySubsequences: false)
        let valid = !base.isEmpty && base.utf8.count <= 255 && elements.count >= (name.hasSuffix(".*") ? 1 : 2)
            && elements.allSatisfy { e in
                !e.isEmpty && e.utf8.first.map { !($0 >= 0x30 && $0 <= 0x39) } == true
                    && e.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5a) || ($0 >= 0x61 && $0 <= 0x7a) || $0 == 0x5f || $0 == 0x2d }
            }
        guard valid else { throw .invalidTalkName(name, reason: "not a well-known D-Bus name (a.b.c, or a.b.* for a name and its children)") }
        for forbidden in forbiddenBusNames {
            let covers = name.hasSuffix(".*") ? (forbidden == base || forbidden.hasPrefix(base + ".")) : forbidden == name
            if covers || name == forbidden { throw .invalidTalkName(name, reason: "\(forbidden) holds the user's secrets and can never be granted to an app") }
        }
    }
}

/// Builds and starts an app's sandbox: bubblewrap's command line, the
/// seccomp filter, `/.apphome-info`, the filtered session bus, prefsd's
/// socket. See `docs/sandbox.md`.
struct SandboxLauncher {
    let layout: ContainerLayout
    let entry: RegistryEntry
    let home: ApplicationHome
    let groups: [(AppGroupIdentifier, GroupContainer)]
    let options: RunOptions
    /// The environment the app gets (``AppRunner/runEnvironment(for:base:)``).
    let environment: [String: String]
    /// The caller's environment (PATH to find programs, the session bus).
    let base: [String: String]

    /// The read-only pieces of `/etc` a program needs: name service, TLS
    /// certificates, time zone, fonts, the dynamic linker's cache and the
    /// alternatives `/usr/bin` links point into.
    static let etcFiles = [
        "/etc/passwd", "/etc/group", "/etc/nsswitch.conf", "/etc/hosts", "/etc/host.conf", "/etc/resolv.conf", "/etc/gai.conf",
        "/etc/localtime", "/etc/timezone", "/etc/ssl", "/etc/ca-certificates", "/etc/ca-certificates.conf", "/etc/fonts",
        "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/alternatives", "/etc/mime.types", "/etc/os-release",
        "/etc/locale.alias", "/etc/protocols", "/etc/services",
    ]

    /// The variables of the caller's environment an app keeps (besides
    /// those ``AppRunner/runEnvironment(for:base:)`` sets).
    static let keptVariables: Set<String> = ["PATH", "LANG", "LANGUAGE", "TERM", "COLORTERM", "TZ", "NO_COLOR", "APPHOME_PREFSD"]

    /// Where the filtered session bus is inside the sandbox.
    static let busPath = "/run/apphome/bus"

    /// Runs `command` in the sandbox and waits for it.
    ///
    /// bubblewrap reads `/.apphome-info` (its last mount) and the seccomp
    /// filter (just before it starts the app) from pipes, once it has made
    /// the namespaces: both are written after it is started, while it works,
    /// so their cost is not added to its own. `prepare` (what the home needs
    /// before the app runs) is called then too, before either is written:
    /// the app cannot start before it returns. `started` is called once both
    /// are written. Should `prepare` fail, bubblewrap is given neither and
    /// ends by itself (not killed: see below); should the
    /// info or the filter not be written (bubblewrap ended before it read
    /// them: it could not make the namespaces), the run fails as bubblewrap's
    /// failure. Either way the filter's pipe gets a byte that makes it no
    /// valid filter, so the app never starts.
    func run(_ command: [String], instance: String, prepare: () throws(ContainersError) -> Void,
             started: () -> Void) throws(ContainersError) -> Termination {
        let bwrap = try find(options.bubblewrap, what: "bubblewrap (Debian package bubblewrap)")
        var bus: BusProxy?
        defer { bus?.stop() }
        if !options.talkNames.isEmpty {
            bus = try BusProxy.start(program: try find(options.dbusProxy, what: "xdg-dbus-proxy (Debian package xdg-dbus-proxy)"),
                                     address: base["DBUS_SESSION_BUS_ADDRESS"], names: options.talkNames,
                                     runtimeDirectory: base["XDG_RUNTIME_DIR"], instance: instance)
        }
        let socket = try prefsdSocket()
        var env = environment.filter { Self.keptVariables.contains($0.key) || $0.key.hasPrefix("LC_") || Self.appVariables.contains($0.key) }
        if let socket { env["APPHOME_SOCKET"] = socket } else { env["APPHOME_PREFSD"] = "off" }
        if bus != nil { env["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=" + Self.busPath }

        // bubblewrap gets, as 3, 4 and 5, the info file's, the filter's and
        // the status pipe's ends; this process keeps the others.
        var fds: [Int32] = []
        defer { for fd in fds where fd >= 0 { close(fd) } }
        for _ in 0..<3 {
            var pair: [Int32] = [-1, -1]
            guard SandboxLauncher.pipeCloseOnExec(&pair) else { throw .system(SystemError("pipe2", path: "", errno: errno)) }
            fds += pair
        }
        let (infoRead, infoWrite, filterRead, filterWrite, statusRead, statusWrite) = (0, 1, 2, 3, 4, 5)
        func closeEnd(_ i: Int) {
            if fds[i] >= 0 { close(fds[i]) }
            fds[i] = -1
        }

        var args = [bwrap, "--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent", "--new-session", "--cap-drop", "ALL"]
        if options.network { args.append("--share-net") }
        args += ["--ro-bind", "/usr", "/usr", "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64",
                 "--symlink", "usr/bin", "/bin", "--symlink", "usr/sbin", "/sbin", "--proc", "/proc", "--dev", "/dev"]
        for path in Self.etcFiles { args += ["--ro-bind-try", path, path] }
        // /tmp is the home's tmp; a home under /tmp itself (a test's root)
        // cannot be mounted inside its own tmp, so /tmp is then a fresh tmpfs.
        args += home.path.hasPrefix("/tmp/") ? ["--tmpfs", "/tmp"] : ["--bind", home.tmp, "/tmp"]
        args += ["--bind", home.path, home.path, "--ro-bind", home.app, home.app]
        for (_, container) in groups { args += ["--bind", container.path, container.path] }
        var visible = [home.path] + groups.map(\.1.path)
        if let socket { args += ["--bind", socket, socket] }
        if let bus { args += ["--bind", bus.socket, Self.busPath] }
        let (program, libraries) = programMounts(command[0], visible: &visible)
        args += program
        args += libraries
        args += ["--ro-bind-data", "3", SandboxInfo.path, "--seccomp", "4",
                 "--json-status-fd", "5", "--remount-ro", "/", "--chdir", home.path, "--"]
        args += command
        let child: ChildProcess
        do { child = try ChildProcess(args, environment: env, passing: [fds[infoRead], fds[filterRead], fds[statusWrite]]) } catch {
            throw .system(error)
        }
        closeEnd(infoRead)
        closeEnd(filterRead)
        closeEnd(statusWrite)

        // While bubblewrap makes the sandbox: the home made ready, then the
        // info and the filter written, each pipe closed once written.
        func poisonFilter() {
            guard fds[filterWrite] >= 0 else { return }
            var stray: UInt8 = 0
            Self.withoutSIGPIPE { _ = write(fds[filterWrite], &stray, 1) }
            closeEnd(filterWrite)
        }
        do throws(ContainersError) { try prepare() } catch {
            // bubblewrap waits for the info and the filter: the app has not
            // started. Given an empty info file and no valid filter, it ends
            // by itself, with every process it made. (Killed instead, it could
            // leave its namespace's first process behind, reparented to init,
            // when that process had not yet tied itself to its parent's death.)
            poisonFilter()
            closeEnd(infoWrite)
            _ = try? child.wait(timeout: 10)
            throw error
        }
        let info = SandboxInfo(bundleIdentifier: entry.bundleIdentifier.rawValue, teamIdentifier: entry.team?.rawValue, home: home.path,
                               instance: instance, root: layout.root, groups: groups.map { $0.0.rawValue },
                               keychainGroups: entry.keychainGroups, network: options.network)
        let infoBytes = info.encoded()
        let given = Self.withoutSIGPIPE { () -> Bool in
            guard (try? FileSystem.writeAll(fds[infoWrite], infoBytes, path: "pipe")) != nil else { return false }
            closeEnd(infoWrite)
            guard (try? SandboxFilter.export(to: fds[filterWrite])) != nil else { return false }
            closeEnd(filterWrite)
            return true
        }
        if given {
            started()
        } else {
            // bubblewrap ended before it read them (it could not make the
            // namespaces), or they could not be written: it gets no valid
            // filter, so the app cannot start; its status says why.
            poisonFilter()
            closeEnd(infoWrite)
        }
        let ended = try containersErrors { try child.wait() }
        // bubblewrap writes `{"child-pid": …}` to --json-status-fd once the
        // namespaces are made, and `{"exit-code": …}` once the app ended:
        // without the latter it failed before the app ran.
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while bytes.count < 65_536 {
            let n = chunk.withUnsafeMutableBytes { read(fds[statusRead], $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            bytes += chunk[0..<n]
        }
        if !given { throw .sandboxFailed(bubblewrap: bwrap, status: ended.shellStatus) }
        if !Self.contains(bytes, "\"exit-code\""), ended != .exited(0) {
            if Self.contains(bytes, "\"child-pid\"") { throw .sandboxCommandFailed(command[0], status: ended.shellStatus) }
            throw .sandboxFailed(bubblewrap: bwrap, status: ended.shellStatus)
        }
        return ended
    }

    /// Whether `bytes` hold `text`'s UTF-8 bytes.
    static func contains(_ bytes: [UInt8], _ text: String) -> Bool {
        let needle = Array(text.utf8)
        guard !needle.isEmpty, bytes.count >= needle.count else { return needle.isEmpty }
        for start in 0...(bytes.count - needle.count) where bytes[start] == needle[0] {
            if bytes[start..<(start + needle.count)].elementsEqual(needle) { return true }
        }
        return false
    }

    /// Whether `text` holds a `/` (without `String.contains(_: String)`,
    /// whose module costs its loading on the way to the sandbox).
    static func hasSlash(_ text: String) -> Bool {
        text.utf8.contains(UInt8(ascii: "/"))
    }

    /// Runs `body` with `SIGPIPE` blocked in this thread: a write to a pipe
    /// whose reader (bubblewrap) is gone gives `EPIPE`, not the signal; one
    /// raised meanwhile is taken before the mask is restored.
    static func withoutSIGPIPE<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        var block = sigset_t(), old = sigset_t()
        sigemptyset(&block)
        sigaddset(&block, SIGPIPE)
        pthread_sigmask(SIG_BLOCK, &block, &old)
        defer {
            var pending = sigset_t()
            sigemptyset(&pending)
            if sigpending(&pending) == 0, sigismember(&pending, SIGPIPE) == 1 {
                var taken: Int32 = 0
                sigwait(&block, &taken)
            }
            pthread_sigmask(SIG_SETMASK, &old, nil)
        }
        return try body()
    }

    /// What ``AppRunner/runEnvironment(for:base:)`` sets.
    static let appVariables: Set<String> = ["HOME", "CFFIXED_USER_HOME", "TMPDIR", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME",
                                            "APPHOME_BUNDLE_ID", "APPHOME_HOME", "APPHOME_ROOT"]

    /// The program outside the paths the sandbox already shows (a command
    /// named by path), bound read-only where it is; and, for an ELF
    /// program, the directories of the shared libraries it loads that are
    /// not under `/usr` (a Swift program's runtime in the toolchain), found
    /// by the system's dynamic linker (`ld.so --list`, which never runs the
    /// program).
    private func programMounts(_ name: String, visible: inout [String]) -> ([String], [String]) {
        var mounts: [String] = [], libraries: [String] = []
        let path: String
        if name.hasPrefix("/") {
            path = name
        } else if Self.hasSlash(name) {
            path = home.path + "/" + name
        } else if let found = Self.lookUp(name, path: base["PATH"]) {
            path = found
        } else {
            return ([], [])
        }
        let real = Self.realPath(path) ?? path
        func shown(_ p: String) -> Bool {
            p.hasPrefix("/usr/") || visible.contains { p == $0 || p.hasPrefix($0 + "/") }
        }
        // Named by path, or found in the caller's PATH (which the app keeps).
        if path.hasPrefix("/") && !shown(real) && !shown(path) {
            mounts += ["--ro-bind", path, path]
            visible.append(path)
        }
        // The command, and the programs at the top of the bundle (what the
        // app starts itself), when they are ELF programs outside /usr.
        var programs = real.hasPrefix("/usr/") ? [] : [real]
        for name in ((try? FileSystem.directoryEntries(home.app)) ?? []).sorted().prefix(16) {
            let p = home.app + "/" + name
            if p != real { programs.append(p) }
        }
        var seen = Set<String>()
        for library in programs.filter(Self.isELF).flatMap(Self.sharedLibraries(of:)) {
            let dir = FileSystem.parentDirectory(Self.realPath(library) ?? library)
            guard !shown(dir + "/x"), !dir.hasPrefix("/lib"), !dir.hasPrefix("/etc"), !seen.contains(dir) else { continue }
            seen.insert(dir)
            libraries += ["--ro-bind", dir, dir]
        }
        return (mounts, libraries)
    }

    /// The system's dynamic linker, which lists a program's libraries.
    static let dynamicLinkers = ["/lib64/ld-linux-x86-64.so.2", "/lib/ld-linux-aarch64.so.1", "/lib/ld-linux-armhf.so.3", "/lib64/ld64.so.2"]

    /// The resolved paths of the shared libraries `program` loads.
    static func sharedLibraries(of program: String) -> [String] {
        guard let linker = dynamicLinkers.first(where: { access($0, X_OK) == 0 }) else { return [] }
        guard let child = try? ChildProcess([linker, "--list", program], environment: [:], standardInput: .null,
                                            standardOutput: .capture, standardError: .null),
              let outcome = try? child.collect(timeout: 10), outcome.termination == .exited(0) else { return [] }
        let output = String(decoding: outcome.standardOutput.prefix(1 << 20), as: UTF8.self)
        var paths: [String] = []
        for line in output.split(separator: "\n") {
            // "\tlibswiftCore.so => /opt/swift/usr/lib/swift/linux/libswiftCore.so (0x…)"
            let words = line.split(separator: " ")
            guard let arrow = words.firstIndex(of: "=>"), arrow + 1 < words.count, words[arrow + 1].hasPrefix("/") else { continue }
            paths.append(String(words[arrow + 1]))
        }
        return paths
    }

    static func isELF(_ path: String) -> Bool {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG, st.st_mode & 0o111 != 0 else { return false }
        var magic = [UInt8](repeating: 0, count: 4)
        return read(fd, &magic, 4) == 4 && magic == [0x7f, 0x45, 0x4c, 0x46]
    }

    static func realPath(_ path: String) -> String? {
        guard let r = realpath(path, nil) else { return nil }
        defer { free(r) }
        return String(cString: r)
    }

    /// `name` looked up in `path` (a `PATH` value), as `execvp` would.
    static func lookUp(_ name: String, path: String?) -> String? {
        // By bytes: splitting by `Character` was a tenth of `apphome run`'s instructions.
        for dir in (path ?? "/usr/bin:/bin").utf8.split(separator: UInt8(ascii: ":")) where dir.first == UInt8(ascii: "/") {
            let candidate = String(decoding: dir, as: UTF8.self) + "/" + name
            var st = stat()
            if stat(candidate, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG, access(candidate, X_OK) == 0 { return candidate }
        }
        return nil
    }

    private func find(_ program: String, what: String) throws(ContainersError) -> String {
        if Self.hasSlash(program) {
            guard access(program, X_OK) == 0 else { throw .sandboxUnavailable("\(what) is not at \(program)") }
            return program
        }
        guard let found = Self.lookUp(program, path: base["PATH"]) else {
            throw .sandboxUnavailable("\(what) is not installed (no \(program) in PATH)")
        }
        return found
    }

    /// `pipe`, both ends close-on-exec (the Swift Glibc module has no
    /// `pipe2`); a child gets an end only when it is passed to it.
    static func pipeCloseOnExec(_ fds: inout [Int32]) -> Bool {
        guard pipe(&fds) == 0 else { return false }
        _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)
        return true
    }

    /// prefsd's socket when one answers (started first when none does and
    /// the options allow it), else `nil`.
    private func prefsdSocket() throws(ContainersError) -> String? {
        guard let socket = options.prefsdSocket else { return nil }
        if Self.answers(socket) { return socket }
        guard options.startPrefsd else { return nil }
        let program: String
        if Self.hasSlash(options.prefsdProgram) {
            program = options.prefsdProgram
        } else if let found = Self.lookUp(options.prefsdProgram, path: base["PATH"]) {
            program = found
        } else {
            throw .sandboxUnavailable("no prefsd answers on \(socket) and none can be started (no \(options.prefsdProgram) in PATH)")
        }
        try containersErrors {
            // A daemon that outlives this run: its own process group, no terminal streams.
            _ = try ChildProcess([program, "--root", layout.root, "--socket", socket], environment: base, workingDirectory: "/",
                                 standardInput: .null, standardOutput: .null, standardError: .null, newProcessGroup: true)
        }
        let deadline = SystemClock.monotonicSeconds() + 10
        while SystemClock.monotonicSeconds() < deadline {
            if Self.answers(socket) { return socket }
            usleep(5_000)
        }
        throw .sandboxUnavailable("prefsd was started but does not answer on \(socket)")
    }

    /// Whether something listens on the Unix socket at `path`.
    static func answers(_ path: String) -> Bool {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return false }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, b) in bytes.enumerated() { raw[i] = b }
        }
        let rc = withUnsafePointer(to: &address) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        return rc == 0
    }
}

/// The session bus, filtered by xdg-dbus-proxy to the names an app may
/// talk to; its socket is bound into the sandbox.
struct BusProxy {
    let socket: String
    /// A directory made for the socket alone (removed with it), or `nil`.
    let madeDirectory: String?
    let process: ChildProcess
    /// The pipe whose closing tells the proxy to exit.
    let keepAlive: Int32

    /// The proxy's socket goes in `$XDG_RUNTIME_DIR/apphome` (the user's
    /// private runtime directory), else in a fresh 0700 directory under /tmp.
    static func start(program: String, address: String?, names: [String], runtimeDirectory: String?, instance: String) throws(ContainersError) -> BusProxy {
        guard let address, !address.isEmpty else {
            throw .sandboxUnavailable("--talk-name needs the session bus, and DBUS_SESSION_BUS_ADDRESS is not set")
        }
        for name in names { try RunOptions.checkTalkName(name) }
        var directory: String
        var made: String?
        if let runtimeDirectory, runtimeDirectory.hasPrefix("/"), (try? FileSystem.makeDirectories(runtimeDirectory + "/apphome")) != nil {
            directory = runtimeDirectory + "/apphome"
        } else {
            var template = Array("/tmp/apphome-bus-XXXXXX".utf8CString)
            guard let madeName = mkdtemp(&template) else { throw .system(SystemError("mkdtemp", path: "/tmp", errno: errno)) }
            directory = String(cString: madeName)
            made = directory
        }
        let socket = directory + "/bus-" + instance
        guard socket.utf8.count < 108 else { throw .sandboxUnavailable("the bus proxy's socket path \(socket) is too long for a Unix socket") }
        var ready: [Int32] = [-1, -1]
        guard SandboxLauncher.pipeCloseOnExec(&ready) else { throw .system(SystemError("pipe2", path: "", errno: errno)) }
        let args = [program, address, socket, "--filter", "--fd=3"] + names.map { "--talk=" + $0 }
        let proxy: ChildProcess
        do throws(ContainersError) {
            proxy = try containersErrors { try ChildProcess(args, environment: [:], workingDirectory: "/", passing: [ready[1]]) }
        } catch {
            close(ready[0]); close(ready[1])
            throw error
        }
        close(ready[1])
        // The proxy writes one byte to --fd once it listens, and exits when the pipe closes.
        var pfd = pollfd(fd: ready[0], events: Int16(POLLIN), revents: 0)
        var byte: UInt8 = 0
        guard poll(&pfd, 1, 5_000) == 1, read(ready[0], &byte, 1) == 1, FileSystem.exists(socket) else {
            close(ready[0])
            kill(proxy.pid, SIGTERM)
            _ = try? proxy.wait()
            unlink(socket)
            if let made { rmdir(made) }
            throw .sandboxUnavailable("xdg-dbus-proxy did not start on \(address)")
        }
        return BusProxy(socket: socket, madeDirectory: made, process: proxy, keepAlive: ready[0])
    }

    func stop() {
        close(keepAlive)
        kill(process.pid, SIGTERM)
        _ = try? process.wait()
        unlink(socket)
        if let madeDirectory { rmdir(madeDirectory) }
    }
}
