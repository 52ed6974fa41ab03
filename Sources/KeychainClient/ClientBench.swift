#if canImport(Glibc)
import Glibc
#endif
import AppHomeSystem
import Dispatch
import Keychain
import PrefsProtocol
import PropertyList
import Synchronization

/// The client-side benchmarks behind `keychainbench` (bench/keychain.sh):
/// look-ups with ``AppKeychain`` (through prefsd when it answers), and
/// credential loads on prefsd's credential socket made the way systemd
/// makes them.
public enum ClientBench {
    /// `keychainbench --app-keychain <root> <bundle-id> <account> <service> <count>`:
    /// `count` look-ups with one ``AppKeychain``; prints one line.
    public static func appKeychain(_ args: [String], configuration: Configuration) -> Int32 {
        guard args.count == 5, let count = Int(args[4]), count > 0 else {
            return fail("usage: keychainbench --app-keychain <root> <bundle-id> <account> <service> <count>", 2)
        }
        do {
            let keychain = try AppKeychain(app: args[1], root: args[0], configuration: configuration)
            let start = UnixSocket.now()
            var bytes = 0
            for _ in 0..<count { bytes &+= try keychain.genericPassword(service: args[3], account: args[2]).count }
            let total = UnixSocket.now() - start
            print("AppKeychain (\(keychain.throughPrefsd ? "through prefsd" : "on the files")): \(count) look-ups in "
                  + "\(KeychainBench.rounded(total, 3)) s, \(KeychainBench.rounded(total / Double(count) * 1e6, 1)) µs per look-up (\(bytes) secret bytes)")
            return 0
        } catch {
            return fail("\(error)", 1)
        }
    }

    /// `keychainbench --credentials <socket> <unit> <id> <total> <peers>`:
    /// `total` loads by `peers` concurrent peers, each bound to the abstract
    /// address `\0<random>/unit/<unit>/<id>`, half-closing and reading to the
    /// end, as systemd does; prints the latency percentiles of one load.
    public static func credentials(_ args: [String]) -> Int32 {
        guard args.count == 5, let total = Int(args[3]), let peers = Int(args[4]), total > 0, peers > 0 else {
            return fail("usage: keychainbench --credentials <socket> <unit> <id> <total> <peers>", 2)
        }
        let socketPath = args[0], name = "/unit/\(args[1])/\(args[2])"
        let results = Mutex<(latencies: [Double], failures: Int, bytes: Int)>(([], 0, 0))
        let group = DispatchGroup()
        let start = UnixSocket.now()
        for p in 0..<peers {
            let share = total / peers + (p < total % peers ? 1 : 0)
            group.enter()
            let started = DetachedThread.start {
                var mine: [Double] = []
                var failures = 0, bytes = 0
                for _ in 0..<share {
                    let t0 = UnixSocket.now()
                    if let n = load(socketPath, name: name), n > 0 { bytes += n; mine.append(UnixSocket.now() - t0) } else { failures += 1 }
                }
                results.withLock { $0.latencies += mine; $0.failures += failures; $0.bytes += bytes }
                group.leave()
            }
            if !started { group.leave() }
        }
        group.wait()
        let wall = UnixSocket.now() - start
        let r = results.withLock { $0 }
        let sorted = r.latencies.sorted()
        func pct(_ p: Double) -> String {
            guard !sorted.isEmpty else { return "-" }
            return KeychainBench.rounded(sorted[min(sorted.count - 1, Int((p * Double(sorted.count)).rounded(.up)) - 1)] * 1e3, 3)
        }
        print("credential socket: \(total) loads by \(peers) concurrent peers in \(KeychainBench.rounded(wall, 3)) s: "
              + "p50 \(pct(0.5)) ms, p99 \(pct(0.99)) ms, max \(pct(1.0)) ms (\(r.bytes) bytes, \(r.failures) failed)")
        return r.failures == 0 ? 0 : 1
    }

    /// One load; the bytes read, or `nil` when the connection failed.
    static func load(_ socketPath: String, name: String) -> Int? {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        func address(_ bytes: [UInt8]) -> (sockaddr_un, socklen_t) {
            var a = sockaddr_un()
            a.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &a.sun_path) { raw in for (i, b) in bytes.prefix(raw.count).enumerated() { raw[i] = b } }
            return (a, socklen_t(MemoryLayout<sa_family_t>.size + min(bytes.count, 108)))
        }
        let random = UInt64.random(in: 1...UInt64.max)
        var (local, localLength) = address([0] + Array((String(random, radix: 16) + name).utf8))
        var (remote, remoteLength) = address(Array(socketPath.utf8) + [0])
        let bound = withUnsafePointer(to: &local) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, localLength) } }
        let connected = withUnsafePointer(to: &remote) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, remoteLength) } }
        guard bound == 0, connected == 0 else { return nil }
        shutdown(fd, Int32(SHUT_WR))
        var total = 0
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n > 0 { total += n; continue }
            if n < 0 && errno == EINTR { continue }
            return n == 0 ? total : nil
        }
    }

    static func fail(_ text: String, _ status: Int32) -> Int32 {
        let bytes = Array(("keychainbench: " + text + "\n").utf8)
        _ = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
        return status
    }
}
