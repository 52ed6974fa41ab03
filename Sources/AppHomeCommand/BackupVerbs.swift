import AppHomeSystem
import CommandSupport
import Backups
import Containers
import Preferences
import Keychain

extension AppHomeCommand {
    /// Splits `args` into operands and the values of `options` (each taking
    /// one value, as `--to DIR` or `--to=DIR`) and `flags`.
    func scan(_ args: [String], options: [String], flags: [String] = []) throws(CommandFailure)
        -> (operands: [String], values: [String: String], flags: Set<String>) {
        var operands: [String] = []
        var values: [String: String] = [:]
        var set: Set<String> = []
        var rest = args[...]
        while let arg = rest.popFirst() {
            if flags.contains(arg) {
                set.insert(arg)
            } else if let name = options.first(where: { arg == $0 || arg.hasPrefix($0 + "=") }) {
                let value = arg == name ? rest.popFirst() : String(arg.dropFirst(name.count + 1))
                guard let value, !value.isEmpty else { throw .usage("option \(name) needs a value") }
                guard values[name] == nil else { throw .usage("option \(name) given twice") }
                values[name] = value
            } else if arg.hasPrefix("-") && arg != "-" {
                throw .usage("unknown option '\(arg)'")
            } else {
                operands.append(arg)
            }
        }
        return (operands, values, set)
    }

    /// The backup password: from standard input with `--password-stdin`
    /// (the first line, without its line ending), or asked for on the
    /// terminal with `--password` (twice when `confirm`, for a backup).
    /// Always in secure memory; never from argv or the environment.
    func backupSecrets(_ flags: Set<String>, confirm: Bool) throws(CommandFailure) -> BackupSecrets {
        if flags.contains("--password-stdin") && flags.contains("--password") {
            throw .usage("give either --password or --password-stdin, not both")
        }
        if flags.contains("--password") {
            guard let prompter, let first = prompter.readSecret(prompt: "Backup password: ") else {
                throw .usage("--password asks on the terminal, and there is none; use --password-stdin")
            }
            guard first.count > 0 else { throw .failure("the backup password is empty; nothing was done") }
            if confirm {
                guard let again = prompter.readSecret(prompt: "Backup password again: "), again.constantTimeEquals(first) else {
                    throw .failure("the two backup passwords differ; nothing was done")
                }
            }
            return BackupSecrets(password: first)
        }
        guard flags.contains("--password-stdin") else { return .none }
        var bytes = console.readStandardInput()
        defer { SecureBytes.wipe(&bytes) }
        let n = bytes.firstIndex(of: 0x0A) ?? bytes.count
        let end = n > 0 && bytes[n - 1] == 0x0D ? n - 1 : n
        guard end > 0 else { throw .usage("--password-stdin: standard input holds no password (one line is read)") }
        return BackupSecrets(password: bytes.withUnsafeBytes { SecureBytes(copying: UnsafeRawBufferPointer(rebasing: $0[0..<end])) })
    }

