import Foundation
import Testing

/// A throw-away world for one test: an AppHome root plus a private HOME, XDG directories
/// and scratch space, all under one temporary directory removed when the value goes away.
///
/// `root` itself is not created: the command under test must create it (with mode 0700).
final class TempRoot: Sendable {
    let base: URL
    let root: URL
    let home: URL
    let dataHome: URL
    let configHome: URL
    let runtimeDirectory: URL
    /// Scratch space for fixtures the test feeds to the command (imports, exports).
    let work: URL
    let io: URL
    /// The managed-preferences directory (`APPHOME_MANAGED_DIR`), not created:
    /// a test that forces values makes it.
    let managed: URL
    /// The prefsd serving this root when the suite runs in daemon mode.
    let daemon: Subprocess.Running?

    /// Which way `defaults` reaches the files in this run: `APPHOME_TEST_PREFSD=daemon`
    /// runs every end-to-end test through a prefsd started per test (`make test` runs the
    /// suite both ways); otherwise straight on the files.
    static let daemonMode = ProcessInfo.processInfo.environment["APPHOME_TEST_PREFSD"] == "daemon"

    init() throws {
        let fm = FileManager.default
        base = fm.temporaryDirectory.appendingPathComponent("apphome-e2e-\(UUID().uuidString)")
        root = base.appendingPathComponent("root")
        home = base.appendingPathComponent("home")
        dataHome = base.appendingPathComponent("xdg-data")
        configHome = base.appendingPathComponent("xdg-config")
        runtimeDirectory = base.appendingPathComponent("run")
        work = base.appendingPathComponent("work")
        io = base.appendingPathComponent("io")
        managed = base.appendingPathComponent("managed")
        for directory in [home, dataHome, configHome, runtimeDirectory, work, io] {
            try fm.createDirectory(at: directory, withIntermediateDirectories: true,
                                   attributes: [.posixPermissions: 0o700])
        }
        if Self.daemonMode {
            let socket = runtimeDirectory.appendingPathComponent("apphome/prefsd.sock")
            var env = ["PATH": "/usr/bin:/bin", "HOME": home.path, "XDG_RUNTIME_DIR": runtimeDirectory.path]
            env["LANG"] = "C.UTF-8"
            env["APPHOME_MANAGED_DIR"] = managed.path
            daemon = try Subprocess.start(try DefaultsBinary.url().deletingLastPathComponent().appendingPathComponent("prefsd"),
                                          ["--foreground", "--root", root.path], environment: env, ioDirectory: io, timeout: 600)
            guard waitUntilListening(socket.path) else { throw HarnessError.helper("prefsd did not answer on \(socket.path)") }
        } else {
            daemon = nil
        }
    }

    deinit {
        if let daemon {
            daemon.kill(SIGTERM)
            _ = try? daemon.finish()
        }
        try? FileManager.default.removeItem(at: base)
    }

    // MARK: Paths

    var preferences: URL { root.appendingPathComponent("Library/Preferences") }
    var byHost: URL { preferences.appendingPathComponent("ByHost") }

    func domainFile(_ domain: String) -> URL {
        preferences.appendingPathComponent("\(domain).plist")
    }

    var globalFile: URL { preferences.appendingPathComponent(".GlobalPreferences.plist") }

    func workFile(_ name: String) -> URL { work.appendingPathComponent(name) }

    /// A copy of the built `program` alone in a directory of its own
    /// (`lonely/bin`: no sibling beside it, none in `../lib/apphome`).
    func lonelyCopy(of program: String) throws -> URL {
        let dir = workFile("lonely/bin")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let copy = dir.appendingPathComponent(program)
        try FileManager.default.copyItem(at: try TestDaemon.binary(program), to: copy)
        return copy
    }

    // MARK: Running the command

    /// The child's environment: nothing of the real user's HOME or XDG directories.
    ///
    /// TZ is set far from UTC so that any date printed in local time shows up.
    func environment(_ extra: [String: String] = [:], unsetting: [String] = []) -> [String: String] {
        var env: [String: String] = [
            "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin",
            "HOME": home.path,
            "XDG_DATA_HOME": dataHome.path,
            "XDG_CONFIG_HOME": configHome.path,
            "XDG_RUNTIME_DIR": runtimeDirectory.path,
            "TZ": "America/New_York",
            "LANG": "C.UTF-8",
            "APPHOME_PREFSD": Self.daemonMode ? "require" : "off",
            "APPHOME_MANAGED_DIR": managed.path,
        ]
        env.merge(extra) { _, new in new }
        for name in unsetting { env[name] = nil }
        return env
    }

