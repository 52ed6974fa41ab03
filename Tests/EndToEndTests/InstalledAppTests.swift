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

/// `defaults -app <Name>` and app-group suites, through the built binaries.
@Suite("defaults and installed apps")
struct DefaultsAppTests {
    static let bundleID = InstalledAppTests.bundleID

    func apphome(_ root: TempRoot, _ arguments: [String]) throws -> CommandResult {
        try CrashAndDoctorTests.apphome(root, arguments)
    }

    @Test(arguments: [
        ("ScaryBugs", true),      // the bundle directory's name without .app
        ("ScaryBugs.app", true),  // the bundle directory's name
        ("Scary Bugs", true),     // CFBundleDisplayName
        ("scarybugs", false),     // case-sensitive, as on the device
        ("Scary", false),
    ])
    func appNamesResolveThroughTheRegistry(_ name: String, _ found: Bool) throws {
        let root = try TempRoot()
        try #require(try apphome(root, ["install", CrashAndDoctorTests.v1]).status == 0)
        let write = try root.run(["write", "-app", name, "maxBugs", "-int", "5"])
        if found {
            #expect(write.status == 0 && write.stderr.isEmpty, "\(write)")
            try root.expectOutput(["read", Self.bundleID, "maxBugs"], "5\n")
            try root.expectOutput(["read", "-app", name, "maxBugs"], "5\n")
            let docs = try apphome(root, ["container", Self.bundleID, "library"]).stdout.trimmingCharacters(in: .newlines)
            #expect(FileManager.default.fileExists(atPath: docs + "/Preferences/\(Self.bundleID).plist"))
        } else {
            #expect(write.status == 1)
            #expect(write.stderr == "defaults: Couldn't find an application named \"\(name)\"; defaults unchanged\n")
            #expect(root.snapshot().keys.allSatisfy { !$0.hasSuffix("\(Self.bundleID).plist") })
        }
    }

    @Test func appStandsWhereTheDomainDoesAfterAVerbsOwnFlag() throws {
        let root = try TempRoot()
        try #require(try apphome(root, ["install", CrashAndDoctorTests.v1]).status == 0)
        // ScaryBugs' settings bundle declares sortOrder; --force writes a value outside it.
        let forced = try root.run(["write", "--force", "-app", "ScaryBugs", "sortOrder", "-string", "colour"])
        #expect(forced.status == 0, "\(forced)")
        try root.expectOutput(["read", Self.bundleID, "sortOrder"], "colour\n")
        try root.expectOutput(["read", "--effective", "-app", "Scary Bugs", "showRatings"], "1\n(layer: registration)\n")
        let imported = root.workFile("import.plist")
        try root.writePlist("{'maxBugs': 9}", to: imported)
        try root.succeed(["import", "--force", "-app", "ScaryBugs", imported.path])
        try root.expectOutput(["read", Self.bundleID, "maxBugs"], "9\n")
    }

    @Test func aGroupSuiteLivesInTheGroupContainerAndGoesWithTheLastMember() throws {
        let root = try TempRoot()
        let bundle = root.work.appendingPathComponent("Grouped.app")
        try root.writePlist("{'CFBundleIdentifier': 'com.example.Grouped', 'CFBundleVersion': '1', "
                            + "'com.apple.security.application-groups': ['group.com.example.bugs']}",
                            to: bundle.appendingPathComponent("Info.plist"), format: "xml")
        try CrashAndDoctorTests.signWithNewKey(root, bundle.path)
        try #require(try apphome(root, ["install", bundle.path]).status == 0)
        try root.succeed(["write", "group.com.example.bugs", "shared", "-bool", "YES"])
        let groups = try apphome(root, ["container", "com.example.Grouped", "groups"]).stdout
        let parts = groups.dropLast().split(separator: "\t").map(String.init)
        try #require(parts.count == 2 && parts[0] == "group.com.example.bugs", "\(groups)")
        try root.expectPlist(URL(fileURLWithPath: parts[1] + "/Library/Preferences/group.com.example.bugs.plist"), equals: "{'shared': True}")
        #expect(!FileManager.default.fileExists(atPath: root.domainFile("group.com.example.bugs").path))
        try root.expectOutput(["read", "group.com.example.bugs", "shared"], "1\n")
        try #require(try apphome(root, ["uninstall", "com.example.Grouped"]).status == 0)
        #expect(!FileManager.default.fileExists(atPath: parts[1]))
        #expect(try root.run(["read", "group.com.example.bugs"]).stderr == "defaults: Domain group.com.example.bugs does not exist\n")
    }
}