    /// `backup <bundle-id>|--all [--to DIR] [--password | --password-stdin]`:
    /// 1 when a database could not be copied (the backup lacks it).
    func backup(_ args: [String]) throws -> Int32 {
        let parsed = try scan(args, options: ["--to"], flags: ["--all", "--password-stdin", "--password", "--init"])
        let restic = parsed.values["--to"].flatMap(ResticRepository.parse)
        if parsed.flags.contains("--init") && restic == nil { throw CommandFailure.usage("--init is for a restic repository (--to restic:REPOSITORY)") }
        let reports: [ContainerManager.BackupReport]
        // The arguments are checked before a password is asked for.
        let id: BundleIdentifier?
        if parsed.flags.contains("--all") {
            if let extra = parsed.operands.first { throw CommandFailure.usage("unexpected argument '\(extra)' with --all") }
            id = nil
        } else {
            id = try bundleIdentifier(try operands(parsed.operands, ["bundle identifier or --all"])[0])
        }
        let secrets = try backupSecrets(parsed.flags, confirm: true)
        if let restic {
            guard let id else { throw CommandFailure.usage("back up one app at a time to a restic repository (a bundle identifier, not --all)") }
            return try resticBackup(id, repository: restic, initialize: parsed.flags.contains("--init"), secrets: secrets)
        }
        if let id {
            reports = [try manager.backup(id, to: parsed.values["--to"], secrets: secrets)]
        } else {
            reports = try manager.backupAll(to: parsed.values["--to"], secrets: secrets)
            if reports.isEmpty { console.out("no apps installed; nothing to back up\n") }
        }
        var incomplete = false
        for r in reports {
            let m = r.manifest
            console.out("backed up \(m.bundleIdentifier) \(m.displayVersion) to \(r.manifestPath)\n")
            console.out("\(Self.count(m.fileCount, "file")), \(m.totalBytes) bytes: \(r.filesRead) read, "
                        + "\(r.bytesStored) bytes stored in \(Self.count(r.objectsStored, "new object"))\n")
            if !r.excluded.isEmpty { console.out("excluded (marked \(ContainerManager.excludeFromBackupAttribute)): \(r.excluded.joined(separator: ", "))\n") }
            for path in r.skipped {
                console.err("apphome: warning: \(m.bundleIdentifier): \(path) is not a file, directory or link, or its name is not UTF-8; not backed up\n")
            }
            if !r.databases.isEmpty {
                console.out("\(Self.count(r.databases.count, "database")) copied with SQLite's backup API (without -wal, -shm, -journal): "
                            + r.databases.joined(separator: ", ") + "\n")
            }
            let leftOut = Set(r.leftOut)
            for path in r.unsettled {
                let what = leftOut.contains(path) ? "no earlier backup read it whole, so it is not in this backup"
                                                  : "the state the previous backup read whole is kept instead"
                console.err("apphome: warning: \(m.bundleIdentifier): \(path) kept changing while it was read, "
                            + "so it was never stored as read; \(what)\n")
            }
            for missing in r.notBackedUp {
                console.err("apphome: \(m.bundleIdentifier): \(missing.path) is not in the backup: \(missing.reason)\n")
                incomplete = true
            }
            if secrets.password != nil && m.participants["keychain"] == nil {
                console.out("note: \(m.bundleIdentifier) has no keychain items; the backup password protects nothing in this backup\n")
            }
        }
        return incomplete ? 1 : 0
    }

    /// The exit status of a restore that brought some files back not
    /// whole (unsettled when backed up), without `--accept-unsettled`.
    static let notWholeStatus: Int32 = 3

    /// `restore <backup> [--from DIR] [--app Name.app] [--password | --password-stdin] [--accept-unsettled] [--allow-downgrade]`:
    /// `<backup>` is a manifest path or a bundle id (its newest backup);
    /// 3 when files could not be brought back whole (unless `--accept-unsettled`).
    func restore(_ args: [String]) throws -> Int32 {
        let parsed = try scan(args, options: ["--from", "--app", "--snapshot"],
                              flags: ["--password-stdin", "--password", "--accept-unsettled", "--allow-downgrade"])
        if let from = parsed.values["--from"], let repository = ResticRepository.parse(from) {
            return try resticRestore(parsed, repository: repository)
        }
        if parsed.values["--snapshot"] != nil { throw CommandFailure.usage("--snapshot is for a restic repository (--from restic:REPOSITORY)") }
        let given = try operands(parsed.operands, ["backup (a manifest path or a bundle identifier)"])[0]
        let secrets = try backupSecrets(parsed.flags, confirm: false)
        let report: ContainerManager.RestoreReport
        do {
            let bundle = try parsed.values["--app"].map { try AppBundle(path: $0) }
            let path: String
            if given.contains("/") {
                path = given
            } else {
                path = try manager.latestBackup(of: try bundleIdentifier(given), in: parsed.values["--from"])
            }
            report = try manager.restore(from: path, bundle: bundle, secrets: secrets, allowDowngrade: parsed.flags.contains("--allow-downgrade"))
        } catch let error as ContainersError {
            throw CommandFailure.failure("\(error); nothing was changed")
        }
        let m = report.manifest
        let device = report.fromAnotherDevice ? "on another device (\(m.deviceIdentifier))" : "on this device"
        return printRestore(report, from: report.manifestPath, device: device,
                            passwordUnneeded: secrets.password != nil && m.participants["keychain"] == nil,
                            acceptUnsettled: parsed.flags.contains("--accept-unsettled"))
    }