    /// Runs `defaults --root <root> args…` (or without `--root` when `passRoot` is false).
    func run(_ arguments: [String], stdin: Data? = nil, stdinFile: URL? = nil,
             env: [String: String] = [:], unsetting: [String] = [], passRoot: Bool = true,
             timeout: TimeInterval = 60) throws -> CommandResult {
        try start(arguments, stdin: stdin, stdinFile: stdinFile, env: env, unsetting: unsetting,
                  passRoot: passRoot, timeout: timeout).finish()
    }

    func start(_ arguments: [String], stdin: Data? = nil, stdinFile: URL? = nil,
               env: [String: String] = [:], unsetting: [String] = [], passRoot: Bool = true,
               timeout: TimeInterval = 60) throws -> Subprocess.Running {
        let argv = passRoot ? ["--root", root.path] + arguments : arguments
        return try Subprocess.start(try DefaultsBinary.url(), argv,
                                    environment: environment(env, unsetting: unsetting),
                                    stdin: stdin, stdinFile: stdinFile, ioDirectory: io,
                                    timeout: timeout)
    }

    /// Runs the command and records an issue unless it exits 0 with nothing on stderr.
    @discardableResult
    func succeed(_ arguments: [String], stdin: Data? = nil, stdinFile: URL? = nil,
                 env: [String: String] = [:], passRoot: Bool = true,
                 sourceLocation: SourceLocation = #_sourceLocation) throws -> CommandResult {
        let result = try run(arguments, stdin: stdin, stdinFile: stdinFile, env: env, passRoot: passRoot)
        #expect(result.status == 0 && !result.signaled && result.stderr.isEmpty,
                "defaults \(arguments.joined(separator: " ")) → \(result)", sourceLocation: sourceLocation)
        return result
    }

    /// Runs a command that must succeed and expects exactly `expected` on stdout.
    func expectOutput(_ arguments: [String], _ expected: String,
                      sourceLocation: SourceLocation = #_sourceLocation) throws {
        let output = try succeed(arguments, sourceLocation: sourceLocation).stdout
        #expect(output == expected, "defaults \(arguments.joined(separator: " "))", sourceLocation: sourceLocation)
    }

    // MARK: Files

    /// Every regular file under the root, by path relative to the base, with its bytes.
    func snapshot() -> [String: Data] {
        var files: [String: Data] = [:]
        let fm = FileManager.default
        guard let walker = fm.enumerator(at: root, includingPropertiesForKeys: [.isRegularFileKey]) else {
            return files
        }
        for case let url as URL in walker {
            guard (try? url.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true else { continue }
            let relative = String(url.resolvingSymlinksInPath().path.dropFirst(root.resolvingSymlinksInPath().path.count))
            files[relative] = (try? Data(contentsOf: url)) ?? Data()
        }
        return files
    }

    func write(_ text: String, to url: URL) throws {
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(),
                                                withIntermediateDirectories: true)
        try Data(text.utf8).write(to: url)
    }

    func permissions(of url: URL) -> Int? {
        (try? FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions] as? NSNumber)?.intValue
    }

    // MARK: Independent checks through python3 plistlib

    func python(_ script: String, _ arguments: [String] = [], stdin: Data? = nil,
                timeout: TimeInterval = 120) throws -> CommandResult {
        // The real environment: pyenv shims need the real HOME; python never touches AppHome.
        try Subprocess.run(URL(fileURLWithPath: "/usr/bin/env"),
                           ["python3", "-c", PythonScripts.prelude + script] + arguments,
                           environment: ProcessInfo.processInfo.environment, stdin: stdin,
                           ioDirectory: io, timeout: timeout)
    }

    /// Runs a python check that prints `OK` on success; anything else is recorded as an issue.
    @discardableResult
    func pythonCheck(_ script: String, _ arguments: [String], comment: String = "",
                     sourceLocation: SourceLocation = #_sourceLocation) throws -> Bool {
        let result = try python(script, arguments)
        let ok = result.status == 0 && result.stdout == "OK\n"
        #expect(ok, "\(comment) python check: \(result)", sourceLocation: sourceLocation)
        return ok
    }

    /// Checks, with plistlib, that `file` decodes to `expected` (a Python expression), types
    /// included (a bool is not an int, an int is not a real). With `key`, only that entry.
    @discardableResult
    func expectPlist(_ file: URL, key: String? = nil, equals expected: String,
                     sourceLocation: SourceLocation = #_sourceLocation) throws -> Bool {
        try pythonCheck(PythonScripts.compareWithExpression,
                        [file.path, expected] + (key.map { [$0] } ?? []),
                        comment: "\(file.lastPathComponent)\(key.map { "[\($0)]" } ?? "") == \(expected)",
                        sourceLocation: sourceLocation)
    }

    /// Checks, with plistlib, that two plist files hold the same typed values.
    @discardableResult
    func expectSamePlist(_ a: URL, _ b: URL, sourceLocation: SourceLocation = #_sourceLocation) throws -> Bool {
        try pythonCheck(PythonScripts.compareFiles, [a.path, b.path],
                        comment: "\(a.path) vs \(b.path)", sourceLocation: sourceLocation)
    }
}

