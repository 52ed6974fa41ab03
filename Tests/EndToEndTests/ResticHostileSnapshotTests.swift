import Foundation
import Testing

/// A restic snapshot is as hostile as any file: one made with restic alone
/// from an AppHome backup, then changed, is restored by `apphome restore
/// --from restic:` without reading through a link and without leaving its
/// staging directory (`<root>/Backups/.restic/restore-<uuid>/`) behind.
@Suite("hostile restic snapshots")
struct ResticHostileSnapshotTests {
    typealias R = ResticBackupTests

    /// ScaryBugs installed with a document, backed up to a new repository,
    /// and that snapshot restored by restic alone into `tree` (the AppHome
    /// layout: home/, AppHome/manifest.plist) for the test to change.
    static func backedUp(_ t: TempRoot) throws -> (repository: String, tree: String) {
        let home = try R.installWithData(t, blob: 4096)
        #expect(FileManager.default.fileExists(atPath: home + "/Documents/bug1.txt"))
        let repository = t.work.path + "/repo"
        try R.storePassword(t, repository)
        let first = try R.apphome(t, ["backup", R.bundleID, "--to", "restic:" + repository, "--init"])
        try #require(first.status == 0, "\(first)")
        let tree = t.work.path + "/tree"
        let restored = try R.restic(t, ["-r", repository, "restore", "latest", "--target", tree])
        try #require(restored.status == 0, "\(restored)")
        try #require(FileManager.default.fileExists(atPath: tree + "/AppHome/manifest.plist"))
        return (repository, tree)
    }

    /// `tree` as the newest AppHome snapshot of ScaryBugs in `repository`, made by restic alone.
    static func snapshot(_ t: TempRoot, _ repository: String, _ tree: String) throws {
        var env = t.environment()
        env["RESTIC_PASSWORD"] = R.password
        let made = try Subprocess.run(URL(fileURLWithPath: "/bin/sh"),
                                      ["-c", "cd \"$1\" && exec \"$4\" -r \"$2\" backup --tag apphome --tag \"$3\" .", "sh", tree, repository, R.bundleID,
                                       try RealClients.tool("restic").path],
                                      environment: env, ioDirectory: t.io, timeout: 120)
        try #require(made.status == 0, "\(made)")
    }

    /// The staging directories left under `<root>/Backups/.restic/`.
    static func staging(_ t: TempRoot) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: t.root.path + "/Backups/.restic")) ?? []).filter { $0.hasPrefix("restore-") }
    }

    @Test func aNameThatIsNotUTF8AndNotInTheManifestLeavesNoStagingBehind() throws {
        let t = try TempRoot()
        let (repository, tree) = try Self.backedUp(t)
        // "bad\xff name" in Documents: restic keeps the bytes.
        let name: [UInt8] = Array((tree + "/home/Documents/bad").utf8) + [0xFF] + Array(" name".utf8) + [0]
        let fd = name.withUnsafeBufferPointer { open(UnsafeRawPointer($0.baseAddress!).assumingMemoryBound(to: CChar.self), O_WRONLY | O_CREAT | O_EXCL, 0o600) }
        try #require(fd >= 0)
        close(fd)
        try Self.snapshot(t, repository, tree)
        let restored = try R.apphome(t, ["restore", R.bundleID, "--from", "restic:" + repository])
        #expect(restored.status == 0, "\(restored)")
        #expect(Self.staging(t).isEmpty, "left behind: \(Self.staging(t))")
    }

    /// `Documents` a link to a directory outside the snapshot holding the
    /// same files, or `AppHome/manifest.plist` a link to a manifest outside:
    /// restic restores the link as a link (its target still there); the
    /// restore refuses it and nothing changes.
    @Test(arguments: [
        ("home/Documents", "the stored copy of Documents/bug1.txt is reached through a symbolic link"),
        ("AppHome/manifest.plist", "its manifest is reached through a symbolic link"),
    ])
    func aLinkInTheSnapshotIsNotFollowedAndNothingChanges(_ linked: String, _ message: String) throws {
        let t = try TempRoot()
        let (repository, tree) = try Self.backedUp(t)
        let home = try R.home(t)
        let outside = t.work.path + "/outside"
        try FileManager.default.moveItem(atPath: tree + "/" + linked, toPath: outside)
        try FileManager.default.createSymbolicLink(atPath: tree + "/" + linked, withDestinationPath: outside)
        try Self.snapshot(t, repository, tree)
        let restored = try R.apphome(t, ["restore", R.bundleID, "--from", "restic:" + repository])
        #expect(restored.status != 0, "\(restored)")
        #expect(restored.stderr.contains(message), "\(restored)")
        #expect(try R.home(t) == home, "the installed home is still the app's")
        #expect(Self.staging(t).isEmpty, "left behind: \(Self.staging(t))")
    }
}
