import AppHomeSystem
import Containers
import PropertyList

// The backup half of ``ContainerManager``'s front door: each call builds a
// ``BackupService`` over the manager's context.
extension ContainerManager {
    public var backupService: BackupService { BackupService(context: context) }
}

// MARK: Backup

extension ContainerManager {
    public typealias BackupReport = BackupService.BackupReport
    public typealias NotBackedUp = BackupService.NotBackedUp
    public typealias RestoreReport = BackupService.RestoreReport
    public typealias PruneReport = BackupService.PruneReport

    /// ``BackupService/excludeFromBackupAttribute``.
    public static let excludeFromBackupAttribute = BackupService.excludeFromBackupAttribute

    /// ``BackupService/setExcludedFromBackup(_:_:)``.
    public static func setExcludedFromBackup(_ path: String, _ excluded: Bool) throws(ContainersError) {
        try BackupService.setExcludedFromBackup(path, excluded)
    }

    /// The default backup directory, `<root>/Backups`.
    public var defaultBackupDirectory: String { backupService.defaultBackupDirectory }

    /// ``BackupService/backup(_:to:secrets:)``.
    public func backup(_ identifier: BundleIdentifier, to directory: String? = nil,
                       secrets: BackupSecrets = .none, options: BackupOptions = BackupOptions()) throws(ContainersError) -> BackupReport {
        try backupService.backup(identifier, to: directory, secrets: secrets, options: options)
    }

    /// ``BackupService/backupAll(to:secrets:)``.
    public func backupAll(to directory: String? = nil, secrets: BackupSecrets = .none,
                          options: BackupOptions = BackupOptions()) throws(ContainersError) -> [BackupReport] {
        try backupService.backupAll(to: directory, secrets: secrets, options: options)
    }

    /// ``BackupService/latestBackup(of:in:)``.
    public func latestBackup(of identifier: BundleIdentifier, in directory: String? = nil) throws(ContainersError) -> String {
        try backupService.latestBackup(of: identifier, in: directory)
    }

    /// ``BackupService/restore(from:bundle:secrets:)``.
    public func restore(from manifestPath: String, bundle: AppBundle? = nil,
                        secrets: BackupSecrets = .none, allowDowngrade: Bool = false) throws(ContainersError) -> RestoreReport {
        try backupService.restore(from: manifestPath, bundle: bundle, secrets: secrets, allowDowngrade: allowDowngrade)
    }

    /// ``BackupService/verifyBackup(at:)``.
    public func verifyBackup(at manifestPath: String,
                             checkedDatabase: (_ path: String, _ problem: String?) -> Void = { _, _ in }) throws(ContainersError) -> BackupManifest {
        try backupService.verifyBackup(at: manifestPath, checkedDatabase: checkedDatabase)
    }

    /// ``BackupService/backups(in:of:)``.
    public func backups(in directory: String? = nil, of identifier: BundleIdentifier? = nil)
        throws(ContainersError) -> [(path: String, manifest: Result<BackupManifest, ContainersError>)] {
        try backupService.backups(in: directory, of: identifier)
    }

    /// ``BackupService/pruneBackups(in:of:keep:dryRun:)``.
    public func pruneBackups(in directory: String? = nil, of identifier: BundleIdentifier? = nil, keep: Int,
                             dryRun: Bool = false) throws(ContainersError) -> PruneReport {
        try backupService.pruneBackups(in: directory, of: identifier, keep: keep, dryRun: dryRun)
    }
}
