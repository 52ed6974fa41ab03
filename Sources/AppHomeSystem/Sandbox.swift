#if canImport(Glibc)
import Glibc
#endif
import PropertyList

/// What `apphome run` writes at `/.apphome-info` in the root of an app's
/// sandbox before the app starts: a property list naming the app. The file
/// is bound read-only into a root the app cannot change, so a service that
/// reads it through the peer's root (`/proc/<pid>/root/.apphome-info`,
/// ``PeerIdentity``) learns which app the peer is from the sandbox, never
/// from anything the peer says. The keys are documented in `docs/sandbox.md`.
public struct SandboxInfo: Sendable, Equatable {
    /// Where the file is, inside the sandbox.
    public static let path = "/.apphome-info"
    /// The largest file a reader accepts.
    static let maximumSize = 64 * 1024

    /// `BundleIdentifier`: the app.
    public var bundleIdentifier: String
    /// `TeamIdentifier`: the team that signed it, when it is signed.
    public var teamIdentifier: String?
    /// `Home`: the app's home, at the same path inside and outside.
    public var home: String
    /// `Instance`: a random id of this run.
    public var instance: String
    /// `Root`: the AppHome root the app is installed under (not visible inside).
    public var root: String?
    /// `ApplicationGroups`: the app-group ids the registry gives the app.
    public var groups: [String]
    /// `KeychainAccessGroups`: the app's keychain access groups, first the
    /// default one (what a client inside shows; prefsd decides from the registry).
    public var keychainGroups: [String]
    /// `Network`: whether the sandbox shares the network.
    public var network: Bool

    public init(bundleIdentifier: String, teamIdentifier: String? = nil, home: String, instance: String, root: String? = nil,
                groups: [String] = [], keychainGroups: [String] = [], network: Bool = true) {
        self.bundleIdentifier = bundleIdentifier
        self.teamIdentifier = teamIdentifier
        self.home = home
        self.instance = instance
        self.root = root
        self.groups = groups
        self.keychainGroups = keychainGroups
        self.network = network
    }

    /// The file's bytes: an XML property list.
    public func encoded() -> [UInt8] {
        var d: [PlistKey: PlistValue] = [
            "BundleIdentifier": .string(bundleIdentifier),
            "Home": .string(home),
            "Instance": .string(instance),
            "ApplicationGroups": .array(groups.map { .string($0) }),
            "KeychainAccessGroups": .array(keychainGroups.map { .string($0) }),
            "Network": .bool(network),
        ]
        if let teamIdentifier { d["TeamIdentifier"] = .string(teamIdentifier) }
        if let root { d["Root"] = .string(root) }
        // Strings, arrays of strings and a boolean always encode.
        return (try? PlistCodec.encode(.dictionary(d), format: .xml)) ?? []
    }

    /// Reads the file's bytes, or says why they are not a sandbox's info.
    public static func decode(_ bytes: [UInt8]) -> Result<SandboxInfo, SandboxInfoError> {
        guard bytes.count <= maximumSize else { return .failure(.init("it is larger than \(maximumSize) bytes")) }
        guard let value = try? PlistCodec.decode(bytes), case .dictionary(let d) = value else {
            return .failure(.init("it is not a property-list dictionary"))
        }
        func text(_ key: PlistKey) -> String? { if case .string(let s)? = d[key] { s } else { nil } }
        func texts(_ key: PlistKey) -> [String]? {
            guard let v = d[key] else { return [] }
            guard case .array(let items) = v else { return nil }
            var out: [String] = []
            for item in items {
                guard case .string(let s) = item else { return nil }
                out.append(s)
            }
            return out
        }
        guard let id = text("BundleIdentifier"), !id.isEmpty, !id.contains("/"), !id.contains("\0") else {
            return .failure(.init("it names no BundleIdentifier"))
        }
        guard let home = text("Home"), home.hasPrefix("/"), !home.contains("\0") else { return .failure(.init("it names no absolute Home")) }
        guard let instance = text("Instance"), !instance.isEmpty else { return .failure(.init("it names no Instance")) }
        guard let groups = texts("ApplicationGroups"), let keychainGroups = texts("KeychainAccessGroups") else {
            return .failure(.init("ApplicationGroups or KeychainAccessGroups is not an array of strings"))
        }
        var network = true
        if case .bool(let b)? = d["Network"] { network = b }
        return .success(SandboxInfo(bundleIdentifier: id, teamIdentifier: text("TeamIdentifier"), home: home, instance: instance,
                                    root: text("Root"), groups: groups, keychainGroups: keychainGroups, network: network))
    }

