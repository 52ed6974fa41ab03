import AppHomeSystem
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The real programs the real-client tests drive: a Swift program built with
/// `swiftc` (cached in `.build/real-clients/`, rebuilt when its source
/// changes, so `make test` stays fast), and tools found on `PATH`.
enum RealClients {
    /// Where built programs are kept between runs: `real-clients/` beside
    /// the directory of the built binaries.
    static var cacheDirectory: URL {
        get throws {
            try DefaultsBinary.url().deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("real-clients")
        }
    }

    /// `name` built from `source` with `swiftc -O`: reused when the cached
    /// copy was built from the same source.
    static func swiftProgram(_ name: String, source: String) throws -> URL {
        try cached(name, source: source, sourceName: "main.swift") { source, output, io in
            let r = try Subprocess.run(try tool("swiftc"), ["-O", source.path, "-o", output.path],
                                       environment: ProcessInfo.processInfo.environment, ioDirectory: io, timeout: 300)
            guard r.status == 0 else { throw HarnessError.helper("swiftc failed: \(r)") }
        }
    }

    /// The program `name` in the cache (`name/name`), made by `build(source, output, io)`
    /// from `source` (kept as `name/sourceName`) unless the cached program was made from
    /// the same source. `make test` runs two test processes at once over one cache, so
    /// the check and the build hold `name/.lock` (`flock`, which also keeps two threads
    /// apart), and the program is built under another name and renamed into place: no
    /// process ever runs a program half written.
    static func cached(_ name: String, source: String, sourceName: String,
                       build: (_ source: URL, _ output: URL, _ io: URL) throws -> Void) throws -> URL {
        let fm = FileManager.default
        let dir = try cacheDirectory.appendingPathComponent(name)
        try fm.createDirectory(at: dir, withIntermediateDirectories: true)
        let lock = try FileLock(path: dir.appendingPathComponent(".lock").path)
        defer { lock.unlock() }
        let binary = dir.appendingPathComponent(name)
        let cachedSource = dir.appendingPathComponent(sourceName)
        if fm.isExecutableFile(atPath: binary.path), (try? String(contentsOf: cachedSource, encoding: .utf8)) == source {
            return binary
        }
        try? fm.removeItem(at: binary)
        try Data(source.utf8).write(to: cachedSource)
        let io = dir.appendingPathComponent("io")
        try fm.createDirectory(at: io, withIntermediateDirectories: true)
        let building = dir.appendingPathComponent(".\(name).building")
        try? fm.removeItem(at: building)
        try build(cachedSource, building, io)
        guard rename(building.path, binary.path) == 0 else { throw HarnessError.helper("cannot rename \(building.path): errno \(errno)") }
        return binary
    }

    /// `name` on `PATH`.
    static func tool(_ name: String) throws -> URL {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for dir in path.split(separator: ":") {
            let candidate = URL(fileURLWithPath: String(dir)).appendingPathComponent(name)
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        throw HarnessError.helper("\(name) is not on PATH")
    }
}