    /// What a restore (local or from restic) prints, and its exit status:
    /// 0, 1 when a participant failed, 3 for files not brought back whole.
    func printRestore(_ report: ContainerManager.RestoreReport, from source: String, device: String,
                      passwordUnneeded: Bool, acceptUnsettled: Bool) -> Int32 {
        let m = report.manifest
        console.out("restored \(report.entry.bundleIdentifier) \(report.entry.displayVersion) at \(report.home.path)\n")
        console.out("from \(source): backup of \(m.displayVersion) taken \(Self.iso8601(m.creationTime)) \(device)\n")
        console.out("\(Self.count(report.filesRestored, "file")), \(report.bytesRestored) bytes; Library/Caches and tmp start empty\n")
        for note in report.notes { console.out("note: \(note)\n") }
        if passwordUnneeded {
            console.out("note: the backup holds no keychain items; the backup password was not needed\n")
        }
        if let leftover = report.leftoverHome {
            console.err("apphome: warning: could not remove the old home \(leftover): \(report.leftoverReason ?? "unknown error")\n")
        }
        for failure in report.participantFailures { console.err("apphome: \(failure)\n") }
        let notWhole = reportNotWhole(report, accepted: acceptUnsettled)
        return report.participantFailures.isEmpty ? notWhole : 1
    }

    /// Says on standard error which files the restore could not bring
    /// back whole; the exit status for them (0 when none, or `accepted`).
    func reportNotWhole(_ report: ContainerManager.RestoreReport, accepted: Bool) -> Int32 {
        guard !report.notWhole.isEmpty else { return 0 }
        let id = report.entry.bundleIdentifier
        for item in report.notWhole {
            switch item.restored {
            case .earlierState(let time):
                console.err("apphome: \(id): \(item.path) could not be brought back whole: it kept changing while it was backed up; "
                            + "restored as the backup of \(Self.iso8601(time)) read it\n")
            case .asLastRead:
                console.err("apphome: \(id): \(item.path) could not be brought back whole: it kept changing while it was backed up; "
                            + "restored as last read, which may mix two of its versions\n")
            case .notRestored:
                console.err("apphome: \(id): \(item.path) could not be brought back: it kept changing while it was backed up "
                            + "and no whole state of it was read; not restored\n")
            }
        }
        if accepted { return 0 }
        console.err("apphome: \(Self.count(report.notWhole.count, "file")) not brought back whole (exit status \(Self.notWholeStatus)); "
                    + "pass --accept-unsettled to accept that\n")
        return Self.notWholeStatus
    }

