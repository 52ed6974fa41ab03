import Foundation
import Testing

/// `apphome backup`, `uninstall`, `restore` and `defaults` as built
/// binaries: Documents and preferences come back; a tampered backup is
/// refused and leaves every file as it was.
@Suite("backup and restore")
struct BackupRestoreTests {
    static let bundleID = "com.example.ScaryBugs"

    func apphome(_ root: TempRoot, _ arguments: [String]) throws -> CommandResult {
        try CrashAndDoctorTests.apphome(root, arguments)
    }

    func dataContainer(_ root: TempRoot) throws -> String {
        try apphome(root, ["container", Self.bundleID, "data"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func documentsAndPreferencesSurviveBackupUninstallRestore() throws {
        let root = try TempRoot()
        let v1 = InstalledAppTests.examples.appendingPathComponent("ScaryBugs-v1/ScaryBugs.app").path
        try #require(try apphome(root, ["install", v1]).status == 0)
        try root.succeed(["write", Self.bundleID, "lastBug", "-string", "Centipede"])
        let home = try dataContainer(root)
        try root.write("a scary bug\n", to: URL(fileURLWithPath: home + "/Documents/bug1.txt"))
        try root.write("thumb", to: URL(fileURLWithPath: home + "/Library/Caches/thumb"))

        let backup = try apphome(root, ["backup", Self.bundleID])
        #expect(backup.status == 0 && backup.stderr.isEmpty, "\(backup)")
        #expect(backup.stdout.hasPrefix("backed up \(Self.bundleID) 1.0 (1) to \(root.root.path)/Backups/\(Self.bundleID)/"))
        let again = try apphome(root, ["backup", Self.bundleID])
        #expect(again.stdout.hasSuffix(" 0 read, 0 bytes stored in 0 new objects\n"), "\(again)")

        try #require(try apphome(root, ["uninstall", Self.bundleID]).status == 0)
        #expect(try root.run(["read", Self.bundleID, "lastBug"]).status == 1)

        let restore = try apphome(root, ["restore", Self.bundleID, "--app", v1])
        #expect(restore.status == 0 && restore.stderr.isEmpty, "\(restore)")
        let restored = try dataContainer(root)
        #expect(restored != home)
        try root.expectOutput(["read", Self.bundleID, "lastBug"], "Centipede\n")
        #expect(try String(contentsOfFile: restored + "/Documents/bug1.txt", encoding: .utf8) == "a scary bug\n")
        #expect(try FileManager.default.contentsOfDirectory(atPath: restored + "/Library/Caches").isEmpty)
        #expect(try apphome(root, ["uninstall", Self.bundleID]).status == 0)
    }

    @Test func aTamperedBackupIsRefusedAndNoFileChanges() throws {
        let root = try TempRoot()
        let v1 = InstalledAppTests.examples.appendingPathComponent("ScaryBugs-v1/ScaryBugs.app").path
        try #require(try apphome(root, ["install", v1]).status == 0)
        try root.succeed(["write", Self.bundleID, "lastBug", "-string", "Centipede"])
        try #require(try apphome(root, ["backup", Self.bundleID]).status == 0)
        let dir = root.root.path + "/Backups/" + Self.bundleID
        let manifest = dir + "/" + (try FileManager.default.contentsOfDirectory(atPath: dir)[0])
        // Flip one byte in the middle of the manifest.
        var bytes = try Data(contentsOf: URL(fileURLWithPath: manifest))
        bytes[bytes.count / 2] ^= 0x01
        try bytes.write(to: URL(fileURLWithPath: manifest))
        let before = root.snapshot()
        let result = try apphome(root, ["restore", manifest])
        #expect(result.status == 1)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr == "apphome: backup \(manifest) is damaged: the manifest does not match its checksum; nothing was changed\n")
        #expect(root.snapshot() == before)
        try root.expectOutput(["read", Self.bundleID, "lastBug"], "Centipede\n")
        #expect(try apphome(root, ["uninstall", Self.bundleID]).status == 0)
    }

    /// `kill -9` at several moments of a backup: every manifest left is
    /// valid and complete (`backups --verify`), the first backup restores,
    /// and the next backup cleans up and works.
    @Test func aBackupKilledAtAnyMomentLeavesEveryBackupValid() throws {
        let root = try TempRoot()
        let v1 = InstalledAppTests.examples.appendingPathComponent("ScaryBugs-v1/ScaryBugs.app").path
        try #require(try apphome(root, ["install", v1]).status == 0)
        let home = try dataContainer(root)
        let chunk = Data((0..<32_768).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        for i in 0..<300 { try chunk.write(to: URL(fileURLWithPath: home + "/Documents/f\(i)")) }
        let first = try apphome(root, ["backup", Self.bundleID])
        try #require(first.status == 0, "\(first)")
        let firstManifest = String(first.stdout.split(separator: "\n")[0].split(separator: " ").last!)
        let binary = try DefaultsBinary.url().deletingLastPathComponent().appendingPathComponent("apphome")
        for delay: UInt32 in [0, 2_000, 10_000, 40_000, 120_000] {
            let home = try dataContainer(root)
            for i in 0..<300 {
                let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: home + "/Documents/f\(i)"))
                try handle.seekToEnd()
                try handle.write(contentsOf: Data("\(delay)".utf8))
                try handle.close()
            }
            let running = try Subprocess.start(binary, ["--root", root.root.path, "backup", Self.bundleID],
                                               environment: root.environment(), ioDirectory: root.io)
            usleep(delay)
            running.kill()
            _ = try running.finish()
            let verified = try apphome(root, ["backups", "--verify"])
            #expect(verified.status == 0 && verified.stderr.isEmpty, "killed after \(delay) µs: \(verified)")
        }
        let restore = try apphome(root, ["restore", firstManifest])
        #expect(restore.status == 0, "\(restore)")
        let restored = try dataContainer(root)
        #expect(try Data(contentsOf: URL(fileURLWithPath: restored + "/Documents/f299")) == chunk)
        let after = try apphome(root, ["backup", Self.bundleID])
        #expect(after.status == 0, "\(after)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: root.root.path + "/Backups/objects/.incoming").isEmpty)
        #expect(try apphome(root, ["uninstall", Self.bundleID]).status == 0)
    }

    /// `kill -9` at several moments of a restore: the registry names either
    /// the old home with all of its data or the new one with all of the
    /// backup's, never a half-built home.
    @Test func aRestoreKilledAtAnyMomentLeavesTheOldOrTheNewHomeWhole() throws {
        let root = try TempRoot()
        let v1 = InstalledAppTests.examples.appendingPathComponent("ScaryBugs-v1/ScaryBugs.app").path
        try #require(try apphome(root, ["install", v1]).status == 0)
        let home = try dataContainer(root)
        for i in 0..<300 { try Data("backed up \(i)".utf8).write(to: URL(fileURLWithPath: home + "/Documents/f\(i)")) }
        try #require(try apphome(root, ["backup", Self.bundleID]).status == 0)
        let binary = try DefaultsBinary.url().deletingLastPathComponent().appendingPathComponent("apphome")
        for delay: UInt32 in [0, 2_000, 10_000, 40_000, 120_000] {
            let current = try dataContainer(root)
            for i in 0..<300 { try Data("changed \(i)".utf8).write(to: URL(fileURLWithPath: current + "/Documents/f\(i)")) }
            let running = try Subprocess.start(binary, ["--root", root.root.path, "restore", Self.bundleID],
                                               environment: root.environment(), ioDirectory: root.io)
            usleep(delay)
            running.kill()
            _ = try running.finish()
            let now = try dataContainer(root)
            let contents = Set((0..<300).map { i in
                (try? String(contentsOfFile: now + "/Documents/f\(i)", encoding: .utf8))?.split(separator: " ").first.map(String.init) ?? "missing"
            })
            #expect(contents == ["changed"] || contents == ["backed"], "killed after \(delay) µs: \(contents)")
        }
        #expect(try apphome(root, ["uninstall", Self.bundleID]).status == 0)
        // Homes a killed restore left (orphans, for `doctor`) hold read-only bundles.
        let applications = root.root.path + "/Applications"
        for sub in (try? FileManager.default.subpathsOfDirectory(atPath: applications)) ?? [] {
            chmod(applications + "/" + sub, 0o700)
        }
    }
}
