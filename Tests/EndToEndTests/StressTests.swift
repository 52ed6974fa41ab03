import Foundation
import Testing

/// Size, depth, concurrency and crash safety, all through the real binary.
@Suite("stress")
struct StressTests {
    /// A ~10 MB dictionary of every plist type: argv[1] = path.
    static let bigDomain = """
        import random
        rng = random.Random(20250407)
        d = {}
        for i in range(6000):
            k = 'key%05d' % i
            m = i % 6
            if m == 0: d[k] = ('value %d \\u00e9\\u6d4f ' % i) * 40
            elif m == 1: d[k] = rng.randbytes(7500)
            elif m == 2: d[k] = [rng.randrange(-2**63, 2**63) for _ in range(60)]
            elif m == 3: d[k] = {'r': rng.random() * 1e6, 'b': i % 2 == 0, 'n': i,
                                 'when': datetime.datetime(2000 + i % 30, 1 + i % 12, 1 + i % 28, i % 24, i % 60, i % 60)}
            elif m == 4: d[k] = 'ascii %d ' % i * 50
            else: d[k] = [{'id': i, 'tags': ['a%d' % i, 'b']}, rng.random()]
        with open(sys.argv[1], 'wb') as f:
            plistlib.dump(d, f, fmt=plistlib.FMT_BINARY)
        print('OK')
        """

    @Test func aTenMegabyteDomainRoundTripsThroughImportAndExport() throws {
        let root = try TempRoot()
        let source = root.workFile("big.plist")
        let result = try root.python(Self.bigDomain, [source.path])
        try #require(result.stdout == "OK\n", "\(result)")
        let size = try FileManager.default.attributesOfItem(atPath: source.path)[.size] as? Int ?? 0
        #expect(size >= 10_000_000, "fixture is only \(size) bytes")
        try root.succeed(["import", "com.example.big", source.path])
        let out = root.workFile("big-out.plist")
        try root.succeed(["export", "com.example.big", out.path])
        try root.expectSamePlist(source, out)
        try root.expectSamePlist(source, root.domainFile("com.example.big"))
        #expect(try root.succeed(["read", "com.example.big", "key00003"]).stdout.hasPrefix("{\n    b = 0;\n"))
    }

    /// argv[1] = path, argv[2] = depth: a dictionary nesting arrays and dictionaries in turn,
    /// `depth` collections deep in all, with the string `bottom` at the end.
    static let deepDomain = """
        depth = int(sys.argv[2])
        v = 'bottom'
        for i in range(depth - 1):
            v = {'k': v} if i % 2 else [v]
        with open(sys.argv[1], 'wb') as f:
            plistlib.dump({'deep': v}, f, fmt=plistlib.FMT_BINARY)
        print('OK')
        """

    private func deepFixture(_ root: TempRoot, depth: Int, at url: URL) throws {
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        let result = try root.python(Self.deepDomain, [url.path, String(depth)])
        try #require(result.stdout == "OK\n", "\(result)")
    }

    @Test func aDomainNestedOneThousandLevelsDeepWorks() throws {
        let root = try TempRoot()
        let file = root.domainFile("com.example.deep")
        try deepFixture(root, depth: 1000, at: file)

        let read = try root.succeed(["read", "com.example.deep"])
        #expect(read.stdout.hasPrefix("{\n    deep =     (\n"))
        #expect(read.stdout.contains("bottom") && read.stdout.hasSuffix("}\n"))

        let json = try root.succeed(["--format", "json", "read", "com.example.deep"])
        try root.pythonCheckJSON(json.stdoutData, against: file)

        let out = root.workFile("deep-out.plist")
        try root.succeed(["export", "com.example.deep", out.path])
        try root.expectSamePlist(file, out)

        try root.succeed(["import", "com.example.deep2", out.path])
        try root.expectSamePlist(file, root.domainFile("com.example.deep2"))
    }

