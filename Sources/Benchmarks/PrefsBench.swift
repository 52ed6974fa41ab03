#if canImport(Glibc)
import Glibc
#endif
import AppHomeSystem
import Preferences
import PrefsClient
import PrefsProtocol
import PropertyList
import Synchronization

/// `prefsbench`: load for prefsd, used by `make bench` and the reliability
/// tests. Not installed; every number it prints is measured here.
///
///     prefsbench writes --socket S --root R --domain D --prefix P --count N [--log-acks]
///         N sequential writes P-0…P-(N-1) = i through prefsd; with --log-acks,
///         prints each key once prefsd acknowledged it.
///     prefsbench embedded-writes --root R --domain D --prefix P --count N
///         the same through the file store, without prefsd.
///     prefsbench latency --socket S --root R --count N
///         single-key reads (a request each, then from a LiveDomain), then
///         single-key writes, one at a time.
///     prefsbench status --socket S --root R
///         prefsd's status reply (counters: reads, writes, commits).
///     prefsbench storm --socket S --root R --clients C --count N
///         C connections on C threads, N writes each (one key per client), all at once;
///         then where prefsd's turns spent their time during it (`status`'s `writeTurns`).
///
/// Results: `<name> ops=<n> ops_per_s=<x> p50_us=<x> p99_us=<x> p90_us=<x> p999_us=<x> max_us=<x>`;
/// after a storm, `<name>-turns turns=<n> writes_per_commit=<x>` and the mean
/// µs of a turn's `reading`, `gathering`, `committing`, `flushing`, `replying`.
public struct PrefsBench {
    private let mode: String
    private let options: [String: String]
    private let flags: Set<String>

    /// Runs `arguments` (without the program's name); returns the exit status.
    public static func main(_ arguments: [String]) -> Int32 {
        do {
            try PrefsBench(arguments).run()
            return 0
        } catch {
            return error.report(as: "prefsbench")
        }
    }

    private init(_ arguments: [String]) {
        mode = arguments.first ?? ""
        var options: [String: String] = [:], flags: Set<String> = []
        var i = 1
        while i < arguments.count {
            if arguments[i] == "--log-acks" { flags.insert(arguments[i]); i += 1; continue }
            if i + 1 < arguments.count { options[String(arguments[i].dropFirst(2))] = arguments[i + 1] }
            i += 2
        }
        self.options = options
        self.flags = flags
    }

    private func option(_ name: String, _ fallback: String? = nil) throws(BenchFailure) -> String {
        guard let v = options[name] ?? fallback else { throw BenchFailure("--\(name) is needed", status: 2) }
        return v
    }

    private static func out(_ line: String) {
        let text = line + "\n"
        _ = text.withCString { write(1, $0, strlen($0)) }
    }