    /// The sandbox this process runs in: `/.apphome-info` of its own root,
    /// or `nil` outside any sandbox. A file that is there but unreadable or
    /// damaged still confines: it gives an app no one can be (`?`), never
    /// the user.
    public static func current() -> SandboxInfo? {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        if fd < 0 {
            return errno == ENOENT ? nil : SandboxInfo(bundleIdentifier: "?", home: "/nonexistent", instance: "?")
        }
        defer { close(fd) }
        switch PeerIdentity.readInfo(fd) {
        case .success(let info): return info
        case .failure: return SandboxInfo(bundleIdentifier: "?", home: "/nonexistent", instance: "?")
        }
    }
}

/// Why a sandbox's info file was refused.
public struct SandboxInfoError: Error, Equatable, Sendable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// Which sandbox a peer process is in, as a service sees it.
public enum PeerSandbox: Sendable, Equatable {
    /// The peer runs in an app's sandbox (its root holds ``SandboxInfo``).
    case sandboxed(SandboxInfo)
    /// The peer's root is this process's root: it is outside any sandbox.
    case unconfined
    /// It could not be told (the peer is gone, its root cannot be read, or
    /// holds a damaged or no info file): treated as an app that may do nothing.
    case unknown(String)

    /// The app the peer is confined to (`nil` only when ``unconfined``).
    public var confinedApp: String? {
        switch self {
        case .sandboxed(let info): return info.bundleIdentifier
        case .unconfined: return nil
        case .unknown(let why): return "an unidentified sandbox (\(why))"
        }
    }
}

/// Knows a peer by its sandbox: reads `/proc/<pid>/root/.apphome-info`,
/// the file `apphome run` bound read-only into the peer's root, with the
/// process pinned by a pidfd (`SO_PEERPIDFD` for a socket peer,
/// `pidfd_open` for a pid) so that a pid reused meanwhile cannot lie.
public enum PeerIdentity {
    /// `SO_PEERPIDFD` (Linux 6.5): a pidfd of a Unix socket's peer.
    static let soPeerPidfd: Int32 = 77

    private typealias PidfdOpen = @convention(c) (pid_t, UInt32) -> Int32
    /// glibc ≥ 2.36 has `pidfd_open`; the Swift Glibc module does not declare it.
    private static let pidfdOpen = CLibrary.function("pidfd_open", as: PidfdOpen.self)

