import Foundation
import Testing
import TestSupport

/// A throw-away AppHome root (files key store, no prefsd unless a test starts
/// one) and the built commands beside the test binary.
struct AppRoot {
    let base: String
    var root: String { base + "/root" }

    func remove() { ScratchDirectory.remove(base) }

    init() throws {
        base = ScratchDirectory.make("secitem")
        for d in ["home", "run", "data", "config"] { try FileManager.default.createDirectory(atPath: base + "/" + d, withIntermediateDirectories: true) }
    }

    static func binary(_ name: String) -> String {
        let dir = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        for candidate in [dir, dir.deletingLastPathComponent(), Bundle.main.bundleURL.deletingLastPathComponent()] {
            let p = candidate.appendingPathComponent(name).path
            if FileManager.default.isExecutableFile(atPath: p) { return p }
        }
        return dir.appendingPathComponent(name).path
    }

    func environment(_ extra: [String: String] = [:]) -> [String: String] {
        var env = ["PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin", "HOME": base + "/home",
                   "XDG_RUNTIME_DIR": base + "/run", "XDG_DATA_HOME": base + "/data", "XDG_CONFIG_HOME": base + "/config",
                   "LANG": "C.UTF-8", "APPHOME_PREFSD": "off", "APPHOME_KEYCHAIN_KEY_STORE": "file"]
        env.merge(extra) { _, new in new }
        return env
    }

    @discardableResult
    func run(_ tool: String, _ arguments: [String], env: [String: String] = [:]) throws -> ByteArgumentProcess.Result {
        try ByteArgumentProcess.run(Self.binary(tool), arguments.map { Array($0.utf8) }, environment: environment(env))
    }

    func apphome(_ arguments: String..., env: [String: String] = [:]) throws -> ByteArgumentProcess.Result {
        try run("apphome", ["--root", root] + arguments, env: env)
    }

    /// Installs `app`, failing the test when it cannot.
    func install(app: String) throws {
        let r = try run("apphome", ["--root", root, "install", app])
        try #require(r.status == 0, "\(r)")
    }

    /// The app as a bundle: the probe and an Info.plist naming it.
    func bundle(_ id: String, version: String) throws -> String {
        let app = base + "/\(id)-\(version).app"
        try? FileManager.default.removeItem(atPath: app)
        try FileManager.default.createDirectory(atPath: app, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: Self.binary("secitem-probe"), toPath: app + "/secitem-probe")
        let plist: [String: Any] = ["CFBundleIdentifier": id, "CFBundleVersion": version, "CFBundleExecutable": "secitem-probe"]
        try PropertyListSerialization.data(fromPropertyList: plist, format: .xml, options: 0).write(to: URL(fileURLWithPath: app + "/Info.plist"))
        return app
    }

    func install(_ id: String, version: String = "1") throws {
        let r = try apphome("install", try bundle(id, version: version))
        try #require(r.status == 0, "\(r)")
    }
}
