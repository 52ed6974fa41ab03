import Foundation
import Synchronization

/// The real programs the real-client tests drive: a Swift program built with
/// `swiftc` (cached in `.build/real-clients/`, rebuilt when its source
/// changes, so `make test` stays fast), and tools found on `PATH`.
enum RealClients {
    private static let building = Mutex(())

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
        try building.withLock { _ throws -> URL in
            let fm = FileManager.default
            let dir = try cacheDirectory.appendingPathComponent(name)
            let binary = dir.appendingPathComponent(name)
            let cachedSource = dir.appendingPathComponent("main.swift")
            if fm.isExecutableFile(atPath: binary.path), (try? String(contentsOf: cachedSource, encoding: .utf8)) == source {
                return binary
            }
            try fm.createDirectory(at: dir, withIntermediateDirectories: true)
            try? fm.removeItem(at: binary)
            try Data(source.utf8).write(to: cachedSource)
            let swiftc = try tool("swiftc")
            let io = dir.appendingPathComponent("io")
            try fm.createDirectory(at: io, withIntermediateDirectories: true)
            let r = try Subprocess.run(swiftc, ["-O", cachedSource.path, "-o", binary.path],
                                       environment: ProcessInfo.processInfo.environment, ioDirectory: io, timeout: 300)
            guard r.status == 0 else { throw HarnessError.helper("swiftc failed: \(r)") }
            return binary
        }
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
