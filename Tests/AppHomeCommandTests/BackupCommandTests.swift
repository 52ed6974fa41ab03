import AppHomeSystem
import CommandSupport
import Foundation
import Testing
@testable import AppHomeCommand
import Containers
import Backups
import Keychain

@Suite struct BackupCommandTests {
    /// Installs ScaryBugs 1.0 with a document; returns its home.
    func installed(_ w: World) throws -> String {
        #expect(w.apphome("install", w.v1).status == 0)
        let home = String(w.apphome("container", "com.example.ScaryBugs", "data").out.dropLast())
        try Data("a scary bug\n".utf8).write(to: URL(fileURLWithPath: home + "/Documents/bug1.txt"))
        try Data("thumb".utf8).write(to: URL(fileURLWithPath: home + "/Library/Caches/thumb"))
        return home
    }

    func manifests(_ dir: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: dir + "/com.example.ScaryBugs")) ?? []).sorted()
    }

    @Test func backupUninstallRestoreBringsDocumentsBack() throws {
        let w = World()
        _ = try installed(w)
        let first = w.apphome("backup", "com.example.ScaryBugs")
        #expect(first.status == 0, "\(first.err)")
        let name = try #require(manifests(w.root + "/Backups").first)
        let manifest = w.root + "/Backups/com.example.ScaryBugs/" + name
        #expect(first.out == "backed up com.example.ScaryBugs 1.0 (1) to \(manifest)\n1 file, 12 bytes: 1 read, 12 bytes stored in 1 new object\n")
        let second = w.apphome("backup", "com.example.ScaryBugs")
        #expect(second.out.hasSuffix("\n1 file, 12 bytes: 0 read, 0 bytes stored in 0 new objects\n"))
        let verified = w.apphome("backups", "--verify")
        #expect(verified.status == 0 && verified.err.isEmpty)
        #expect(verified.out.hasSuffix("\nverified 2 backups: every stored file matches its checksum\n"))

        let list = w.apphome("backups")
        #expect(list.status == 0)
        let lines = list.out.split(separator: "\n")
        #expect(lines.count == 3)
        #expect(lines[0].hasPrefix("BUNDLE ID              VERSION  TAKEN                 FILES  BYTES  BACKUP"))
        #expect(lines[1].hasPrefix("com.example.ScaryBugs  1.0 (1)  ") && lines[1].hasSuffix("  1      12     \(manifest)"))

        #expect(w.apphome("uninstall", "com.example.ScaryBugs").status == 0)
        let refused = w.apphome("restore", "com.example.ScaryBugs")
        #expect(refused.status == 1)
        #expect(refused.err == "apphome: com.example.ScaryBugs is not installed: install it with 'apphome install <Name.app>' first, or pass --app <Name.app> to restore; nothing was changed\n")
        let restored = w.apphome("restore", manifest, "--app", w.v2)
        #expect(restored.status == 0, "\(restored.err)")
        let home = String(w.apphome("container", "com.example.ScaryBugs", "data").out.dropLast())
        let out = restored.out.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(out[0] == "restored com.example.ScaryBugs 2.0 (2) at \(home)")
        #expect(out[1].hasPrefix("from \(manifest): backup of 1.0 (1) taken 20") && out[1].hasSuffix("Z on this device"))
        #expect(out[2] == "1 file, 12 bytes; Library/Caches and tmp start empty")
        #expect(w.read(home + "/Documents/bug1.txt") == "a scary bug\n")
        #expect(((try? FileManager.default.contentsOfDirectory(atPath: home + "/Library/Caches")) ?? ["?"]).isEmpty)
    }

    /// `backups --verify` names each database it ran `PRAGMA integrity_check` on, and the result.
    @Test func verifyNamesEachDatabaseItCheckedAndItsResult() throws {
        let w = World()
        let home = try installed(w)
        for name in ["notes.sqlite", "cache.db"] {
            let sqlite = Process()
            sqlite.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
            sqlite.arguments = [home + "/Documents/" + name, "create table t(x); insert into t values ('\(name)');"]
            try sqlite.run()
            sqlite.waitUntilExit()
            try #require(sqlite.terminationStatus == 0)
        }
        #expect(w.apphome("backup", "com.example.ScaryBugs").status == 0)
        let manifest = w.root + "/Backups/com.example.ScaryBugs/" + manifests(w.root + "/Backups")[0]
        let verified = w.apphome("backups", "--verify")
        #expect(verified.status == 0 && verified.err.isEmpty, "\(verified.err)")
        let lines = verified.out.split(separator: "\n").map(String.init)
        #expect(lines.suffix(3) == [
            "database Documents/cache.db in \(manifest): integrity_check ok",
            "database Documents/notes.sqlite in \(manifest): integrity_check ok",
            "verified 1 backup: every stored file matches its checksum",
        ], "\(verified.out)")
    }

    @Test func backupAllToADirectoryAndRestoreTheNewestFromIt() throws {
        let w = World()
        let home = try installed(w)
        let dir = w.base + "/usb"
        let r = w.apphome("backup", "--all", "--to", dir)
        #expect(r.status == 0, "\(r.err)")
        #expect(manifests(dir).count == 1)
        try Data("changed".utf8).write(to: URL(fileURLWithPath: home + "/Documents/bug1.txt"))
        #expect(w.apphome("restore", "com.example.ScaryBugs", "--from=" + dir).status == 0)
        let newHome = String(w.apphome("container", "com.example.ScaryBugs", "data").out.dropLast())
        #expect(w.read(newHome + "/Documents/bug1.txt") == "a scary bug\n")
        #expect(w.apphome("restore", "com.example.ScaryBugs").err
                == "apphome: no backup of com.example.ScaryBugs in \(w.root)/Backups; nothing was changed\n")
    }

    @Test func aTamperedBackupIsRefusedWithItsReason() throws {
        let w = World()
        let home = try installed(w)
        #expect(w.apphome("backup", "com.example.ScaryBugs").status == 0)
        let objects = w.root + "/Backups/objects"
        let sub = try #require(try FileManager.default.contentsOfDirectory(atPath: objects).first { $0.count == 2 })
        let object = objects + "/" + sub + "/" + (try FileManager.default.contentsOfDirectory(atPath: objects + "/" + sub)[0])
        try Data("a scary bag\n".utf8).write(to: URL(fileURLWithPath: object))
        let manifest = w.root + "/Backups/com.example.ScaryBugs/" + manifests(w.root + "/Backups")[0]
        let verified = w.apphome("backups", "--verify")
        #expect(verified.status == 1)
        #expect(verified.out == "BUNDLE ID  VERSION  TAKEN  FILES  BYTES  BACKUP\n")
        #expect(verified.err == "apphome: backup \(manifest) is damaged: Documents/bug1.txt does not match its checksum\n")
        let r = w.apphome("restore", manifest)
        #expect(r.status == 1)
        #expect(r.out.isEmpty)
        #expect(r.err == "apphome: backup \(manifest) is damaged: Documents/bug1.txt does not match its checksum; nothing was changed\n")
        #expect(w.apphome("container", "com.example.ScaryBugs", "data").out == home + "\n")
        #expect(w.read(home + "/Library/Caches/thumb") == "thumb")
    }

    @Test func aDamagedManifestMakesBackupsFail() throws {
        let w = World()
        _ = try installed(w)
        #expect(w.apphome("backup", "com.example.ScaryBugs").status == 0)
        let manifest = w.root + "/Backups/com.example.ScaryBugs/" + manifests(w.root + "/Backups")[0]
        try Data("junk".utf8).write(to: URL(fileURLWithPath: manifest))
        let r = w.apphome("backups", "com.example.ScaryBugs")
        #expect(r.status == 1)
        #expect(r.out == "BUNDLE ID  VERSION  TAKEN  FILES  BYTES  BACKUP\n")
        #expect(r.err == "apphome: backup \(manifest) is damaged: the manifest is not a property list dictionary\n")
    }

    @Test(arguments: [
        (["backup"], 255, "apphome: missing bundle identifier or --all\n"),
        (["backup", "--all", "com.example.ScaryBugs"], 255, "apphome: unexpected argument 'com.example.ScaryBugs' with --all\n"),
        (["backup", "com.example.ScaryBugs", "--to"], 255, "apphome: option --to needs a value\n"),
        (["backup", "com.example.ScaryBugs", "--to", "/a", "--to", "/b"], 255, "apphome: option --to given twice\n"),
        (["backup", "com.example.ScaryBugs", "--into", "/a"], 255, "apphome: unknown option '--into'\n"),
        (["backup", "com.example.ScaryBugs"], 1, "apphome: com.example.ScaryBugs is not installed\n"),
        (["restore"], 255, "apphome: missing backup (a manifest path or a bundle identifier)\n"),
        (["restore", "a.b", "c.d"], 255, "apphome: unexpected argument 'c.d'\n"),
        (["restore", "/nowhere/a.b/x.plist"], 1, "apphome: no backup at /nowhere/a.b/x.plist; nothing was changed\n"),
        (["restore", "a.b", "--app", "/nowhere/X.app"], 1,
         "apphome: cannot use bundle /nowhere/X.app: it is not a directory; nothing was changed\n"),
        (["backups", "a.b", "c.d"], 255, "apphome: unexpected argument 'c.d'\n"),
        (["prune-backups"], 255, "apphome: prune-backups needs --keep N: how many of each app's newest backups to keep\n"),
        (["prune-backups", "--keep", "0"], 255, "apphome: option --keep needs a whole number of at least 1, not '0'\n"),
        (["prune-backups", "--keep", "x"], 255, "apphome: option --keep needs a whole number of at least 1, not 'x'\n"),
        (["prune-backups", "--keep", "1", "--from", "/nowhere"], 1, "apphome: no backup directory at /nowhere\n"),
    ] as [([String], Int32, String)])
    func errorsHaveFixedMessagesAndStatuses(_ args: [String], _ status: Int32, _ firstLine: String) {
        let w = World()
        let r = w.apphome(args)
        #expect(r.status == status)
        #expect(r.out.isEmpty)
        #expect(r.err.hasPrefix(firstLine))
        #expect(r.err.contains("Run 'apphome help \(args[0])' for its usage.\n") == (status == 255), "\(r.err)")
        #expect(!r.err.contains("usage: apphome"))
        #expect(!FileManager.default.fileExists(atPath: w.root + "/Backups/objects"))
    }

    @Test func helpListsTheBackupVerbs() {
        let out = World().apphome("help").out
        #expect(out.contains("\n  backup <bundle-id>|--all [--to DIR|restic:REPO [--init]] [--password | --password-stdin]\n"))
        #expect(out.contains("\n  restore <backup> [--from DIR|restic:REPO [--snapshot ID]] [--app <Name.app>]\n"
                             + "          [--password | --password-stdin] [--accept-unsettled] [--allow-downgrade]\n"))
        #expect(out.contains("\n  backups [<bundle-id>] [--from DIR|restic:REPO] [--verify [--read-data-subset N/T]]\n"))
        #expect(out.contains("\n  prune-backups --keep N [<bundle-id>] [--from DIR|restic:REPO] [--dry-run]\n"))
    }

    @Test func pruneBackupsKeepsTheNewestAndSaysWhatItRemoved() throws {
        let w = World()
        let home = try installed(w)
        #expect(w.apphome("backup", "com.example.ScaryBugs").status == 0)
        try Data("a scarier bug\n".utf8).write(to: URL(fileURLWithPath: home + "/Documents/bug1.txt"))
        #expect(w.apphome("backup", "com.example.ScaryBugs").status == 0)
        // Oldest first, in the store's order (a second backup in the same second is <stamp>-2).
        let paths = try BackupStore(directory: w.root + "/Backups").manifests(of: BundleIdentifier("com.example.ScaryBugs"))
        try #require(paths.count == 2)
        let oldest = paths[0]
        let dry = w.apphome("prune-backups", "--keep", "1", "--dry-run")
        #expect(dry.status == 0 && dry.err.isEmpty)
        #expect(dry.out == "would remove \(oldest)\nwould remove 1 backup and 1 stored file that no remaining backup needs (12 bytes)\n")
        #expect(manifests(w.root + "/Backups").count == 2)
        let r = w.apphome("prune-backups", "--keep", "1")
        #expect(r.status == 0 && r.err.isEmpty)
        #expect(r.out == "removed \(oldest)\nremoved 1 backup and 1 stored file that no remaining backup needs (12 bytes)\n")
        #expect(try BackupStore(directory: w.root + "/Backups").manifests(of: BundleIdentifier("com.example.ScaryBugs")) == [paths[1]])
        #expect(w.apphome("backups", "--verify").status == 0)
    }
}