    private static func report(_ name: String, _ latencies: [Double], elapsed: Double) {
        let sorted = latencies.sorted()
        func pct(_ p: Double) -> Double { sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))] * 1e6 }
        out("\(name) ops=\(sorted.count) ops_per_s=\(Int(Double(sorted.count) / elapsed)) p50_us=\(Int(pct(0.5))) p99_us=\(Int(pct(0.99))) p90_us=\(Int(pct(0.9))) p999_us=\(Int(pct(0.999))) max_us=\(Int(pct(1)))")
    }

    private func connect() throws(BenchFailure) -> PrefsConnection {
        let socket = try option("socket"), root = try option("root")
        do { return try PrefsConnection(socketPath: socket, root: root) } catch { throw BenchFailure(error.description) }
    }

    /// Runs `body`, a failure of it reported as `prefix` and its description.
    private static func step<T>(_ prefix: String = "", _ body: () throws -> T) throws(BenchFailure) -> T {
        do { return try body() } catch {
            let text = (error as? CustomStringConvertible)?.description ?? "\(error)"
            throw BenchFailure(prefix + text)
        }
    }

    private func run() throws(BenchFailure) {
        let domain = DomainAddress(.named(try option("domain", "com.apphome.bench")))
        let count = Int(try option("count", "1000")) ?? 1000
        switch mode {
        case "writes":
            let c = try connect()
            let prefix = try option("prefix")
            for n in 0..<count {
                let key = "\(prefix)-\(n)"
                try Self.step("after \(n) writes: ") { _ = try c.call(.write(domain, set: [PlistKey(key): .integer(Int128(n))])) }
                if flags.contains("--log-acks") { Self.out(key) }
            }
        case "embedded-writes":
            let store = FilePreferenceStore(root: try option("root"))
            let prefix = try option("prefix")
            for n in 0..<count {
                do { try store.update(domain.domain, scope: .anyHost) { $0["\(prefix)-\(n)"] = .integer(Int128(n)) } } catch { throw BenchFailure("\(error)") }
            }
        case "latency":
            try latency(domain, count: count)
        case "storm":
            try storm(domain, count: count)
        case "status":
            let c = try connect()
            let status = try Self.step("") { try c.call(.status) }
            for (k, v) in status.sorted(by: { $0.key < $1.key }) { Self.out("\(k) = \(OldStylePrinter.describe(v))") }
        default:
            throw BenchFailure("unknown mode \"\(mode)\" (writes, embedded-writes, latency, storm)")
        }
    }

    private func latency(_ domain: DomainAddress, count: Int) throws(BenchFailure) {
        let c = try connect()
        try Self.step { _ = try c.call(.write(domain, set: ["counter": .integer(0)])) }
        try Self.measure("prefsd-read", count) { _ in _ = try c.call(.read(domain, key: "counter")) }
        // The same reads from a LiveDomain: contents held here, kept current by notifications.
        let connection = try connect()
        let live = try Self.step { try LiveDomain(connection: connection, address: domain) }
        try Self.measure("prefsd-live-read", count) { _ in _ = try live.value(forKey: "counter") }
        try Self.measure("prefsd-write", count) { n in _ = try c.call(.write(domain, set: ["counter": .integer(Int128(n))])) }
    }

    /// Runs `body` for 0..<`count`, one at a time, and reports their latencies as `name`.
    private static func measure(_ name: String, _ count: Int, _ body: (Int) throws -> Void) throws(BenchFailure) {
        var latencies: [Double] = []
        let start = UnixSocket.now()
        for n in 0..<count {
            let t = UnixSocket.now()
            try step { try body(n) }
            latencies.append(UnixSocket.now() - t)
        }
        report(name, latencies, elapsed: UnixSocket.now() - start)
    }

    /// What the storm's client threads report back.
    private final class StormTally: Sendable {
        let latencies = Mutex<[Double]>([])
        let failures = Atomic<Int>(0)
        let finished = Atomic<Int>(0)
    }

    private func storm(_ domain: DomainAddress, count: Int) throws(BenchFailure) {
        let clients = Int(try option("clients", "10")) ?? 10
        let tally = StormTally()
        let socket = try option("socket"), root = try option("root")
        let status = try connect()
        let before = try Self.step("status: ") { try status.call(.status) }
        let start = UnixSocket.now()
        for worker in 0..<clients {
            let started = DetachedThread.start {
                var mine: [Double] = []
                if let c = try? PrefsConnection(socketPath: socket, root: root) {
                    for n in 0..<count {
                        let t = UnixSocket.now()
                        do { _ = try c.call(.write(domain, set: [PlistKey("storm-\(worker)"): .integer(Int128(n))])) } catch {
                            tally.failures.add(1, ordering: .relaxed)
                            break
                        }
                        mine.append(UnixSocket.now() - t)
                    }
                } else {
                    tally.failures.add(1, ordering: .relaxed)
                }
                tally.latencies.withLock { $0 += mine }
                tally.finished.add(1, ordering: .releasing)
            }
            if !started { throw BenchFailure("cannot start client thread \(worker)") }
        }
        while tally.finished.load(ordering: .acquiring) < clients { usleep(1000) }
        let elapsed = UnixSocket.now() - start
        if tally.failures.load(ordering: .relaxed) > 0 { throw BenchFailure("\(tally.failures.load(ordering: .relaxed)) client(s) failed") }
        Self.report("prefsd-storm-\(clients)", tally.latencies.withLock { $0 }, elapsed: elapsed)
        let after = try Self.step("status: ") { try status.call(.status) }
        Self.out(Self.turns("prefsd-storm-\(clients)-turns", before: before, after: after))
    }

    /// The storm's share of two `status` replies: how many turns committed
    /// writes, how many writes a commit carried, and the mean µs of each phase of a turn.
    static func turns(_ name: String, before: [PlistKey: PlistValue], after: [PlistKey: PlistValue]) -> String {
        func number(_ reply: [PlistKey: PlistValue], _ key: String, in group: String? = nil) -> Double {
            var value = reply[PlistKey(group ?? key)]
            if group != nil {
                if case .dictionary(let d)? = value { value = d[PlistKey(key)] } else { value = nil }
            }
            switch value {
            case .integer(let n)?: return Double(n)
            case .real(let x)?: return x
            default: return 0
            }
        }
        let turns = number(after, "turns", in: "writeTurns") - number(before, "turns", in: "writeTurns")
        let commits = number(after, "commits") - number(before, "commits")
        var line = "\(name) turns=\(Int(turns)) writes_per_commit="
        let hundredths = commits > 0 ? Int((number(after, "writes") - number(before, "writes")) / commits * 100 + 0.5) : 0
        line += "\(hundredths / 100)." + (hundredths % 100 < 10 ? "0" : "") + "\(hundredths % 100)"
        for phase in ["reading", "gathering", "committing", "flushing", "replying"] {
            let seconds = number(after, phase + "Seconds", in: "writeTurns") - number(before, phase + "Seconds", in: "writeTurns")
            line += " \(phase)_us=\(turns > 0 ? Int(seconds / turns * 1e6) : 0)"
        }
        return line
    }
}
