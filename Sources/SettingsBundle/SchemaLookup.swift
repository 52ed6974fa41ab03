import AppHomeSystem
import Containers
import Preferences
import PropertyList

/// Where a domain's settings schema comes from, in order: `--settings-bundle
/// PATH`; the `Settings.bundle` of the installed app whose bundle id is the
/// domain (`<home>/<Name>.app/Settings.bundle`), unless its Root names an
/// `ApplicationGroupContainerIdentifier`: then it governs that group's suite
/// instead (the domain `group.…`), as the reference's §7 says; a bundle
/// registered under the root as `Library/SettingsBundles/<domain>.bundle` (a
/// directory or a symbolic link to one).
public struct SettingsSchemaLookup: Sendable {
    public let root: String
    public let explicit: String?
    /// The app registry when it was already read (file store); `nil`: read
    /// here when the domain could be an app's or a group's.
    public var registry: Registry?
    /// Where the registry is read when ``registry`` is `nil`: a long-running
    /// writer's cache (prefsd), or `nil` to read the file each time.
    public var registryCache: RegistryCache?

    public init(root: String, explicit: String? = nil, registry: Registry? = nil, registryCache: RegistryCache? = nil) {
        self.root = root
        self.explicit = explicit
        self.registry = registry
        self.registryCache = registryCache
    }

    /// Where compiled settings bundles are kept (see ``CompiledSchemaCache``).
    public static func compiledSchemaDirectory(root: String) -> String { root + "/Library/Caches/SettingsSchemas" }

    /// The directory of explicitly registered bundles.
    public static func registeredDirectory(root: String) -> String { root + "/Library/SettingsBundles" }

    /// The bundle whose values live in `domain` on `idiom`. With
    /// `governing` false, an app's own bundle even when its values go to a
    /// group's suite (what `lint <domain>` checks).
    public func bundle(for domain: Domain, idiom: Idiom = .phone, governing: Bool = true) throws(SettingsBundleError) -> SettingsBundle? {
        if let explicit { return try SettingsBundle(path: explicit) }
        guard case .named(let name) = domain else { return nil }
        let layout = ContainerLayout(root: root)
        func settingsBundle(_ e: RegistryEntry) -> SettingsBundle? {
            try? SettingsBundle(path: layout.home(uuid: e.homeUUID, bundleName: e.bundleName).app + "/Settings.bundle")
        }
        let group = try? AppGroupIdentifier(name)
        let app = try? BundleIdentifier(name)
        let registry = self.registry ?? (app != nil ? registryCache?.current() ?? ContainerRegistry.readOrEmpty(root: root) : Registry())
        if let app, let e = registry.entries[app], let b = settingsBundle(e) {
            // A bundle whose values go to a group's suite does not govern the
            // app's domain. Only an app in a group can name one (so most apps'
            // writes do not read Root for it).
            if !governing || e.groups.isEmpty || b.groupContainerIdentifier(idiom: idiom) == nil { return b }
            return nil
        }
        if let group, registry.groups[group] != nil {
            for e in registry.sortedEntries where e.groups.contains(group) {
                if let b = settingsBundle(e), b.groupContainerIdentifier(idiom: idiom) == group.rawValue { return b }
            }
        }
        return try? SettingsBundle(path: Self.registeredDirectory(root: root) + "/" + name + ".bundle")
    }
}
