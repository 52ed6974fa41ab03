#if canImport(Glibc)
import Glibc
#endif
import KeyedArchive
import PropertyList

/// `plistbench`: times the binary plist codec on one file, for `make bench`
/// (bench/run.sh prints it beside python's plistlib and libplist).
///
///     plistbench generate <out.plist> <megabytes>
///     plistbench decode <file> [iterations]
///     plistbench encode <file> [iterations]
///     plistbench archive-decode <file> [iterations]   a keyed archive into its graph
///     plistbench archive-encode <file> [iterations]   that graph back into an archive
///
/// Foundation-free like the library it measures.
public enum PlistBench {
    /// Runs `arguments` (the program's name first); returns the exit status.
    public static func main(_ arguments: [String]) -> Int32 {
        do {
            try run(arguments)
            return 0
        } catch {
            return error.report(as: "plistbench")
        }
    }

    /// A codec error as the bench reports it.
    private static func plist<T>(_ body: () throws -> T) throws(BenchFailure) -> T {
        do { return try body() } catch { throw BenchFailure((error as? CustomStringConvertible)?.description ?? "\(error)") }
    }

    /// Runs `body` `iterations` times: the milliseconds of each run, and
    /// the last run's result (kept alive until the clock has stopped).
    private static func timed<T>(_ iterations: Int, _ body: () throws -> T) throws(BenchFailure) -> (milliseconds: [Double], last: T?) {
        var times: [Double] = []
        var last: T?
        for _ in 0..<iterations {
            let t0 = now()
            let value: T
            value = try plist(body)
            let t1 = now()
            times.append(t1 - t0)
            last = value
        }
        return (times, last)
    }

    static func readFile(_ path: String) throws(BenchFailure) -> [UInt8] {
        guard let f = fopen(path, "rb") else { throw BenchFailure("cannot open \(path): \(String(cString: strerror(errno)))") }
        defer { fclose(f) }
        fseek(f, 0, SEEK_END)
        let size = ftell(f)
        fseek(f, 0, SEEK_SET)
        var bytes = [UInt8](repeating: 0, count: size)
        let read = bytes.withUnsafeMutableBytes { fread($0.baseAddress, 1, size, f) }
        guard read == size else { throw BenchFailure("short read from \(path)") }
        return bytes
    }

    static func writeFile(_ path: String, _ bytes: [UInt8]) throws(BenchFailure) {
        guard let f = fopen(path, "wb") else { throw BenchFailure("cannot create \(path): \(String(cString: strerror(errno)))") }
        defer { fclose(f) }
        let written = bytes.withUnsafeBytes { fwrite($0.baseAddress, 1, bytes.count, f) }
        guard written == bytes.count else { throw BenchFailure("short write to \(path)") }
    }

    static func now() -> Double {
        var t = timespec()
        clock_gettime(CLOCK_MONOTONIC, &t)
        return Double(t.tv_sec) * 1e3 + Double(t.tv_nsec) / 1e6
    }