/// Python snippets; `prelude` is put in front of each.
enum PythonScripts {
    static let prelude = """
        import sys, plistlib, datetime, json, base64
        sys.setrecursionlimit(1000000)
        def typed(o):
            if isinstance(o, bool): return ['bool', o]
            if isinstance(o, int): return ['int', o]
            if isinstance(o, float): return ['real', o]
            if isinstance(o, str): return ['str', o]
            if isinstance(o, (bytes, bytearray)): return ['data', bytes(o).hex()]
            if isinstance(o, datetime.datetime):
                if o.tzinfo is not None:
                    o = o.astimezone(datetime.timezone.utc).replace(tzinfo=None)
                return ['date', o.isoformat()]
            if isinstance(o, (list, tuple)): return ['array', [typed(x) for x in o]]
            if isinstance(o, dict): return ['dict', sorted((k, typed(v)) for k, v in o.items())]
            if isinstance(o, plistlib.UID): return ['uid', o.data]
            raise TypeError(repr(type(o)))
        def load(path):
            with open(path, 'rb') as f:
                return plistlib.load(f)
        def loads(data):
            return plistlib.loads(data)
        def from_typed_json(o):
            # AppHome's lossless JSON: dates and data are one-key objects, reals keep a '.'.
            if isinstance(o, dict):
                if set(o) == {'$date'}:
                    return datetime.datetime.fromisoformat(o['$date'].replace('Z', '+00:00'))
                if set(o) == {'$data'}:
                    return base64.b64decode(o['$data'])
                return {k: from_typed_json(v) for k, v in o.items()}
            if isinstance(o, list): return [from_typed_json(x) for x in o]
            return o
        def report(ok, detail):
            print('OK' if ok else 'MISMATCH ' + detail[:3000])

        """

    /// argv: file, python-expression[, key]
    static let compareWithExpression = """
        d = load(sys.argv[1])
        if len(sys.argv) > 3:
            d = d.get(sys.argv[3], '<missing key>') if isinstance(d, dict) else '<not a dict>'
        e = eval(sys.argv[2])
        report(typed(d) == typed(e), 'actual ' + repr(d))
        """

    /// argv: file a, file b
    static let compareFiles = """
        a = load(sys.argv[1]); b = load(sys.argv[2])
        report(typed(a) == typed(b), 'the files differ')
        """

    /// Writes the expression in argv[2] to the file argv[1] as a plist of format argv[3]
    /// (`xml` or `binary`).
    static let writePlist = """
        fmt = plistlib.FMT_XML if sys.argv[3] == 'xml' else plistlib.FMT_BINARY
        with open(sys.argv[1], 'wb') as f:
            plistlib.dump(eval(sys.argv[2]), f, fmt=fmt, sort_keys=True)
        print('OK')
        """
}

extension TempRoot {
    /// Writes a plist fixture from a Python expression (`binary` or `xml`).
    func writePlist(_ expression: String, to url: URL, format: String = "binary") throws {
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(),
                                                withIntermediateDirectories: true)
        let result = try python(PythonScripts.writePlist, [url.path, expression, format])
        guard result.status == 0, result.stdout == "OK\n" else {
            throw HarnessError.helper("could not write fixture \(url.path): \(result)")
        }
    }

    /// Expects a failed command that left every file under the root as it was.
    ///
    /// New files are tolerated only when hidden and empty (lock files).
    func expectUnchanged(since before: [String: Data], after command: String,
                         sourceLocation: SourceLocation = #_sourceLocation) {
        let after = snapshot()
        for (path, bytes) in before {
            #expect(after[path] == bytes, "\(command) changed or removed \(path)", sourceLocation: sourceLocation)
        }
        for (path, bytes) in after where before[path] == nil {
            let name = (path as NSString).lastPathComponent
            #expect(name.hasPrefix(".") && bytes.isEmpty,
                    "\(command) left a new file \(path) (\(bytes.count) bytes)", sourceLocation: sourceLocation)
        }
    }
}

extension CommandResult {
    /// True when the command failed the AppHome way: the given status, nothing on stdout,
    /// stderr starting with `defaults: `.
    func isFailure(_ expected: Int32) -> Bool {
        !signaled && status == expected && stdoutData.isEmpty && stderr.hasPrefix("defaults: ")
    }
}

extension Data {
    init(hex: String) {
        var bytes: [UInt8] = []
        var iterator = hex.makeIterator()
        while let high = iterator.next(), let low = iterator.next() {
            bytes.append(UInt8(String([high, low]), radix: 16)!)
        }
        self.init(bytes)
    }
}
