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
    /// The app groups the install granted (the signed ones), sorted.
    public var groups: [AppGroupIdentifier]
    /// The team that signed the installed bundle; `nil` for an unsigned app.
    public var team: TeamIdentifier?
    /// The keychain access groups the install granted (signed, expanded),
    /// in the order the bundle lists them.
    public var keychainGroups: [String]
    /// The synced key-value store the install granted (signed, expanded), or `nil`.
    public var ubiquityKeyValueStore: String?

    public init(bundleIdentifier: BundleIdentifier, homeUUID: String, bundleName: String, version: String,
                shortVersion: String?, displayName: String?, installTime: PlistDate, groups: [AppGroupIdentifier] = [],
                team: TeamIdentifier? = nil, keychainGroups: [String] = [], ubiquityKeyValueStore: String? = nil) {
        self.bundleIdentifier = bundleIdentifier
        self.homeUUID = homeUUID
        self.bundleName = bundleName
        self.version = version
        self.shortVersion = shortVersion
        self.displayName = displayName
        self.installTime = installTime
        self.groups = groups
        self.team = team
        self.keychainGroups = keychainGroups
        self.ubiquityKeyValueStore = ubiquityKeyValueStore
    }

    /// The entry as the registry (and the journal) store it.
    var plistValue: PlistValue {
        var d: [PlistKey: PlistValue] = [
            "HomeUUID": .string(homeUUID),
            "BundleName": .string(bundleName),
            "CFBundleVersion": .string(version),
            "InstallTime": .date(installTime),
        ]
        if let s = shortVersion { d["CFBundleShortVersionString"] = .string(s) }
        if let s = displayName { d["CFBundleDisplayName"] = .string(s) }
        if !groups.isEmpty { d["ApplicationGroups"] = .array(groups.map { .string($0.rawValue) }) }
        if let team { d["TeamIdentifier"] = .string(team.rawValue) }
        if !keychainGroups.isEmpty { d["KeychainAccessGroups"] = .array(keychainGroups.map { .string($0) }) }
        if let store = ubiquityKeyValueStore { d["UbiquityKeyValueStore"] = .string(store) }
        return .dictionary(d)
    }

    /// Reads an entry stored under the key `key`, checking every name again.
    ///
    /// - Parameters:
    ///   - corrupt: makes the error for a broken rule.
    ///   - signedEntitlements: whether the format records signatures
    ///     (registry version 3, every journal); an entry of an older
    ///     registry is read as unsigned, holding no group but its own.
    init(key: String, value: PlistValue, signedEntitlements: Bool = true,
         corrupt: (String) -> ContainersError) throws(ContainersError) {
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
        var groups: [AppGroupIdentifier] = []
        if let value = d["ApplicationGroups"] {
            guard case .array(let items) = value else { throw corrupt("ApplicationGroups of \(key) is not an array") }
            for item in items {
                guard case .string(let text) = item, let group = try? AppGroupIdentifier(text) else {
                    throw corrupt("ApplicationGroups of \(key) holds an invalid app group identifier")
                }
                groups.append(group)
            }
        }
        var team: TeamIdentifier? = nil
        if let value = d["TeamIdentifier"] {
            guard case .string(let text) = value, let t = TeamIdentifier(text) else { throw corrupt("TeamIdentifier of \(key) is not a team identifier") }
            team = t
        }
        var keychainGroups: [String] = []
        if let value = d["KeychainAccessGroups"] {
            guard case .array(let items) = value, let t = team else { throw corrupt("KeychainAccessGroups of \(key) is not an array of a signed app") }
            for item in items {
                guard case .string(let text) = item, Entitlements.keychainGroupProblem(text, team: t) == nil else {
                    throw corrupt("KeychainAccessGroups of \(key) holds a group that is not its team's")
                }
                keychainGroups.append(text)
            }
        }
        var store: String? = nil
        if let value = d["UbiquityKeyValueStore"] {
            guard case .string(let text) = value, let t = team, Entitlements.ubiquityStoreProblem(text, team: t) == nil else {
                throw corrupt("UbiquityKeyValueStore of \(key) is not a key-value store identifier of its team")
            }
            store = text
        }
        if !groups.isEmpty && team == nil && signedEntitlements { throw corrupt("\(key) is unsigned but has ApplicationGroups") }
        if !signedEntitlements {
            // Before signed entitlements: unsigned, its own group only.
            groups = []; team = nil; keychainGroups = []; store = nil
        }
        self.init(bundleIdentifier: id, homeUUID: uuid, bundleName: bundleName, version: version,
                  shortVersion: string("CFBundleShortVersionString"), displayName: string("CFBundleDisplayName"),
                  installTime: installTime, groups: Array(Set(groups)).sorted(), team: team,
                  keychainGroups: Entitlements(keychainAccessGroups: keychainGroups).keychainAccessGroups,
                  ubiquityKeyValueStore: store)
    }

    /// `"team XXXXXXXXXX"`, or `"unsigned"`.
    public var publisherDescription: String { team.map { "team \($0)" } ?? "unsigned" }
}

