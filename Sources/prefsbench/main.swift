// prefsbench: load for prefsd, used by `make bench` and the reliability
// tests. Not installed; every number it prints is measured here.
//
//   prefsbench writes --socket S --root R --domain D --prefix P --count N [--log-acks]
//       N sequential writes P-0…P-(N-1) = i through prefsd; with --log-acks,
//       prints each key once prefsd acknowledged it.
//   prefsbench embedded-writes --root R --domain D --prefix P --count N
//       the same through the file store, without prefsd.
//   prefsbench latency --socket S --root R --count N
//       single-key reads (a request each, then from a LiveDomain), then
//       single-key writes, one at a time.
//   prefsbench status --socket S --root R
//       prefsd's status reply (counters: reads, writes, commits).
//   prefsbench storm --socket S --root R --clients C --count N
//       C connections on C threads, N writes each (one key per client), all at once.
// Results: `<name> ops=<n> ops_per_s=<x> p50_us=<x> p99_us=<x>`.
#if canImport(Glibc)
import Glibc
#endif
import AppHomeSystem
import Preferences
import PrefsClient
import PrefsProtocol
import PropertyList
import Synchronization

func parse(_ args: [String]) -> (options: [String: String], flags: Set<String>) {
    var options: [String: String] = [:], flags: Set<String> = []
    var i = 1
    while i < args.count {
        if args[i] == "--log-acks" { flags.insert(args[i]); i += 1; continue }
        if i + 1 < args.count { options[String(args[i].dropFirst(2))] = args[i + 1] }
        i += 2
    }
    return (options, flags)
}
let arguments = Array(CommandLine.arguments.dropFirst())
let mode = arguments.first ?? ""
let (options, flags) = parse(arguments)
func out(_ line: String) {
    let text = line + "\n"
    _ = text.withCString { write(1, $0, strlen($0)) }
}
func option(_ name: String, _ fallback: String? = nil) -> String {
    guard let v = options[name] ?? fallback else {
        _ = "prefsbench: --\(name) is needed\n".withCString { write(2, $0, strlen($0)) }
        exit(2)
    }
    return v
}
func fail(_ message: String) -> Never {
    _ = "prefsbench: \(message)\n".withCString { write(2, $0, strlen($0)) }
    exit(1)
}
func report(_ name: String, _ latencies: [Double], elapsed: Double) {
    let sorted = latencies.sorted()
    func pct(_ p: Double) -> Double { sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))] * 1e6 }
    out("\(name) ops=\(sorted.count) ops_per_s=\(Int(Double(sorted.count) / elapsed)) p50_us=\(Int(pct(0.5))) p99_us=\(Int(pct(0.99)))")
}
func connect() -> PrefsConnection {
    do { return try PrefsConnection(socketPath: option("socket"), root: option("root")) } catch { fail(error.description) }
}
let domain = DomainAddress(.named(option("domain", "com.apphome.bench")))
let count = Int(option("count", "1000")) ?? 1000

switch mode {
case "writes":
    let c = connect()
    let prefix = option("prefix")
    for n in 0..<count {
        let key = "\(prefix)-\(n)"
        do { _ = try c.call(.write(domain, set: [key: .integer(Int128(n))])) } catch { fail("after \(n) writes: \(error.description)") }
        if flags.contains("--log-acks") { out(key) }
    }
case "embedded-writes":
    let store = FilePreferenceStore(root: option("root"))
    let prefix = option("prefix")
    for n in 0..<count {
        do { try store.update(domain.domain, scope: .anyHost) { $0["\(prefix)-\(n)"] = .integer(Int128(n)) } } catch { fail("\(error)") }
    }
case "latency":
    let c = connect()
    do { _ = try c.call(.write(domain, set: ["counter": .integer(0)])) } catch { fail(error.description) }
    var reads: [Double] = []
    var start = UnixSocket.now()
    for _ in 0..<count {
        let t = UnixSocket.now()
        do { _ = try c.call(.read(domain, key: "counter")) } catch { fail(error.description) }
        reads.append(UnixSocket.now() - t)
    }
    report("prefsd-read", reads, elapsed: UnixSocket.now() - start)
    // The same reads from a LiveDomain: contents held here, kept current by notifications.
    let live: LiveDomain
    do { live = try LiveDomain(connection: connect(), address: domain) } catch { fail(error.description) }
    var cached: [Double] = []
    start = UnixSocket.now()
    for _ in 0..<count {
        let t = UnixSocket.now()
        do { _ = try live.value(forKey: "counter") } catch { fail(error.description) }
        cached.append(UnixSocket.now() - t)
    }
    report("prefsd-live-read", cached, elapsed: UnixSocket.now() - start)
    var writes: [Double] = []
    start = UnixSocket.now()
    for n in 0..<count {
        let t = UnixSocket.now()
        do { _ = try c.call(.write(domain, set: ["counter": .integer(Int128(n))])) } catch { fail(error.description) }
        writes.append(UnixSocket.now() - t)
    }
    report("prefsd-write", writes, elapsed: UnixSocket.now() - start)
case "storm":
    let clients = Int(option("clients", "10")) ?? 10
    let all = Mutex<[Double]>([])
    let failures = Atomic<Int>(0)
    let finished = Atomic<Int>(0)
    let socket = option("socket"), root = option("root")
    let start = UnixSocket.now()
    for worker in 0..<clients {
        let started = DetachedThread.start {
            var mine: [Double] = []
            if let c = try? PrefsConnection(socketPath: socket, root: root) {
                for n in 0..<count {
                    let t = UnixSocket.now()
                    do { _ = try c.call(.write(domain, set: ["storm-\(worker)": .integer(Int128(n))])) } catch {
                        failures.add(1, ordering: .relaxed)
                        break
                    }
                    mine.append(UnixSocket.now() - t)
                }
            } else {
                failures.add(1, ordering: .relaxed)
            }
            all.withLock { $0 += mine }
            finished.add(1, ordering: .releasing)
        }
        if !started { fail("cannot start client thread \(worker)") }
    }
    while finished.load(ordering: .acquiring) < clients { usleep(1000) }
    let elapsed = UnixSocket.now() - start
    if failures.load(ordering: .relaxed) > 0 { fail("\(failures.load(ordering: .relaxed)) client(s) failed") }
    report("prefsd-storm-\(clients)", all.withLock { $0 }, elapsed: elapsed)
case "status":
    do {
        for (k, v) in try connect().call(.status).sorted(by: { $0.key < $1.key }) { out("\(k) = \(OldStylePrinter.describe(v))") }
    } catch { fail(error.description) }
default:
    fail("unknown mode \"\(mode)\" (writes, embedded-writes, latency, storm)")
}