    /// SplitMix64: deterministic across runs and platforms.
    struct SplitMix {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }
        mutating func unit() -> Double { Double(next() >> 11) / Double(1 << 53) }
    }

    static let words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet",
                 "kilo", "lima", "mike", "november", "oscar", "papa", "quebec", "romeo", "sierra", "tango",
                 "Zürich", "café", "naïve", "東京", "🙂"]

    static func sentence(_ r: inout SplitMix, _ n: Int) -> String {
        (0..<n).map { _ in words[r.below(words.count)] }.joined(separator: " ")
    }

    /// One record like an app's cached item: a mix of every type.
    static func record(_ r: inout SplitMix, _ i: Int) -> PlistValue {
        var tags: [PlistValue] = []
        for _ in 0..<r.below(6) { tags.append(.string(words[r.below(words.count)])) }
        let history: [PlistValue] = (0..<r.below(4)).map { _ in
            .dictionary([
                "at": .date(PlistDate(secondsSinceReferenceDate: 6e8 + r.unit() * 1e8)),
                "delta": .integer(Int128(r.below(2000)) - 1000),
                "ok": .bool(r.below(2) == 0),
            ])
        }
        return .dictionary([
            "id": .integer(Int128(i)),
            "uuid": .string(String(r.next(), radix: 16) + "-" + String(r.next(), radix: 16)),
            "title": .string(sentence(&r, 1 + r.below(6))),
            "score": .real(r.unit() * 100),
            "count": .integer(Int128(r.below(100_000))),
            "big": .integer(Int128(r.next() >> 1)),
            "created": .date(PlistDate(secondsSinceReferenceDate: 5e8 + r.unit() * 2e8)),
            "enabled": .bool(r.below(2) == 0),
            "thumbnail": .data((0..<(8 + r.below(48))).map { _ in UInt8(truncatingIfNeeded: r.next()) }),
            "tags": .array(tags),
            "history": .array(history),
            "location": .dictionary(["lat": .real(r.unit() * 180 - 90), "lon": .real(r.unit() * 360 - 180)]),
        ])
    }

    static func generate(_ path: String, megabytes: Double) throws(BenchFailure) {
        var r = SplitMix(state: 42)
        var records: [PlistKey: PlistValue] = [:]
        let target = Int(megabytes * 1_048_576)
        var i = 0
        var bytes: [UInt8] = []
        // Grow in batches sized from the bytes per record so far, re-encoding
        // to measure, until the target is reached.
        var batch = 256
        while true {
            for _ in 0..<batch {
                records["record-\(i)"] = record(&r, i)
                i += 1
            }
            bytes = try plist { try PlistCodec.encode(.dictionary(["version": .integer(1), "records": .dictionary(records)]), format: .binary) }
            if bytes.count >= target { break }
            let perRecord = max(1, bytes.count / records.count)
            // Half the estimate: records grow as references widen.
            batch = max(16, (target - bytes.count) / perRecord / 2 + 1)
        }
        try writeFile(path, bytes)
        print("wrote \(path): \(bytes.count) bytes, \(records.count) records")
    }

    static func report(_ what: String, size: Int, _ times: [Double]) {
        let sorted = times.sorted()
        let median = sorted[sorted.count / 2]
        let mb = Double(size) / 1_048_576
        print("\(what) \(format(mb, 1)) MB: best \(format(sorted[0], 1)) ms, median \(format(median, 1)) ms")
    }

    static func format(_ x: Double, _ decimals: Int) -> String {
        var scale = 1.0
        for _ in 0..<decimals { scale *= 10 }
        let n = Int((x * scale).rounded())
        let whole = n / Int(scale)
        var frac = String(n % Int(scale))
        while frac.count < decimals { frac = "0" + frac }
        return decimals == 0 ? "\(whole)" : "\(whole).\(frac)"
    }

    static func run(_ args: [String]) throws(BenchFailure) {
        guard args.count >= 3 else {
            throw BenchFailure("usage: plistbench generate <out.plist> <megabytes> | decode <file> [iterations] | encode <file> [iterations]")
        }
        let iterations = args.count > 3 ? (Int(args[3]) ?? 10) : 10
        switch args[1] {
        case "generate":
            guard args.count == 4, let mb = Double(args[3]) else { throw BenchFailure("usage: plistbench generate <out.plist> <megabytes>") }
            try generate(args[2], megabytes: mb)
        case "decode":
            let bytes = try readFile(args[2])
            let times = try timed(iterations) { try PlistCodec.decode(bytes, format: .binary) }
            report("decode", size: bytes.count, times.milliseconds)
        case "encode":
            let bytes = try readFile(args[2])
            let value = try plist { try PlistCodec.decode(bytes) }
            let times = try timed(iterations) { try PlistCodec.encode(value, format: .binary) }
            report("encode", size: times.last?.count ?? 0, times.milliseconds)
        case "archive-decode":
            let bytes = try readFile(args[2])
            let times = try timed(iterations) { try KeyedArchive.decode(bytes) }
            report("archive-decode", size: bytes.count, times.milliseconds)
        case "archive-encode":
            let archive = try plist { try KeyedArchive.decode(try readFile(args[2])) }
            let times = try timed(iterations) { try archive.encode(format: .binary) }
            report("archive-encode", size: times.last?.count ?? 0, times.milliseconds)
        default:
            throw BenchFailure("unknown subcommand \(args[1])")
        }
    }
}
