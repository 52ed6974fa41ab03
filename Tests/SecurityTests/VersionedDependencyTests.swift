import Foundation
import Testing
import TestSupport

/// Whether git and swift are on PATH (the suite is skipped without them).
let versionedDependencyToolsPresent: Bool = ["git", "swift"].allSatisfy { tool in
    (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").contains { FileManager.default.isExecutableFile(atPath: "\($0)/\(tool)") }
}

/// AppHome as a user's package depends on it: a throw-away git clone of this
/// checkout, tagged with a version, and a client package with
/// `.package(url: "file://…", from: "0.1.0")` using `PropertyList` and
/// `Security`, built and run. SwiftPM refuses a product of such a dependency
/// whose targets carry unsafe flags, so this fails if one comes back.
///
/// The clone and the client live under `.build/versioned-client` of the
/// checkout and are kept: a re-run rebuilds only what changed.
@Suite("Security: a package that depends on AppHome by version", .enabled(if: versionedDependencyToolsPresent))
struct VersionedDependencyTests {
    static let packageDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

    static let manifest = """
    // swift-tools-version:6.0
    import PackageDescription

    let package = Package(
        name: "Client",
        dependencies: [.package(url: "file://CACHE/AppHome", from: "0.1.0")],
        targets: [
            .executableTarget(name: "Client", dependencies: [
                .product(name: "PropertyList", package: "AppHome"),
                .product(name: "Security", package: "AppHome"),
            ]),
        ]
    )

    """

    static let main = """
    import Foundation
    import PropertyList
    import Security

    let value = PlistValue.dictionary(["token": .string("t0ken")])
    let bytes = try PlistCodec.encode(value, format: .binary)
    print("plist \\(try PlistCodec.decode(bytes) == value)")
    let query = [kSecClass as String: kSecClassGenericPassword, kSecReturnData as String: kCFBooleanTrue!] as [String: Any]
    let status = SecItemCopyMatching(query as CFDictionary, nil)
    print("status \\(status)")

    """

    func shell(_ script: String, in directory: String) throws -> ByteArgumentProcess.Result {
        var env = ProcessInfo.processInfo.environment
        env["APPHOME_BUNDLE_ID"] = nil
        return try ByteArgumentProcess.run("/bin/sh", [Array("-c".utf8), Array("cd \"$0\" && \(script)".utf8), Array(directory.utf8)],
                                           environment: env, timeout: 1800)
    }

    func write(_ text: String, to path: String) throws {
        // Only when it changed: the client's build keeps its state.
        if (try? String(contentsOfFile: path, encoding: .utf8)) == text { return }
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try text.write(toFile: path, atomically: true, encoding: .utf8)
    }

    @Test func aClientPackageBuildsAgainstATaggedCloneAndRuns() throws {
        let cache = Self.packageDirectory + "/.build/versioned-client"
        let tag = try shell("scripts/versioned-apphome.sh \"\(cache)/AppHome\"", in: Self.packageDirectory)
        try #require(tag.status == 0, "\(tag)")
        let client = cache + "/client"
        try write(Self.manifest.replacingOccurrences(of: "CACHE", with: cache), to: client + "/Package.swift")
        try write(Self.main, to: client + "/Sources/Client/main.swift")
        let build = try shell("swift package update >/dev/null && swift build 2>&1 && .build/debug/Client", in: client)
        #expect(build.status == 0, "\(build)")
        #expect(!build.standardOutput.contains("unsafe build flags"), "\(build)")
        #expect(build.standardOutput.hasSuffix("plist true\nstatus -34018\n"), "\(build)")
    }
}
