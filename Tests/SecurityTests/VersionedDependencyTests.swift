import Foundation
import Testing
import TestSupport

/// Whether git and swift are on PATH (the suite is skipped without them).
let versionedDependencyToolsPresent: Bool = ["git", "swift"].allSatisfy { tool in
    (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").contains { FileManager.default.isExecutableFile(atPath: "\($0)/\(tool)") }
}

/// AppHome as an app developer's package depends on it: examples/ScaryBugs-app,
/// with `.package(url: "file://…", from: "0.1.0")` on a tagged clone of this
/// checkout (scripts/versioned-apphome.sh), using `PropertyList`,
/// `KeyedArchive` and `Security`; built by its build.sh, installed and run as
/// an app. SwiftPM refuses a product of such a dependency whose targets carry
/// unsafe flags, so this fails if one comes back.
///
/// The clone (`.build/versioned-client`) and the example's build
/// (`examples/ScaryBugs-app/.build`) are kept: a re-run rebuilds what changed.
@Suite("Security: an app's package that depends on AppHome by version", .enabled(if: versionedDependencyToolsPresent))
struct VersionedDependencyTests {
    static let packageDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
    static let app = "com.example.ScaryBugsApp"

    @Test func scaryBugsBuildsAgainstATaggedCloneAndKeepsItsDataWhereItsHomeIs() throws {
        let t = try AppRoot()
        defer { t.remove() }
        let bundle = t.base + "/ScaryBugs.app"
        var env = ProcessInfo.processInfo.environment
        env["APPHOME_BUNDLE_ID"] = nil
        let build = try ByteArgumentProcess.run(Self.packageDirectory + "/examples/ScaryBugs-app/build.sh", [Array(bundle.utf8)],
                                                environment: env, timeout: 1800)
        try #require(build.status == 0, "\(build)")
        #expect(!build.standardError.contains("unsafe build flags"), "\(build)")
        try t.install(app: bundle)
        func launch(_ arguments: String...) throws -> ByteArgumentProcess.Result {
            // Unconfined: the client package is what this checks; the sandboxed
            // keychain through prefsd is AppSecItemTests' and the demo's.
            try t.run("apphome", ["--root", t.root, "launch", "--no-sandbox", Self.app] + arguments)
        }
        #expect(try t.run("defaults", ["--root", t.root, "write", Self.app, "sortOrder", "-string", "rating"]).status == 0)
        #expect(try launch("add", "Centipede", "3.5").status == 0)
        #expect(try launch("add", "Wolf Spider", "4.5").status == 0)
        let list = try launch("list")
        #expect(list.status == 0 && list.standardOutput == "Wolf Spider\t4.5\nCentipede\t3.5\n", "\(list)")
        let login = try launch("login", "t0ken")
        #expect(login.status == 0, "\(login)")
        let status = try launch("status")
        #expect(status.status == 0 && status.standardOutput == "launches: 5\nbugs: 2 in Documents\ntoken: t0ken\n", "\(status)")
        let home = try t.run("apphome", ["--root", t.root, "container", Self.app, "documents"])
        let documents = home.standardOutput.trimmingCharacters(in: .newlines)
        #expect(FileManager.default.fileExists(atPath: documents + "/bugs.archive"), "\(home)")
        let seen = try t.run("security", ["--root", t.root, "--app", Self.app, "find-generic-password", "-s", "sync.scarybugs.example.com", "-a", "ray", "-w"])
        #expect(seen.status == 0 && seen.standardOutput == "t0ken\n", "\(seen)")
        let launches = try t.run("defaults", ["--root", t.root, "read", Self.app, "launchCount"])
        #expect(launches.standardOutput == "5\n", "\(launches)")
    }
}
