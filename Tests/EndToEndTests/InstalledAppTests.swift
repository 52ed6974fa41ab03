import Foundation
import Testing

/// `apphome` and `defaults` together, as built binaries: an installed app's
/// domain lives in its home and follows it across an update.
@Suite("installed apps")
struct InstalledAppTests {
    static let bundleID = "com.example.ScaryBugs"

    /// The repository's examples directory (this file is Tests/EndToEndTests/…).
    static var examples: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("examples")
    }

    func apphome(_ root: TempRoot, _ arguments: [String]) throws -> CommandResult {
        let binary = try DefaultsBinary.url().deletingLastPathComponent().appendingPathComponent("apphome")
        return try Subprocess.run(binary, ["--root", root.root.path] + arguments,
                                  environment: root.environment(), ioDirectory: root.io)
    }

    @Test func anInstalledAppsDomainLivesInItsHomeAndSurvivesAnUpdate() throws {
        let root = try TempRoot()
        let v1 = Self.examples.appendingPathComponent("ScaryBugs-v1/ScaryBugs.app").path
        let v2 = Self.examples.appendingPathComponent("ScaryBugs-v2/ScaryBugs.app").path
        let install = try apphome(root, ["install", v1])
        try #require(install.status == 0, "\(install)")

        try root.succeed(["write", Self.bundleID, "maxBugs", "-int", "12"])
        let data = try apphome(root, ["container", Self.bundleID, "data"]).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let inHome = URL(fileURLWithPath: data).appendingPathComponent("Library/Preferences/\(Self.bundleID).plist")
        #expect(FileManager.default.fileExists(atPath: inHome.path))
        #expect(!FileManager.default.fileExists(atPath: root.domainFile(Self.bundleID).path))
        try root.expectOutput(["domains"], "\(Self.bundleID)\n")

        let update = try apphome(root, ["update", v2])
        try #require(update.status == 0, "\(update)")
        let newData = try apphome(root, ["container", Self.bundleID, "data"]).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(newData != data)
        try root.expectOutput(["read", Self.bundleID, "maxBugs"], "12\n")

        let uninstall = try apphome(root, ["uninstall", Self.bundleID])
        #expect(uninstall.status == 0, "\(uninstall)")
        let gone = try root.run(["read", Self.bundleID])
        #expect(gone.status == 1)
        #expect(gone.stderr == "defaults: Domain \(Self.bundleID) does not exist\n")
    }
}