    /// The sandbox of the peer of the connected Unix socket `fd` (its pid
    /// from `SO_PEERCRED` when the kernel has no `SO_PEERPIDFD`).
    public static func sandbox(ofSocketPeer fd: Int32) -> PeerSandbox {
        var pidfd: Int32 = -1
        var length = socklen_t(MemoryLayout<Int32>.size)
        if getsockopt(fd, SOL_SOCKET, soPeerPidfd, &pidfd, &length) == 0, pidfd >= 0 {
            defer { close(pidfd) }
            guard let pid = pid(ofPidfd: pidfd) else { return .unknown("the peer is gone") }
            return sandbox(pid: pid, pidfd: pidfd)
        }
        var cred: (Int32, UInt32, UInt32) = (0, 0, 0)
        var credLength = socklen_t(MemoryLayout.size(ofValue: cred))
        guard getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &credLength) == 0, cred.0 > 0 else {
            return .unknown("the kernel gave no peer pid")
        }
        return sandbox(ofProcess: cred.0)
    }

    /// The sandbox of the process `pid`.
    public static func sandbox(ofProcess pid: Int32) -> PeerSandbox {
        guard pid > 0 else { return .unknown("no pid") }
        guard let pidfdOpen else { return sandbox(pid: pid, pidfd: -1) }
        let pidfd = pidfdOpen(pid, 0)
        guard pidfd >= 0 else { return .unknown(errno == ESRCH ? "the process \(pid) is gone" : "pidfd_open(\(pid)): \(String(cString: strerror(errno)))") }
        defer { close(pidfd) }
        return sandbox(pid: pid, pidfd: pidfd)
    }

    /// The pid a pidfd names (`Pid:` in its fdinfo), `nil` when it has exited.
    static func pid(ofPidfd pidfd: Int32) -> Int32? {
        let fd = open("/proc/self/fdinfo/\(pidfd)", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 1024)
        let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
        guard n > 0 else { return nil }
        let text = String(decoding: buffer[0..<n], as: UTF8.self)
        for line in text.split(separator: "\n") where line.hasPrefix("Pid:") {
            let value = Int32(line.dropFirst(4).trimmingPrefix(while: { $0 == " " || $0 == "\t" })) ?? -1
            return value > 0 ? value : nil
        }
        return nil
    }

    /// Whether the process a pidfd names still runs (a pidfd polls
    /// readable once it has exited). Without a pidfd: whether `pid` exists.
    static func alive(_ pidfd: Int32, pid: Int32) -> Bool {
        guard pidfd >= 0 else { return kill(pid, 0) == 0 || errno == EPERM }
        var p = pollfd(fd: pidfd, events: Int16(POLLIN), revents: 0)
        return poll(&p, 1, 0) == 0
    }

    static func sandbox(pid: Int32, pidfd: Int32) -> PeerSandbox {
        // /proc/<pid> opened while the pidfd shows the process alive names
        // that process for as long as the descriptor is open.
        let dir = open("/proc/\(pid)", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard dir >= 0 else { return .unknown("/proc/\(pid): \(String(cString: strerror(errno)))") }
        defer { close(dir) }
        guard alive(pidfd, pid: pid) else { return .unknown("the process \(pid) is gone") }
        let result = read(procDirectory: dir)
        // Gone meanwhile: what was read may be of nothing.
        guard alive(pidfd, pid: pid) else { return .unknown("the process \(pid) is gone") }
        return result
    }

    /// The sandbox of the process whose `/proc/<pid>` directory is `dir`.
    static func read(procDirectory dir: Int32) -> PeerSandbox {
        let fd = openat(dir, "root/.apphome-info", O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        if fd >= 0 {
            defer { close(fd) }
            switch readInfo(fd) {
            case .success(let info): return .sandboxed(info)
            case .failure(let why): return .unknown("its \(SandboxInfo.path) is refused: \(why)")
            }
        }
        guard errno == ENOENT else { return .unknown("its root cannot be read: \(String(cString: strerror(errno)))") }
        // No info file: unconfined only when its root is this process's root.
        var theirs = stat(), ours = stat()
        guard fstatat(dir, "root/", &theirs, 0) == 0 else { return .unknown("its root cannot be read: \(String(cString: strerror(errno)))") }
        guard stat("/", &ours) == 0 else { return .unknown("this process's root cannot be read") }
        return theirs.st_dev == ours.st_dev && theirs.st_ino == ours.st_ino ? .unconfined : .unknown("its root is not this one's and holds no \(SandboxInfo.path)")
    }

    /// Reads and decodes an open info file (a regular file, at most 64 KiB).
    static func readInfo(_ fd: Int32) -> Result<SandboxInfo, SandboxInfoError> {
        var st = stat()
        guard fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { return .failure(.init("it is not a regular file")) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16_384)
        while bytes.count <= SandboxInfo.maximumSize {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n < 0 { return .failure(.init(String(cString: strerror(errno)))) }
            if n == 0 { break }
            bytes += chunk[0..<n]
        }
        return SandboxInfo.decode(bytes)
    }
}
