#if canImport(Glibc)
import Glibc
#endif
import AppHomeSystem
import Synchronization

/// Whether a peer process may use the Settings app: not one started in an
/// app's context (`APPHOME_BUNDLE_ID`/`APPHOME_HOME` in its environment,
/// as prefsd's keychain jobs check), nor one in an app's sandbox (whose
/// root holds `/.apphome-info`).
enum PeerCheck {
    /// Why the process `pid` is refused, or `nil`. An unknown pid (-1) is let
    /// through: on a Unix socket the kernel always gives one.
    static func refusal(pid: Int32) -> String? {
        guard pid > 0 else { return nil }
        if let app = ProcessContext.appContext(ofProcess: pid) {
            return "process \(pid) runs in the context of the app \(app)"
        }
        var st = stat()
        if stat("/proc/\(pid)/root/.apphome-info", &st) == 0 {
            return "process \(pid) runs in an app's sandbox"
        }
        return nil
    }
}

extension PeerCheck {
    /// The process at the other end of a loopback TCP connection: the socket
    /// whose local port is `peerPort` and remote port `serverPort` in
    /// `/proc/net/tcp` (or `tcp6`) gives an inode, and the process holding
    /// `socket:[inode]` among its descriptors is the peer. `nil` when it
    /// cannot be told (a process of another user whose descriptors cannot be
    /// read, or one that closed the connection already).
    ///
    /// It reads every process's descriptor list: run off the main loop.
    static func loopbackPeer(peerPort: Int, serverPort: Int) -> Int32? {
        guard let inode = socketInode(peerPort: peerPort, serverPort: serverPort) else { return nil }
        let wanted = "socket:[\(inode)]"
        // A browser opens its connections from one process: the peers found
        // last are looked at first, and the whole table only when they miss.
        let recent = recentPeers.withLock { $0 }
        if let pid = recent.first(where: { holds($0, wanted) }) ?? everyProcess(except: recent).first(where: { holds($0, wanted) }) {
            recentPeers.withLock { list in
                list.removeAll { $0 == pid }
                list.insert(pid, at: 0)
                if list.count > 8 { list.removeLast() }
            }
            return pid
        }
        return nil
    }

    /// The processes that connected last (at most 8, the latest first).
    static let recentPeers = Mutex<[Int32]>([])

    /// Every process but this one and `skipped`.
    static func everyProcess(except skipped: [Int32]) -> [Int32] {
        let me = getpid()
        let names = (try? FileSystem.directoryEntries("/proc")) ?? []
        return names.compactMap { Int32($0) }.filter { $0 != me && !skipped.contains($0) }
    }

    /// Whether the process `pid` holds the descriptor whose link reads `wanted` (`socket:[N]`).
    static func holds(_ pid: Int32, _ wanted: String) -> Bool {
        guard let fds = try? FileSystem.directoryEntries("/proc/\(pid)/fd") else { return false }
        var buffer = [CChar](repeating: 0, count: 64)
        for fd in fds {
            let n = readlink("/proc/\(pid)/fd/\(fd)", &buffer, buffer.count - 1)
            guard n == wanted.utf8.count else { continue }
            if String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self) == wanted { return true }
        }
        return false
    }

    /// The inode of the connected socket from `peerPort` to `serverPort`.
    static func socketInode(peerPort: Int, serverPort: Int) -> String? {
        for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
            guard let bytes = try? FileSystem.readFileIfPresent(table), bytes.count <= 16 << 20 else { continue }
            for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n").dropFirst() {
                let fields = line.split(separator: " ")
                guard fields.count > 9, port(fields[1]) == peerPort, port(fields[2]) == serverPort, fields[9] != "0" else { continue }
                return String(fields[9])
            }
        }
        return nil
    }

    /// The port of `ADDRESS:PORT` as `/proc/net/tcp` writes it (hexadecimal).
    static func port(_ field: Substring) -> Int? {
        guard let colon = field.lastIndex(of: ":") else { return nil }
        return Int(field[field.index(after: colon)...], radix: 16)
    }
}
