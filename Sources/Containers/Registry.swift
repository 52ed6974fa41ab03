import PropertyList

/// One installed app as the registry records it.
public struct RegistryEntry: Equatable, Sendable {
    /// `CFBundleIdentifier`.
    public var bundleIdentifier: BundleIdentifier
    /// The UUID naming the current home under `<root>/Applications/`.
    public var homeUUID: String
    /// The bundle directory's name inside the home, e.g. `ScaryBugs.app`.
    public var bundleName: String
    /// `CFBundleVersion`.
    public var version: String
    /// `CFBundleShortVersionString`, if the bundle has one.
    public var shortVersion: String?
    /// `CFBundleDisplayName`, if the bundle has one.
    public var displayName: String?
    /// When this version was installed (or updated to).
    public var installTime: PlistDate

    public init(bundleIdentifier: BundleIdentifier, homeUUID: String, bundleName: String, version: String,
                shortVersion: String?, displayName: String?, installTime: PlistDate) {
        self.bundleIdentifier = bundleIdentifier
        self.homeUUID = homeUUID
        self.bundleName = bundleName
        self.version = version
        self.shortVersion = shortVersion
        self.displayName = displayName
        self.installTime = installTime
    }

    /// The version as people read it: `1.0 (1)`, or the build alone.
    public var displayVersion: String {
        if let short = shortVersion { return "\(short) (\(version))" }
        return version
    }
}

/// The registry's contents: bundle id → current home. The file format is
/// described in `Schemas/registry.md`.
public struct Registry: Equatable, Sendable {
    /// The format version this code writes, and the newest it reads.
    public static let formatVersion = 1

    /// The installed apps.
    public var entries: [BundleIdentifier: RegistryEntry]

    public init(entries: [BundleIdentifier: RegistryEntry] = [:]) {
        self.entries = entries
    }

    /// The entries sorted by bundle id.
    public var sortedEntries: [RegistryEntry] { entries.values.sorted { $0.bundleIdentifier < $1.bundleIdentifier } }

    /// The registry as a binary property list.
    public func encoded() throws(ContainersError) -> [UInt8] {
        var apps: [String: PlistValue] = [:]
        for (id, e) in entries {
            var d: [String: PlistValue] = [
                "HomeUUID": .string(e.homeUUID),
                "BundleName": .string(e.bundleName),
                "CFBundleVersion": .string(e.version),
                "InstallTime": .date(e.installTime),
            ]
            if let s = e.shortVersion { d["CFBundleShortVersionString"] = .string(s) }
            if let s = e.displayName { d["CFBundleDisplayName"] = .string(s) }
            apps[id.rawValue] = .dictionary(d)
        }
        let root: PlistValue = .dictionary(["FormatVersion": .integer(Int128(Self.formatVersion)), "Applications": .dictionary(apps)])
        do { return try PlistCodec.encode(root, format: .binary) } catch {
            throw .registryCorrupt(path: "", reason: "cannot encode: \(error)")
        }
    }

    /// Reads a registry file's bytes.
    ///
    /// Every name in the file is validated again (bundle ids, UUIDs, bundle
    /// names), so a tampered registry cannot lead outside the root.
    ///
    /// - Parameters:
    ///   - bytes: the file contents (any plist format).
    ///   - path: the file, for messages.
    /// - Throws: ``ContainersError/registryVersionTooNew(path:found:supported:)``
    ///   for a newer format; ``ContainersError/registryCorrupt(path:reason:)``
    ///   for anything malformed.
    public init(decoding bytes: [UInt8], path: String) throws(ContainersError) {
        func corrupt(_ reason: String) -> ContainersError { .registryCorrupt(path: path, reason: reason) }
        let value: PlistValue
        do { value = try PlistCodec.decode(bytes) } catch { throw corrupt("\(error)") }
        guard let top = value.dictionaryValue else { throw corrupt("the top level is not a dictionary") }
        guard case .integer(let version)? = top["FormatVersion"] else { throw corrupt("FormatVersion is missing") }
        if version > Int128(Self.formatVersion) {
            throw .registryVersionTooNew(path: path, found: version > Int128(Int.max) ? Int.max : Int(version), supported: Self.formatVersion)
        }
        guard version >= 1 else { throw corrupt("FormatVersion \(version) is not valid") }
        guard let apps = top["Applications"]?.dictionaryValue else { throw corrupt("Applications is missing") }
        var entries: [BundleIdentifier: RegistryEntry] = [:]
        for (key, value) in apps {
            guard let id = try? BundleIdentifier(key) else { throw corrupt("'\(key)' is not a valid bundle identifier") }
            guard let d = value.dictionaryValue else { throw corrupt("the entry for \(key) is not a dictionary") }
            func string(_ name: String) -> String? {
                if case .string(let s)? = d[name] { return s }
                return nil
            }
            guard let uuid = string("HomeUUID"), ContainerLayout.isValidUUID(uuid) else { throw corrupt("the entry for \(key) has no valid HomeUUID") }
            guard let bundleName = string("BundleName"), AppBundle.isValidBundleName(bundleName) else {
                throw corrupt("the entry for \(key) has no valid BundleName")
            }
            guard let version = string("CFBundleVersion") else { throw corrupt("the entry for \(key) has no CFBundleVersion") }
            guard case .date(let installTime)? = d["InstallTime"] else { throw corrupt("the entry for \(key) has no InstallTime") }
            entries[id] = RegistryEntry(bundleIdentifier: id, homeUUID: uuid, bundleName: bundleName, version: version,
                                        shortVersion: string("CFBundleShortVersionString"),
                                        displayName: string("CFBundleDisplayName"), installTime: installTime)
        }
        self.entries = entries
    }
}
