#if canImport(Glibc)
import Glibc
#endif
import AppHomeSystem
import Preferences

/// Everything that can go wrong in the containers layer.
///
/// One public error type for the module. Each case carries the offending
/// value; the messages are part of the interface and stay fixed.
public enum ContainersError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A bundle identifier that is not reverse-DNS.
    case invalidBundleIdentifier(String, reason: String)
    /// An app-group identifier that is not `group.` + reverse-DNS.
    case invalidAppGroupIdentifier(String, reason: String)
    /// A bundle that cannot be installed: the path, and why.
    case invalidBundle(path: String, reason: String)
    /// `install` of a bundle id that is already installed.
    case alreadyInstalled(String)
    /// A bundle id with no entry in the registry.
    case notInstalled(String)
    /// A command started by `apphome run` still runs in the app's home.
    case appRunning(String)
    /// The registry file was written by a newer AppHome.
    case registryVersionTooNew(path: String, found: Int, supported: Int)
    /// The registry file cannot be read as a registry.
    case registryCorrupt(path: String, reason: String)
    /// The journal was written by a newer AppHome.
    case journalVersionTooNew(path: String, found: Int, supported: Int)
    /// The journal cannot be read.
    case journalDamaged(path: String, reason: String)
    /// A file in a bundle that is neither a regular file, a directory nor a symbolic link.
    case unsupportedFileType(path: String)
    /// No app context: neither given explicitly nor found in the environment.
    case noAppContext
    /// A failure injected by a test at the named step.
    case injectedFailure(step: String)
    /// A crash simulated by a test after the named step: nothing is
    /// cleaned up, the journal stays, as if the process had died.
    case simulatedCrash(step: String)
    /// An earlier install, update or uninstall was interrupted and its
    /// journal is still pending.
    case interruptedOperation(String)
    /// A backup manifest or object that fails a check: the manifest, and why.
    case backupDamaged(path: String, reason: String)
    /// A backup manifest written by a newer AppHome.
    case backupVersionTooNew(path: String, found: Int, supported: Int)
    /// A backup (or a bundle given for it) of another app than expected.
    case backupOfAnotherApp(path: String, found: String, expected: String)
    /// No backup of the app in the backup directory.
    case noBackup(identifier: String, directory: String)
    /// Nothing readable at the path given as a backup.
    case backupMissing(path: String)
    /// A backup or restore would leave the file system holding `path`
    /// (nearly) full: `needed` bytes more, only `available` usable. Refused
    /// before the write; nothing of it is kept.
    case notEnoughSpace(path: String, needed: Int, available: Int)
    /// A restore of an app that is not installed, without a bundle to install.
    case restoreNeedsBundle(String)
    /// An ``AppDataParticipant`` could not give its part of a backup.
    case participantFailed(name: String, identifier: String, reason: String)
    /// An ``AppDataParticipant`` refused a restore before anything changed
    /// (a wrong backup password).
    case participantRefusedRestore(name: String, identifier: String, reason: String)
    /// An operating-system call failed.
    case system(SystemError)
    /// A bundle has no `_CodeSignature/CodeResources`.
    case notSigned(path: String)
    /// A signed bundle fails verification: the first problem found.
    case signatureInvalid(path: String, reason: String)
    /// An install, update or restore refused a claimed group.
    case entitlementRefused(identifier: String, claim: String, reason: String)
    /// An update or restore of a signed app with a bundle or backup of another team (or unsigned).
    case differentPublisher(identifier: String, installed: String, offered: String)
    /// A signing key file cannot be written or read.
    case signingKey(path: String, reason: String)
    /// A file name that is not valid UTF-8 where a name decides trust or
    /// identity (a bundle, a backup): `path` shows its bytes escaped,
    /// `kind` is what it names (`file`, `directory`, `symlink`, `entry`).
    case invalidFileName(path: String, kind: String)
    /// An update or restore would put an older version in place of a newer one.
    case downgrade(identifier: String, installed: String, offered: String, reason: String)
    /// A `--talk-name` that is not a bus name, or names the Secret Service.
    case invalidTalkName(String, reason: String)
    /// The sandbox cannot be set up: a program is missing, prefsd does not answer.
    case sandboxUnavailable(String)
    /// bubblewrap ended (with this status) before the app started.
    case sandboxFailed(bubblewrap: String, status: Int32)
    /// The sandbox was made, but the command could not be started in it.
    case sandboxCommandFailed(String, status: Int32)

    public var description: String {
        switch self {
        case .invalidBundleIdentifier(let id, let reason):
            return "invalid bundle identifier '\(id)': \(reason)"
        case .invalidAppGroupIdentifier(let id, let reason):
            return "invalid app group identifier '\(id)': \(reason)"
        case .invalidBundle(let path, let reason):
            return "cannot use bundle \(path): \(reason)"
        case .alreadyInstalled(let id):
            return "\(id) is already installed; use 'apphome update' to install a new version"
        case .notInstalled(let id):
            return "\(id) is not installed"
        case .appRunning(let id):
            return "\(id) is running (a command started by 'apphome run' is still running in its home); stop it first"
        case .registryVersionTooNew(let path, let found, let supported):
            return "registry \(path) has format version \(found), but this AppHome reads only up to version \(supported); use a newer apphome"
        case .registryCorrupt(let path, let reason):
            return "registry \(path) is damaged: \(reason)"
        case .journalVersionTooNew(let path, let found, let supported):
            return "journal \(path) has format version \(found), but this AppHome reads only up to version \(supported); use a newer apphome"
        case .journalDamaged(let path, let reason):
            return "journal \(path) is damaged: \(reason)"
        case .unsupportedFileType(let path):
            return "cannot copy \(path): only regular files, directories and symbolic links can be in a bundle"
        case .noAppContext:
            return "no app context: pass a home or run under 'apphome run'"
        case .injectedFailure(let step):
            return "injected failure at step \(step)"
        case .simulatedCrash(let step):
            return "simulated crash after step \(step)"
        case .interruptedOperation(let what):
            return "\(what) was interrupted; run 'apphome doctor' to finish or undo it"
        case .backupDamaged(let path, let reason):
            return "backup \(path) is damaged: \(reason)"
        case .backupVersionTooNew(let path, let found, let supported):
            return "backup \(path) has format version \(found), but this AppHome reads only up to version \(supported); use a newer apphome"
        case .backupOfAnotherApp(let path, let found, let expected):
            return "backup \(path) is of \(found), not \(expected)"
        case .noBackup(let id, let directory):
            return "no backup of \(id) in \(directory)"
        case .backupMissing(let path):
            return "no backup at \(path)"
        case .notEnoughSpace(let path, let needed, let available):
            return "not enough free space on the file system of \(path): \(needed) bytes are needed, \(available) can be used "
                + "(a reserve of 2%, at most 128 MiB, is kept free)"
        case .restoreNeedsBundle(let id):
            return "\(id) is not installed: install it with 'apphome install <Name.app>' first, or pass --app <Name.app> to restore"
        case .participantFailed(let name, let id, let reason):
            return "\(name) could not back up \(id): \(reason)"
        case .participantRefusedRestore(let name, let id, let reason):
            return "\(name) refused to restore \(id): \(reason)"
        case .notSigned(let path):
            return "\(path) is not signed (no \(CodeResources.relativePath)); sign it with 'apphome sign'"
        case .signatureInvalid(let path, let reason):
            return "\(path) failed signature verification: \(reason)"
        case .entitlementRefused(let id, let claim, let reason):
            return "\(id) may not claim '\(claim)': \(reason)"
        case .differentPublisher(let id, let installed, let offered):
            return "\(id) is signed by a different publisher: installed \(installed), offered \(offered); an update must be signed by the same team"
        case .downgrade(let id, let installed, let offered, let reason):
            return "\(offered) of \(id) is a downgrade of the installed \(installed): \(reason); versions only go up (pass --allow-downgrade to replace it anyway)"
        case .invalidTalkName(let name, let reason):
            return "--talk-name \(name): \(reason)"
        case .sandboxUnavailable(let reason):
            return "cannot make the app's sandbox: \(reason); 'apphome run --no-sandbox' runs it without one (it can then read every file of the user)"
        case .sandboxFailed(let bwrap, let status):
            return "cannot make the app's sandbox: \(bwrap) failed (status \(status), its message is above) before the app started; "
                + "bubblewrap needs user namespaces (a container or a kernel setting such as kernel.unprivileged_userns_clone=0 or "
                + "user.max_user_namespaces=0 may forbid them); 'apphome run --no-sandbox' runs the app without a sandbox (it can then read every file of the user)"
        case .sandboxCommandFailed(let command, let status):
            return "bubblewrap could not finish the sandbox or start \(command) in it (status \(status), its message is above): "
                + "only /usr, the app's home and bundle, its app groups and the command named by path are visible there"
        case .invalidFileName(let path, let kind):
            return "the \(kind) name \(path) is not valid UTF-8 (shown with its bytes escaped): AppHome refuses a name it cannot read as text"
        case .signingKey(let path, let reason):
            return "signing key \(path): \(reason)"
        case .system(let error):
            return error.description
        }
    }
}

/// Runs `body`, converting whatever it throws into a ``ContainersError``.
@inline(__always)
public func containersErrors<T>(_ body: () throws -> T) throws(ContainersError) -> T {
    do { return try body() } catch let e as ContainersError { throw e } catch let e as SystemError {
        throw .system(e)
    } catch {
        throw .system(SystemError("\(error)", path: "", errno: EIO))
    }
}