    @Test func aDomainNestedBeyondTheLimitIsAClearError() throws {
        let root = try TempRoot()
        let file = root.domainFile("com.example.deeper")
        try deepFixture(root, depth: 5000, at: file)
        let fixture = root.workFile("deeper.plist")
        try FileManager.default.copyItem(at: file, to: fixture)
        let before = root.snapshot()
        for arguments in [["read", "com.example.deeper"], ["--format", "json", "read", "com.example.deeper"],
                          ["export", "com.example.deeper", "-"], ["write", "com.example.deeper", "k", "v"],
                          ["import", "com.example.other", fixture.path]] {
            let result = try root.run(arguments)
            #expect(result.isFailure(1), "\(arguments): \(result)")
            #expect(!result.stderr.contains("Fatal error") && !result.stderr.contains("Stack dump")
                    && !result.stderr.contains("stack trace") && result.stderr.count < 2000,
                    "\(arguments): \(result)")
        }
        root.expectUnchanged(since: before, after: "deep reads")
    }

    @Test func concurrentWritersLoseNoUpdates() throws {
        let root = try TempRoot()
        let binary = try DefaultsBinary.url()
        let script = """
            i=$1
            j=0
            while [ $j -lt 25 ]; do
              "$DEFAULTS" --root "$ROOT" write com.example.race "k${i}_${j}" -int "$j" || exit 1
              j=$((j + 1))
            done
            """
        var env = root.environment()
        env["DEFAULTS"] = binary.path
        env["ROOT"] = root.root.path
        let workers = try (0..<8).map { i in
            try Subprocess.start(URL(fileURLWithPath: "/bin/sh"), ["-c", script, "worker", String(i)],
                                 environment: env, ioDirectory: root.io, timeout: 120)
        }
        for (i, worker) in workers.enumerated() {
            let result = try worker.finish()
            #expect(result.status == 0 && !result.signaled && result.stderr.isEmpty, "worker \(i): \(result)")
        }
        try root.expectPlist(root.domainFile("com.example.race"),
                             equals: "{'k%d_%d' % (i, j): j for i in range(8) for j in range(25)}")
        let names = try FileManager.default.contentsOfDirectory(atPath: root.preferences.path)
        #expect(names.filter { !$0.hasPrefix(".") } == ["com.example.race.plist"], "\(names)")
    }

    /// argv[1], argv[2]: two ~5 MB dictionaries with the same keys and different values.
    static let twoVersions = """
        for path, tag in ((sys.argv[1], 'A'), (sys.argv[2], 'B')):
            d = {'version': tag}
            for i in range(2500):
                d['k%04d' % i] = bytes([ord(tag)]) * 9000 + i.to_bytes(4, 'big') if i % 5 == 0 else tag * 7 + str(i)
                d['s%04d' % i] = '%s-%d-' % (tag, i) * 4
            with open(path, 'wb') as f:
                plistlib.dump(d, f, fmt=plistlib.FMT_BINARY)
        print('OK')
        """

    /// argv[1] = A, argv[2] = B, argv[3…] = snapshots; each must decode to A or to B.
    static let eachIsAOrB = """
        a = typed(load(sys.argv[1])); b = typed(load(sys.argv[2]))
        bad = []
        for path in sys.argv[3:]:
            try:
                t = typed(load(path))
            except Exception as e:
                bad.append('%s: %s' % (path, e)); continue
            if t != a and t != b: bad.append(path + ': neither old nor new')
        report(not bad, '; '.join(bad))
        """

    @Test func anImportKilledAtAnyMomentLeavesTheOldOrTheNewFile() throws {
        let root = try TempRoot()
        let a = root.workFile("A.plist"), b = root.workFile("B.plist")
        let generated = try root.python(Self.twoVersions, [a.path, b.path])
        try #require(generated.stdout == "OK\n", "\(generated)")
        let domain = "com.example.crash"
        let target = root.domainFile(domain)
        try root.succeed(["import", domain, a.path])

        // How long one import takes here, to spread the kills over its whole run.
        let clock = ContinuousClock()
        let elapsed = try clock.measure { try root.succeed(["import", domain, b.path]) }
        let span = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let iterations = 20
        var snapshots: [String] = []
        var killedBeforeExit = 0
        for i in 0..<iterations {
            let source = i % 2 == 0 ? a : b
            let running = try root.start(["import", domain, source.path])
            let delay = span * 1.1 * Double(i) / Double(iterations - 1)
            usleep(useconds_t(delay * 1_000_000))
            running.kill(SIGKILL)
            let result = try running.finish()
            if result.signaled { killedBeforeExit += 1 } else {
                #expect(result.status == 0, "iteration \(i): \(result)")
            }
            let snapshot = root.workFile("snapshot-\(i).plist")
            try Data(contentsOf: target).write(to: snapshot)
            snapshots.append(snapshot.path)
            let names = try FileManager.default.contentsOfDirectory(atPath: root.preferences.path)
            #expect(names.allSatisfy { $0 == target.lastPathComponent || $0.hasPrefix(".") },
                    "iteration \(i) left \(names)")
        }
        #expect(killedBeforeExit > 0, "no import was ever killed mid-run")
        try root.pythonCheck(Self.eachIsAOrB, [a.path, b.path] + snapshots)
        // A killed writer must not leave the domain locked.
        try root.succeed(["write", domain, "after", "-int", "1"])
        try root.expectOutput(["read", domain, "after"], "1\n")
    }
}