    /// `backups [<bundle-id>] [--from DIR] [--verify]`.
    func listBackups(_ args: [String]) throws -> Int32 {
        let parsed = try scan(args, options: ["--from", "--read-data-subset"], flags: ["--verify"])
        let verify = parsed.flags.contains("--verify")
        let ops = try operands(parsed.operands, ["bundle identifier"], optional: 1)
        let id = try ops.first.map { try bundleIdentifier($0) }
        let subset = parsed.values["--read-data-subset"]
        if subset != nil && !verify { throw CommandFailure.usage("--read-data-subset goes with --verify") }
        if let from = parsed.values["--from"], let repository = ResticRepository.parse(from) {
            return try resticList(id, repository: repository, verify: verify, subset: subset)
        }
        if subset != nil { throw CommandFailure.usage("--read-data-subset is for a restic repository (--from restic:REPOSITORY)") }
        let found = try manager.backups(in: parsed.values["--from"], of: id)
        var rows = [["BUNDLE ID", "VERSION", "TAKEN", "FILES", "BYTES", "BACKUP"]]
        var damaged = 0
        var databaseLines: [String] = []
        for (path, result) in found {
            switch result {
            case .success(let m):
                if verify {
                    let checked: (String, String?) -> Void = { database, problem in
                        databaseLines.append("database \(FileNames.escaped(database)) in \(FileNames.escaped(path)): integrity_check "
                                             + (problem.map { "FAILED: " + FileNames.escaped($0) } ?? "ok"))
                    }
                    do { _ = try manager.verifyBackup(at: path, checkedDatabase: checked) } catch {
                        console.err("apphome: \(error)\n")
                        damaged += 1
                        continue
                    }
                }
                rows.append([m.bundleIdentifier.rawValue, m.displayVersion, Self.iso8601(m.creationTime),
                             String(m.fileCount), String(m.totalBytes), path])
            case .failure(let error):
                console.err("apphome: \(error)\n")
                damaged += 1
            }
        }
        var widths = [Int](repeating: 0, count: 5)
        for row in rows { for i in 0..<5 { widths[i] = max(widths[i], row[i].count) } }
        for row in rows {
            var line = ""
            for i in 0..<5 { line += row[i] + String(repeating: " ", count: widths[i] - row[i].count + 2) }
            console.out(line + row[5] + "\n")
        }
        for line in databaseLines { console.out(line + "\n") }
        if verify && damaged == 0 {
            console.out("verified \(Self.count(rows.count - 1, "backup")): every stored file matches its checksum\n")
        }
        return damaged == 0 ? 0 : 1
    }

    /// `prune-backups --keep N [<bundle-id>] [--from DIR] [--dry-run]`: 1
    /// when stored files could not be collected.
    func pruneBackups(_ args: [String]) throws -> Int32 {
        let parsed = try scan(args, options: ["--from", "--keep"], flags: ["--dry-run"])
        guard let text = parsed.values["--keep"] else {
            throw CommandFailure.usage("prune-backups needs --keep N: how many of each app's newest backups to keep")
        }
        guard let keep = Int(text), keep >= 1 else {
            throw CommandFailure.usage("option --keep needs a whole number of at least 1, not '\(text)'")
        }
        let dryRun = parsed.flags.contains("--dry-run")
        let ops = try operands(parsed.operands, ["bundle identifier"], optional: 1)
        let id = try ops.first.map { try bundleIdentifier($0) }
        if let from = parsed.values["--from"], let repository = ResticRepository.parse(from) {
            return try resticPrune(id, repository: repository, keep: keep, dryRun: dryRun)
        }
        if let from = parsed.values["--from"], !FileSystem.isDirectory(from) {
            throw CommandFailure.failure("no backup directory at \(from)")
        }
        let report = try manager.pruneBackups(in: parsed.values["--from"], of: id, keep: keep, dryRun: dryRun)
        let verb = dryRun ? "would remove" : "removed"
        for path in report.removedManifests { console.out("\(verb) \(path)\n") }
        if let reason = report.objectsKeptBecause {
            console.out("\(verb) \(Self.count(report.removedManifests.count, "backup")); no stored file was removed\n")
            console.err("apphome: stored files were not collected, since a remaining backup cannot be read: \(reason)\n")
            return 1
        }
        console.out("\(verb) \(Self.count(report.removedManifests.count, "backup")) and \(Self.count(report.removedObjects, "stored file")) "
                    + "that no remaining backup needs (\(report.bytesFreed) bytes)\n")
        return 0
    }

    /// `1 file`, `2 files`.
    static func count(_ n: Int, _ noun: String) -> String { n == 1 ? "1 \(noun)" : "\(n) \(noun)s" }
}
