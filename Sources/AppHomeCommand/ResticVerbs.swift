#if canImport(Glibc)
import Glibc
#endif
import AppHomeSystem
import CommandSupport
import Backups
import Containers
import Keychain
import KeychainClient

/// `backup`, `backups`, `restore` and `prune-backups` with a restic
/// repository (`--to restic:REPO`, `--from restic:REPO`).
///
/// Exit statuses of their own: 4 restic missing or too old, 5 no password
/// for the repository in the login keychain, 6 a wrong password, 7 the
/// repository cannot be reached or is not there.
extension AppHomeCommand {
    enum ResticStatus {
        static let missing: Int32 = 4
        static let noPassword: Int32 = 5
        static let wrongPassword: Int32 = 6
        static let unreachable: Int32 = 7
    }

    /// A ``ResticError`` (or any other error) as the command's failure.
    static func resticFailure(_ error: any Error, suffix: String = "") -> CommandFailure {
        guard let r = error as? ResticError else {
            if let c = error as? ContainersError { return .failure("\(c)\(suffix)") }
            return CommandFailure(error)
        }
        let status: Int32
        switch r {
        case .missing, .tooOld: status = ResticStatus.missing
        case .noPassword: status = ResticStatus.noPassword
        case .wrongPassword: status = ResticStatus.wrongPassword
        case .unreachable, .noRepository: status = ResticStatus.unreachable
        case .failed, .noSnapshot, .damaged: status = 1
        }
        return CommandFailure(.failure, r.description + suffix, exitStatus: status)
    }

    /// The repository `repository` with its password from the login
    /// keychain (generic password, service `apphome-restic`, account the
    /// repository string), written to restic's standard input. restic's
    /// version is checked first, so a missing restic is said before a
    /// missing password.
    func resticRepository(_ repository: String) throws -> ResticRepository {
        let unchecked = ResticRepository(repository, password: nil)
        let version = try unchecked.checkVersion()
        let secret: SecureBytes
        do {
            let keychain = try AppKeychain(loginAt: manager.layout.root, configuration: environment.configuration)
            secret = try keychain.genericPassword(service: ResticRepository.passwordService, account: repository)
        } catch KeychainError.itemNotFound {
            throw ResticError.noPassword(repository: repository, reason: "no \(ResticRepository.passwordService) item for it")
        } catch {
            throw ResticError.noPassword(repository: repository, reason: "\(error)")
        }
        guard secret.count > 0, !secret.withUnsafeBytes({ $0.contains(0x0A) || $0.contains(0x0D) }) else {
            throw ResticError.noPassword(repository: repository, reason: "the item's password is empty or holds a line end")
        }
        // Checked above: the commands do not run `restic version` again.
        return unchecked.with(password: ResticPassword { sink in try secret.withUnsafeBytes { try sink($0) } }, checkedVersion: version)
    }

    /// `backup <bundle-id> --to restic:REPO [--init]`.
    func resticBackup(_ id: BundleIdentifier, repository: String, initialize: Bool, secrets: BackupSecrets) throws -> Int32 {
        let report: BackupService.ResticBackupReport
        do {
            report = try manager.backupService.backup(id, toRestic: try resticRepository(repository), initialize: initialize, secrets: secrets)
        } catch {
            throw Self.resticFailure(error, suffix: "; nothing was stored")
        }
        let r = report.backup
        let m = r.manifest
        console.out("backed up \(m.bundleIdentifier) \(m.displayVersion) to restic:\(repository) as snapshot \(report.snapshotID)\n")
        console.out("\(Self.count(m.fileCount, "file")), \(m.totalBytes) bytes; restic added \(report.dataAdded) bytes to the repository\n")
        if !r.excluded.isEmpty { console.out("excluded (marked \(ContainerManager.excludeFromBackupAttribute)): \(r.excluded.joined(separator: ", "))\n") }
        if !r.databases.isEmpty {
            console.out("\(Self.count(r.databases.count, "database")) copied with SQLite's backup API (without -wal, -shm, -journal): "
                        + r.databases.joined(separator: ", ") + "\n")
        }
        for path in r.skipped {
            console.err("apphome: warning: \(m.bundleIdentifier): \(path) is not a file, directory or link, or its name is not UTF-8; not backed up\n")
        }
        for path in r.unsettled {
            console.err("apphome: warning: \(m.bundleIdentifier): \(path) kept changing while it was read, so it was never stored as read; "
                        + "it is not in this snapshot\n")
        }
        for missing in r.notBackedUp {
            console.err("apphome: \(m.bundleIdentifier): \(missing.path) is not in the backup: \(missing.reason)\n")
        }
        return r.notBackedUp.isEmpty ? 0 : 1
    }