/// The registry's contents: bundle id → current home, and app group →
/// shared container. The file format is described in `Schemas/registry.md`.
public struct Registry: Equatable, Sendable {
    /// The format version this code writes, and the newest it reads.
    /// Version 1 (no app groups) is read as a registry without groups;
    /// version 3 adds signed entitlements, and the apps of a version 1 or
    /// 2 registry are read as unsigned, each holding only its own group.
    public static let formatVersion = 3

    /// The installed apps.
    public var entries: [BundleIdentifier: RegistryEntry]
    /// Every app-group container: group id → the UUID naming its directory
    /// under `<root>/Shared/AppGroup/`.
    public var groups: [AppGroupIdentifier: String]
    /// The team each app group belongs to: that of the first signed app
    /// that created (or adopted) its container. A container from before
    /// version 3 has none, and no app can claim it.
    public var groupTeams: [AppGroupIdentifier: TeamIdentifier]

    public init(entries: [BundleIdentifier: RegistryEntry] = [:], groups: [AppGroupIdentifier: String] = [:],
                groupTeams: [AppGroupIdentifier: TeamIdentifier] = [:]) {
        self.entries = entries
        self.groups = groups
        self.groupTeams = groupTeams
    }

    /// The entries sorted by bundle id.
    public var sortedEntries: [RegistryEntry] { entries.values.sorted { $0.bundleIdentifier < $1.bundleIdentifier } }

    /// The installed apps that declare `group`, sorted by bundle id.
    public func members(of group: AppGroupIdentifier) -> [BundleIdentifier] {
        sortedEntries.filter { $0.groups.contains(group) }.map(\.bundleIdentifier)
    }

    /// The registry as a binary property list.
    public func encoded() throws(ContainersError) -> [UInt8] {
        var apps: [PlistKey: PlistValue] = [:]
        for (id, e) in entries { apps[id.rawValue] = e.plistValue }
        var groupTable: [PlistKey: PlistValue] = [:]
        for (id, uuid) in groups {
            var d: [PlistKey: PlistValue] = ["ContainerUUID": .string(uuid)]
            if let team = groupTeams[id] { d["TeamIdentifier"] = .string(team.rawValue) }
            groupTable[id.rawValue] = .dictionary(d)
        }
        let root: PlistValue = .dictionary(["FormatVersion": .integer(Int128(Self.formatVersion)), "Applications": .dictionary(apps),
                                            "Groups": .dictionary(groupTable)])
        do { return try PlistCodec.encode(root, format: .binary) } catch {
            throw .registryCorrupt(path: "", reason: "cannot encode: \(error)")
        }
    }

    /// Reads a registry file's bytes (format version 1, 2 or 3).
    ///
    /// Every name in the file is validated again (bundle ids, group ids,
    /// UUIDs, bundle names), so a tampered registry cannot lead outside the
    /// root.
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
        let version = try checkedFormatVersion(in: top, supported: Self.formatVersion, tooNew: {
            .registryVersionTooNew(path: path, found: $0, supported: $1)
        }, damaged: corrupt)
        guard let apps = top["Applications"]?.dictionaryValue else { throw corrupt("Applications is missing") }
        var entries: [BundleIdentifier: RegistryEntry] = [:]
        for (key, value) in apps {
            let entry = try RegistryEntry(key: key.string, value: value, signedEntitlements: version >= 3, corrupt: corrupt)
            entries[entry.bundleIdentifier] = entry
        }
        var groups: [AppGroupIdentifier: String] = [:]
        var groupTeams: [AppGroupIdentifier: TeamIdentifier] = [:]
        if version >= 2 {
            guard let table = top["Groups"]?.dictionaryValue else { throw corrupt("Groups is missing") }
            for (key, value) in table {
                guard let id = try? AppGroupIdentifier(key.string) else { throw corrupt("'\(key)' is not a valid app group identifier") }
                guard case .string(let uuid)? = value.dictionaryValue?["ContainerUUID"], ContainerLayout.isValidUUID(uuid) else {
                    throw corrupt("the group \(key) has no valid ContainerUUID")
                }
                groups[id] = uuid
                if version >= 3, let value = value.dictionaryValue?["TeamIdentifier"] {
                    guard case .string(let text) = value, let team = TeamIdentifier(text) else {
                        throw corrupt("the group \(key) has an invalid TeamIdentifier")
                    }
                    groupTeams[id] = team
                }
            }
        }
        self.entries = entries
        self.groups = groups
        self.groupTeams = groupTeams
    }
}
