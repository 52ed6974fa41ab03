import AppHomeSystem

/// Where things live under an AppHome root. The one place that knows the
/// on-disk layout of homes, the registry and hooks.
///
/// ```
/// <root>/Applications/<UUID>/          a home (0700)
/// <root>/Applications/registry.plist   the registry (see Schemas/registry.md)
/// <root>/Applications/.registry.lock   flock taken by every writer
/// <root>/Applications/journal.plist    the install/update/uninstall in progress
/// <root>/Applications/.<UUID>.run.lock flock shared by `apphome run` of that home
/// <root>/Shared/AppGroup/<UUID>/       an app-group container (0700), with
///                                      .apphome-container.plist naming its group
/// <root>/Recovered/<UUID>/             orphaned data `doctor` kept aside
/// <root>/Hooks/uninstall.d/            executables run on uninstall
/// <root>/Backups/                      the default backup store (``BackupStore``, Schemas/backup.md)
/// ```
public struct ContainerLayout: Sendable, Equatable {
    /// The AppHome root, without a trailing slash.
    public let root: String

    public init(root: String) {
        self.root = Paths.trimmingTrailingSlashes(root)
    }

    /// `<root>/Applications`.
    public var applicationsDirectory: String { root + "/Applications" }
    /// `<root>/Applications/registry.plist`.
    public var registryPath: String { applicationsDirectory + "/registry.plist" }
    /// `<root>/Applications/.registry.lock`.
    public var lockPath: String { applicationsDirectory + "/.registry.lock" }
    /// `<root>/Hooks/uninstall.d`.
    public var uninstallHooksDirectory: String { root + "/Hooks/uninstall.d" }
    /// `<root>/Applications/journal.plist` (see `Schemas/journal.md`).
    public var journalPath: String { applicationsDirectory + "/journal.plist" }
    /// `<root>/Shared/AppGroup`, where app-group containers live.
    public var groupsDirectory: String { root + "/Shared/AppGroup" }
    /// `<root>/Recovered`, where `doctor` moves orphaned homes and group
    /// containers that still hold user data, rather than deleting them.
    public var recoveredDirectory: String { root + "/Recovered" }

    /// The lock file `apphome run` holds shared while a command runs in the
    /// home `uuid`: `<root>/Applications/.<UUID>.run.lock`.
    public func runLockPath(uuid: String) -> String { applicationsDirectory + "/." + uuid + ".run.lock" }

    /// `<root>/Applications/.runs`: one record per app `apphome run` is
    /// running (``RunRecord``), for `apphome list --running`.
    public var runsDirectory: String { applicationsDirectory + "/.runs" }

    /// The app-group container named by `uuid`.
    public func groupContainer(uuid: String) -> GroupContainer {
        GroupContainer(path: groupsDirectory + "/" + uuid)
    }

    /// The home with `uuid` holding the bundle directory `bundleName`.
    public func home(uuid: String, bundleName: String) -> ApplicationHome {
        ApplicationHome(path: applicationsDirectory + "/" + uuid, bundleName: bundleName)
    }

    /// Whether `text` is an uppercase UUID as ``Random/uuid()``
    /// makes, so that it is safe as a directory name.
    public static func isValidUUID(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard bytes.count == 36 else { return false }
        for (i, b) in bytes.enumerated() {
            if [8, 13, 18, 23].contains(i) {
                if b != UInt8(ascii: "-") { return false }
            } else if !((b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x46)) {
                return false
            }
        }
        return true
    }
}

/// The directories of one installed app.
///
/// Callers should ask for a directory by what it is for, never derive one
/// path from another: on iOS the bundle and the data live apart.
public struct ApplicationHome: Sendable, Equatable {
    /// `<root>/Applications/<UUID>`: the data container.
    public let path: String
    /// The bundle directory's name, e.g. `ScaryBugs.app`.
    public let bundleName: String

    public init(path: String, bundleName: String) {
        self.path = path
        self.bundleName = bundleName
    }

    /// `<home>/<Name>.app`, the installed bundle (read-only).
    public var app: String { path + "/" + bundleName }
    /// `<home>/Documents`.
    public var documents: String { path + "/Documents" }
    /// `<home>/Library`.
    public var library: String { path + "/Library" }
    /// `<home>/Library/Preferences`.
    public var preferences: String { library + "/Preferences" }
    /// `<home>/Library/Caches`.
    public var caches: String { library + "/Caches" }
    /// `<home>/Library/Application Support`.
    public var applicationSupport: String { library + "/Application Support" }
    /// `<home>/Library/Keychains`: AppHome's, for the app's prefsd
    /// credential; moved by updates, never backed up.
    public var keychains: String { library + "/Keychains" }
    /// `<home>/tmp`.
    public var tmp: String { path + "/tmp" }

    /// The directories an install creates, parents first.
    public var standardDirectories: [String] { [documents, library, preferences, caches, applicationSupport, tmp] }
}

/// A shared app-group container: `<root>/Shared/AppGroup/<UUID>/`, with
/// `Library/`, `Library/Preferences/` and `Library/Caches/` (0700), like the
/// container `containerURL(forSecurityApplicationGroupIdentifier:)` returns.
public struct GroupContainer: Sendable, Equatable {
    /// The container directory.
    public let path: String

    public init(path: String) { self.path = path }

    /// `<container>/Library`.
    public var library: String { path + "/Library" }
    /// `<container>/Library/Preferences`, where the group's suite lives as
    /// `<group-id>.plist`.
    public var preferences: String { library + "/Preferences" }
    /// `<container>/Library/Caches`.
    public var caches: String { library + "/Caches" }
    /// `<container>/.apphome-container.plist`: which group the container
    /// is (`Identifier`), so `doctor` can rebuild a lost registry.
    public var identityFile: String { path + "/" + Self.identityFileName }
    public static let identityFileName = ".apphome-container.plist"

    /// The directories a new container gets, parents first.
    public var standardDirectories: [String] { [library, preferences, caches] }
}