    /// `backups [<bundle-id>] --from restic:REPO [--verify [--read-data-subset S]]`.
    func resticList(_ id: BundleIdentifier?, repository: String, verify: Bool, subset: String?) throws -> Int32 {
        do {
            let repo = try resticRepository(repository)
            let snapshots = try manager.backupService.resticBackups(in: repo, of: id)
            var rows = [["BUNDLE ID", "TAKEN", "HOST", "SNAPSHOT"]]
            for s in snapshots {
                let app = s.tags.first { $0 != "apphome" } ?? "?"
                rows.append([app, s.time, s.hostname, s.shortID])
            }
            var widths = [0, 0, 0]
            for row in rows { for i in 0..<3 { widths[i] = max(widths[i], row[i].count) } }
            for row in rows {
                var line = ""
                for i in 0..<3 { line += row[i] + String(repeating: " ", count: widths[i] - row[i].count + 2) }
                console.out(line + row[3] + "\n")
            }
            if verify {
                _ = try manager.backupService.verifyRestic(repo, readDataSubset: subset)
                let read = subset.map { "; read \($0) of the data" } ?? ""
                console.out("verified restic:\(repository) with restic check\(read): no errors\n")
            }
            return 0
        } catch {
            throw Self.resticFailure(error)
        }
    }

    /// `restore <bundle-id> --from restic:REPO [--snapshot ID] [--app Name.app] [--accept-unsettled] [--allow-downgrade]`.
    func resticRestore(_ parsed: (operands: [String], values: [String: String], flags: Set<String>), repository: String) throws -> Int32 {
        let given = try operands(parsed.operands, ["bundle identifier"])[0]
        let id = try bundleIdentifier(given)
        let secrets = try backupSecrets(parsed.flags, confirm: false)
        let report: ContainerManager.RestoreReport
        let snapshot: ResticSnapshot
        do {
            let bundle = try parsed.values["--app"].map { try AppBundle(path: $0) }
            (report, snapshot) = try manager.backupService.restore(id, fromRestic: try resticRepository(repository),
                                                                   snapshot: parsed.values["--snapshot"], bundle: bundle, secrets: secrets,
                                                                   allowDowngrade: parsed.flags.contains("--allow-downgrade"))
        } catch {
            throw Self.resticFailure(error, suffix: "; nothing was changed")
        }
        let m = report.manifest
        let device = report.fromAnotherDevice ? "on another device (\(m.deviceIdentifier))" : "on this device"
        return printRestore(report, from: "restic:\(repository) snapshot \(snapshot.shortID)", device: device,
                            passwordUnneeded: false, acceptUnsettled: parsed.flags.contains("--accept-unsettled"))
    }

    /// `prune-backups --keep N [<bundle-id>] --from restic:REPO [--dry-run]`.
    func resticPrune(_ id: BundleIdentifier?, repository: String, keep: Int, dryRun: Bool) throws -> Int32 {
        do {
            let report = try manager.backupService.pruneResticBackups(in: try resticRepository(repository), of: id, keep: keep, dryRun: dryRun)
            let verb = dryRun ? "would forget" : "forgot"
            for snapshot in report.removed { console.out("\(verb) snapshot \(snapshot)\n") }
            console.out("\(verb) \(Self.count(report.removed.count, "snapshot"))"
                        + (dryRun || report.removed.isEmpty ? "\n" : "; restic prune removed the data no remaining snapshot needs\n"))
            return 0
        } catch {
            throw Self.resticFailure(error)
        }
    }
}