/// Answers password prompts from a list, recording the prompts.
final class Answers: SecretPrompter {
    var answers: [String]
    var asked: [String] = []
    init(_ answers: [String]) { self.answers = answers }
    func readSecret(prompt: String) -> SecureBytes? {
        asked.append(prompt)
        return answers.isEmpty ? nil : SecureBytes(utf8: answers.removeFirst())
    }
}

extension BackupCommandTests {
    @Test func theBackupPasswordIsAskedTwiceForABackupAndOnceForARestore() throws {
        let w = World()
        _ = try installed(w)
        let id = "com.example.ScaryBugs"
        let noTerminal = w.apphome(["backup", id, "--password"])
        #expect(noTerminal.status == 255 && noTerminal.err.hasPrefix("apphome: --password asks on the terminal, and there is none; use --password-stdin\n"))
        let both = w.apphome(["backup", id, "--password", "--password-stdin"], prompter: Answers([]))
        #expect(both.status == 255 && both.err.hasPrefix("apphome: give either --password or --password-stdin, not both\n"))
        let typo = Answers(["correct horse", "correct hose"])
        let differ = w.apphome(["backup", id, "--password"], prompter: typo)
        #expect(differ.status == 1 && differ.err == "apphome: the two backup passwords differ; nothing was done\n")
        #expect(typo.asked == ["Backup password: ", "Backup password again: "])
        #expect(manifests(w.root + "/Backups").isEmpty)

        let nothing = w.apphome(["backup", id, "--password"], prompter: Answers(["correct horse", "correct horse"]))
        #expect(nothing.status == 0 && nothing.out.hasSuffix("note: \(id) has no keychain items; the backup password protects nothing in this backup\n"))

        // An item for the password to protect.
        let manager = ContainerManager(root: w.root)
        let context = try KeychainContext(installed: try manager.entry(for: BundleIdentifier(id)))
        var item = ItemAttributes(itemClass: .genericPassword)
        item.service = "sync.example.com"
        item.account = "ray"
        try Keychain(root: w.root, policy: AppHomeEnvironment(configuration: Configuration(variable: { ["PATH": "/usr/bin:/bin"][$0] })).keychainKeyPolicy, now: ContainerManager.systemClock)
            .add(item, data: SecureBytes(utf8: "s3cret"), context: context)
        let made = w.apphome(["backup", id, "--password"], prompter: Answers(["correct horse", "correct horse"]))
        #expect(made.status == 0 && !made.out.contains("note:"), "\(made)")
        let wrong = Answers(["correct horsf"])
        let refused = w.apphome(["restore", id, "--password"], prompter: wrong)
        #expect(wrong.asked == ["Backup password: "])
        #expect(refused.status == 1 && refused.err == "apphome: keychain refused to restore \(id): the backup password is wrong; nothing was changed\n", "\(refused)")
        let right = w.apphome(["restore", id, "--password"], prompter: Answers(["correct horse"]))
        #expect(right.status == 0, "\(right)")
        var query = ItemQuery(itemClass: .genericPassword)
        query.service = "sync.example.com"
        query.returnData = true
        let restored = try Keychain(root: w.root, policy: AppHomeEnvironment(configuration: Configuration(variable: { ["PATH": "/usr/bin:/bin"][$0] })).keychainKeyPolicy,
                                    now: ContainerManager.systemClock)
            .copyMatching(query, context: try KeychainContext(installed: try manager.entry(for: BundleIdentifier(id))))
        #expect(restored.first?.data?.constantTimeEquals(SecureBytes(utf8: "s3cret")) == true)
    }
}
