#if canImport(Glibc)
import Glibc
#endif
import AppHomeSystem
import Containers
import Preferences
import PropertyList
import SettingsBundle

/// An installed app as the Settings app lists it.
public struct InstalledApp: Sendable, Equatable {
    /// Its bundle identifier (the page's address).
    public var id: String
    /// `CFBundleDisplayName`, else the bundle's name without `.app`.
    public var name: String
    /// `1.0 (1)`.
    public var version: String
    /// The `.app` directory.
    public var appPath: String
    /// Its `Settings.bundle`, if it has one.
    public var settingsBundle: SettingsBundle?
    /// The registry's app groups (a bundle may send its values to one).
    public var groups: [String]

    public init(id: String, name: String, version: String, appPath: String, settingsBundle: SettingsBundle?, groups: [String]) {
        self.id = id
        self.name = name
        self.version = version
        self.appPath = appPath
        self.settingsBundle = settingsBundle
        self.groups = groups
    }

    public static func == (a: InstalledApp, b: InstalledApp) -> Bool {
        a.id == b.id && a.name == b.name && a.version == b.version && a.appPath == b.appPath
            && a.settingsBundle?.path == b.settingsBundle?.path && a.groups == b.groups
    }

    /// The domain the bundle's values live in: the app's own, or the suite of
    /// the group its Root names (`ApplicationGroupContainerIdentifier`) when
    /// the app belongs to that group, as ``SettingsSchemaLookup`` decides.
    public func domain(idiom: Idiom = .phone) -> Domain {
        if let group = settingsBundle?.groupContainerIdentifier(idiom: idiom), groups.contains(group) { return .named(group) }
        return .named(id)
    }

    /// The app's `Info.plist`, or an empty dictionary.
    public var infoPlist: [PlistKey: PlistValue] {
        guard let bytes = try? FileSystem.readFileIfPresent(appPath + "/Info.plist"), bytes.count <= 1 << 20,
              case .dictionary(let d)? = try? PlistCodec.decode(bytes) else { return [:] }
        return d
    }

    /// The largest PNG icon the `Info.plist` names (`CFBundleIcons`'
    /// primary icon files, `CFBundleIconFiles`, `CFBundleIconFile`), looked
    /// for as `NAME`, `NAME.png`, `NAME@2x.png`, `NAME@3x.png` in the `.app`;
    /// `nil` when none is there. Only plain file names are followed.
    public var iconPath: String? {
        let info = infoPlist
        var names: [String] = []
        if case .dictionary(let icons)? = info["CFBundleIcons"], case .dictionary(let primary)? = icons["CFBundlePrimaryIcon"],
           case .array(let files)? = primary["CFBundleIconFiles"] {
            for case .string(let n) in files { names.append(n) }
        }
        if case .array(let files)? = info["CFBundleIconFiles"] { for case .string(let n) in files { names.append(n) } }
        if case .string(let n)? = info["CFBundleIconFile"] { names.append(n) }
        var best: (path: String, size: Int)?
        for name in names where Catalog.isPlainFileName(name) {
            let base = name.hasSuffix(".png") ? String(name.dropLast(4)) : name
            for candidate in [name, base + ".png", base + "@2x.png", base + "@3x.png"] where Catalog.isPlainFileName(candidate) {
                let path = appPath + "/" + candidate
                guard let size = Catalog.regularFileSize(path), size > 0, size <= Catalog.maximumImageBytes else { continue }
                if best == nil || size > best!.size { best = (path, size) }
            }
        }
        return best?.path
    }
}

/// The installed apps under a root, read from the app registry.
public struct Catalog: Sendable {
    public let root: String
    /// The registry as last read, when the caller keeps one (the server does).
    public let cache: SettingsCache?

    /// The largest icon or slider image served (bytes).
    public static let maximumImageBytes = 1 << 20

    public init(root: String, cache: SettingsCache? = nil) {
        self.root = root
        self.cache = cache
    }

    var registry: Registry { cache?.registry(root: root) ?? ContainerRegistry.readOrEmpty(root: root) }

    /// Every installed app, by name then id.
    public func apps() -> [InstalledApp] {
        let layout = ContainerLayout(root: root)
        return registry.sortedEntries.map { installedApp($0, layout: layout) }
            .sorted { ($0.name.lowercased(), $0.id) < ($1.name.lowercased(), $1.id) }
    }

    /// The installed app `id`, or `nil`.
    public func app(_ id: String) -> InstalledApp? {
        guard let bundleID = try? BundleIdentifier(id), let e = registry.entries[bundleID] else { return nil }
        return installedApp(e, layout: ContainerLayout(root: root))
    }

    func installedApp(_ e: RegistryEntry, layout: ContainerLayout) -> InstalledApp {
        let app = layout.home(uuid: e.homeUUID, bundleName: e.bundleName).app
        var name = e.displayName ?? e.bundleName
        if e.displayName == nil, name.hasSuffix(".app") { name = String(name.dropLast(4)) }
        return InstalledApp(id: e.bundleIdentifier.rawValue, name: name, version: e.displayVersion, appPath: app,
                            settingsBundle: try? SettingsBundle(path: app + "/Settings.bundle"),
                            groups: e.groups.map(\.rawValue))
    }

    /// A name with no `/`, not `.` or `..`, no NUL, not empty: a file directly in a directory.
    static func isPlainFileName(_ name: String) -> Bool {
        !name.isEmpty && name != "." && name != ".." && !name.contains("/") && !name.contains("\0") && !name.hasPrefix(".")
    }

    /// The size of a regular file (symbolic links not followed), or `nil`.
    static func regularFileSize(_ path: String) -> Int? {
        var st = stat()
        guard lstat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { return nil }
        return Int(st.st_size)
    }
}
