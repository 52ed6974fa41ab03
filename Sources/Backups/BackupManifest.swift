import AppHomeSystem
import Containers
import Preferences
import PropertyList

/// One item of an app's home recorded in a backup.
public struct BackupEntry: Equatable, Sendable {
    /// What the item is, with what restoring it needs.
    public enum Kind: Equatable, Sendable {
        case directory
        /// A regular file: its contents are the object named `hash`.
        case file(hash: ContentHash, size: Int)
        /// A symbolic link and its target, restored as written.
        case symlink(target: String)
    }

    /// The path relative to the home, `/`-separated (`Documents/bug1.txt`).
    public var path: String
    public var kind: Kind
    /// The permission bits (`st_mode & 0o7777`).
    public var mode: UInt32
    /// For files: what the next backup compares so that an unchanged file
    /// is not read again (nanoseconds since 1970 and the inode number).
    public var modificationTime: Int64 = 0
    public var changeTime: Int64 = 0
    public var inode: UInt64 = 0
    /// For files: the file kept changing while it was read, every time it
    /// was read, so the stored bytes may mix two versions (format version
    /// 3, `Unsettled = true`). The next backup reads it again.
    public var unsettled = false
    /// For an unsettled file (format version 4): the time of the earlier
    /// backup that read the state stored here whole. `nil` on an unsettled
    /// entry of version 3, whose bytes may mix two versions.
    public var earlierState: PlistDate?
    /// For a sparse file (format version 4): the ranges that hold data, in
    /// order; the object holds their bytes one after another, and what lies
    /// between them (up to the size) is a hole. `nil` for a file stored whole.
    public var extents: [FileExtent]?

    /// The bytes of the object: the size, or a sparse file's data without its holes.
    public var storedSize: Int {
        guard case .file(_, let size) = kind else { return 0 }
        return extents.map(FileExtent.dataSize) ?? size
    }

    public init(path: String, kind: Kind, mode: UInt32, modificationTime: Int64 = 0, changeTime: Int64 = 0, inode: UInt64 = 0,
                unsettled: Bool = false, earlierState: PlistDate? = nil, extents: [FileExtent]? = nil) {
        self.earlierState = earlierState
        self.extents = extents
        self.path = path
        self.kind = kind
        self.mode = mode
        self.modificationTime = modificationTime
        self.changeTime = changeTime
        self.inode = inode
        self.unsettled = unsettled
    }
}

/// The manifest of one backup of one app: what was in its home, which
/// object holds each file, and the payloads of ``AppDataParticipant``s.
///
/// The on-disk form is described in `Schemas/backup.md`: an envelope
/// `{FormatVersion, Manifest = <data>, Checksum = <data>}` whose checksum
/// covers the inner manifest's bytes, so an edit anywhere in it is found.
public struct BackupManifest: Equatable, Sendable, BundleVersioned {
    /// The newest format version this code reads and writes: 2 adds
    /// `Groups`, 3 adds `TeamIdentifier` and `Unsettled` on an entry, 4
    /// adds `StateOf` and `Extents` on an entry and `LeftOut`. A backup is
    /// written with the lowest version that holds it (1 without groups,
    /// team or unsettled files), which older readers understand.
    public static let formatVersion = 4

    /// The version this manifest is written with: the lowest that holds it.
    public var requiredFormatVersion: Int {
        if !leftOut.isEmpty || allEntries.contains(where: { $0.earlierState != nil || $0.extents != nil }) { return 4 }
        if team != nil || allEntries.contains(where: \.unsettled) { return 3 }
        return groups.isEmpty ? 1 : 2
    }

    public var bundleIdentifier: BundleIdentifier
    /// The bundle directory's name when the backup was taken (not backed up).
    public var bundleName: String
    /// `CFBundleVersion` when the backup was taken.
    public var version: String
    /// `CFBundleShortVersionString`, if the bundle had one.
    public var shortVersion: String?
    /// The host identifier of the root the backup was taken from.
    public var deviceIdentifier: String
    /// When the backup started (files modified at or after this instant
    /// are read again by the next backup, whatever their times say).
    public var creationTime: PlistDate
    /// The items, parents before children, in byte order of their paths.
    public var entries: [BackupEntry]
    /// Participant name → the bytes it gave (``AppDataParticipant/backupPayload(for:)``).
    public var participants: [String: [UInt8]]
    /// The app's groups' shared containers, minus `Library/Caches`: each
    /// group's items, paths relative to its container, as for ``entries``.
    public var groups: [AppGroupIdentifier: [BackupEntry]]
    /// The team that signed the app when the backup was taken; `nil` when
    /// it was unsigned. A restore into an app of another team is refused.
    public var team: TeamIdentifier?
    /// Files that never held still while they were read and had no earlier
    /// whole state (format version 4): named, not in the backup. A group's
    /// as `<group-id>:<path>`.
    public var leftOut: [String] = []

    /// Every file the backup could not take whole: the unsettled entries
    /// (kept as an earlier backup read them, or, before version 4, as last
    /// read) and the files left out.
    public var notWhole: [String] { allEntries.filter(\.unsettled).map(\.path) + leftOut }

    public init(bundleIdentifier: BundleIdentifier, bundleName: String, version: String, shortVersion: String?,
                deviceIdentifier: String, creationTime: PlistDate, entries: [BackupEntry], participants: [String: [UInt8]],
                groups: [AppGroupIdentifier: [BackupEntry]] = [:], team: TeamIdentifier? = nil) {
        self.team = team
        self.bundleIdentifier = bundleIdentifier
        self.bundleName = bundleName
        self.version = version
        self.shortVersion = shortVersion
        self.deviceIdentifier = deviceIdentifier
        self.creationTime = creationTime
        self.entries = entries
        self.participants = participants
        self.groups = groups
    }

    /// The home's entries, then each group's (in group order) with its
    /// path shown as `<group-id>:<path>`: for checks and their messages.
    public var allEntries: [BackupEntry] {
        var all = entries
        for (group, items) in groups.sorted(by: { $0.key < $1.key }) {
            for var e in items {
                e.path = group.rawValue + ":" + e.path
                all.append(e)
            }
        }
        return all
    }

    /// The regular files, the groups' included.
    public var fileCount: Int { allEntries.reduce(0) { if case .file = $1.kind { return $0 + 1 }; return $0 } }

    /// The bytes of all regular files, the groups' included.
    public var totalBytes: Int {
        allEntries.reduce(0) { if case .file(_, let size) = $1.kind { return $0 + size }; return $0 }
    }

    // MARK: Encoding

    /// The file's bytes: the envelope as a binary property list.
    public func encoded() throws(ContainersError) -> [UInt8] {
        var body: [PlistKey: PlistValue] = [
            "BundleIdentifier": .string(bundleIdentifier.rawValue),
            "BundleName": .string(bundleName),
            "CFBundleVersion": .string(version),
            "DeviceIdentifier": .string(deviceIdentifier),
            "CreationTime": .date(creationTime),
            "HashAlgorithm": .string(ContentHash.algorithm),
            "Entries": Self.encode(entries),
            "Participants": .dictionary(Dictionary(stringKeys: participants.mapValues { .data($0) })),
        ]
        if let s = shortVersion { body["CFBundleShortVersionString"] = .string(s) }
        if let team { body["TeamIdentifier"] = .string(team.rawValue) }
        if !leftOut.isEmpty { body["LeftOut"] = .array(leftOut.map { .string($0) }) }
        if !groups.isEmpty {
            body["Groups"] = .dictionary(Dictionary(uniqueKeysWithValues: groups.map { (PlistKey($0.key.rawValue), Self.encode($0.value)) }))
        }
        do {
            let inner = try PlistCodec.encode(.dictionary(body), format: .binary)
            let envelope: PlistValue = .dictionary([
                "FormatVersion": .integer(Int128(requiredFormatVersion)),
                "Manifest": .data(inner),
                "Checksum": .data(ContentHash(of: inner).bytes),
            ])
            return try PlistCodec.encode(envelope, format: .binary)
        } catch {
            throw .backupDamaged(path: "", reason: "cannot encode the manifest: \(error)")
        }
    }

    static func encode(_ entries: [BackupEntry]) -> PlistValue {
        var items: [PlistValue] = []
        items.reserveCapacity(entries.count)
        for e in entries {
            var d: [PlistKey: PlistValue] = ["Path": .string(e.path), "Mode": .integer(Int128(e.mode))]
            switch e.kind {
            case .directory:
                d["Type"] = .string("directory")
            case .file(let hash, let size):
                d["Type"] = .string("file")
                d["Hash"] = .data(hash.bytes)
                d["Size"] = .integer(Int128(size))
                d["ModificationTime"] = .integer(Int128(e.modificationTime))
                d["ChangeTime"] = .integer(Int128(e.changeTime))
                d["Inode"] = .integer(Int128(e.inode))
                if e.unsettled { d["Unsettled"] = .bool(true) }
                if let t = e.earlierState { d["StateOf"] = .date(t) }
                if let x = e.extents { d["Extents"] = .array(x.flatMap { [PlistValue.integer(Int128($0.offset)), .integer(Int128($0.length))] }) }
            case .symlink(let target):
                d["Type"] = .string("symlink")
                d["Target"] = .string(target)
            }
            items.append(.dictionary(d))
        }
        return .array(items)
    }

    // MARK: Decoding

    /// Reads a manifest file's bytes and checks everything that can be
    /// checked without the objects: the version, the checksum, the types,
    /// and that every path stays inside a home and outside what is never
    /// backed up.
    ///
    /// - Parameters:
    ///   - bytes: the file's contents.
    ///   - path: the file, for messages.
    /// - Throws: ``ContainersError/backupVersionTooNew(path:found:supported:)``,
    ///   ``ContainersError/backupDamaged(path:reason:)``.
    public init(decoding bytes: [UInt8], path: String) throws(ContainersError) {
        // Names in a manifest came from a backup or a snapshot: escaped (FileNames.escaped).
        func damaged(_ reason: String) -> ContainersError { .backupDamaged(path: path, reason: FileNames.escaped(reason)) }
        guard let envelope = try? PlistCodec.decode(bytes).dictionaryValue else {
            throw damaged("the manifest is not a property list dictionary")
        }
        let version = try checkedFormatVersion(in: envelope, supported: Self.formatVersion, tooNew: {
            .backupVersionTooNew(path: path, found: $0, supported: $1)
        }, damaged: damaged)
        guard case .data(let inner)? = envelope["Manifest"], case .data(let sum)? = envelope["Checksum"] else {
            throw damaged("the manifest or its checksum is missing")
        }
        guard ContentHash(bytes: sum) == ContentHash(of: inner) else { throw damaged("the manifest does not match its checksum") }
        guard let body = try? PlistCodec.decode(inner).dictionaryValue else { throw damaged("the manifest is not a dictionary") }

        func string(_ key: String) throws(ContainersError) -> String {
            guard case .string(let s)? = body[key] else { throw damaged("\(key) is missing") }
            return s
        }
        guard case .string(ContentHash.algorithm)? = body["HashAlgorithm"] else {
            throw damaged("HashAlgorithm is not \(ContentHash.algorithm)")
        }
        let idText = try string("BundleIdentifier")
        guard let id = try? BundleIdentifier(idText) else { throw damaged("'\(idText)' is not a valid bundle identifier") }
        let bundleName = try string("BundleName")
        guard AppBundle.isValidBundleName(bundleName) else { throw damaged("BundleName '\(bundleName)' is not valid") }
        guard case .date(let created)? = body["CreationTime"] else { throw damaged("CreationTime is missing") }
        guard case .array(let items)? = body["Entries"] else { throw damaged("Entries is missing") }
        guard case .dictionary(let parts)? = body["Participants"] else { throw damaged("Participants is missing") }
        var participants: [String: [UInt8]] = [:]
        for (name, value) in parts {
            guard case .data(let payload) = value else { throw damaged("the payload of \(name) is not data") }
            participants[name.string] = payload
        }

        let entries = try Self.decode(items, where: "", path: path, version: version) { Self.pathProblem($0, bundleName: bundleName) }
        var groups: [AppGroupIdentifier: [BackupEntry]] = [:]
        if let value = body["Groups"] {
            guard version >= 2, case .dictionary(let byGroup) = value else { throw damaged("Groups is not a dictionary of version 2") }
            for (name, list) in byGroup {
                guard let group = try? AppGroupIdentifier(name.string) else { throw damaged("'\(name)' is not a valid app group identifier") }
                guard case .array(let groupItems) = list else { throw damaged("the entries of \(name) are not an array") }
                groups[group] = try Self.decode(groupItems, where: name.string + ":", path: path, version: version, problem: Self.groupPathProblem)
            }
        }
        var leftOut: [String] = []
        if let value = body["LeftOut"] {
            guard version >= 4, case .array(let items) = value else { throw damaged("LeftOut is not an array of version 4") }
            for item in items {
                guard case .string(let p) = item, !p.isEmpty, p.utf8.count <= 4096, !p.contains("\0") else {
                    throw damaged("LeftOut holds something other than a path")
                }
                leftOut.append(p)
            }
        }
        var team: TeamIdentifier? = nil
        if let value = body["TeamIdentifier"] {
            guard version >= 3, case .string(let text) = value, let t = TeamIdentifier(text) else {
                throw damaged("TeamIdentifier is not a team identifier of version 3")
            }
            team = t
        }
        self.init(bundleIdentifier: id, bundleName: bundleName, version: try string("CFBundleVersion"),
                  shortVersion: { if case .string(let s)? = body["CFBundleShortVersionString"] { return s }; return nil }(),
                  deviceIdentifier: try string("DeviceIdentifier"), creationTime: created,
                  entries: entries, participants: participants, groups: groups, team: team)
        self.leftOut = leftOut
    }

    /// Decodes and checks one list of entries; `label` prefixes paths in
    /// messages (`group.x:` for a group's), `problem` says why a path cannot be there;
    /// `version` is the envelope's (`Unsettled` needs 3).
    static func decode(_ items: [PlistValue], where label: String, path: String, version: Int128,
                       problem: (String) -> String?) throws(ContainersError) -> [BackupEntry] {
        // Names in a manifest came from a backup or a snapshot: escaped (FileNames.escaped).
        func damaged(_ reason: String) -> ContainersError { .backupDamaged(path: path, reason: FileNames.escaped(reason)) }
        var entries: [BackupEntry] = []
        entries.reserveCapacity(items.count)
        // Paths compare by exact scalars (``PlistKey``): names that are
        // canonically equivalent are different files.
        var directories: Set<PlistKey> = [""]
        var seen: Set<PlistKey> = []
        for item in items {
            guard let d = item.dictionaryValue, case .string(let p)? = d["Path"] else { throw damaged("an entry has no Path") }
            func int(_ key: String, _ range: ClosedRange<Int128>) throws(ContainersError) -> Int128 {
                guard case .integer(let v)? = d[key], range.contains(v) else { throw damaged("\(p): \(key) is missing or out of range") }
                return v
            }
            if let reason = problem(p) { throw damaged("entry '\(label)\(p)' \(reason)") }
            guard seen.insert(PlistKey(p)).inserted else { throw damaged("entry '\(p)' appears twice") }
            guard directories.contains(PlistKey(Self.parent(p))) else { throw damaged("entry '\(p)' is not inside a directory listed before it") }
            let mode = UInt32(try int("Mode", 0...0o7777))
            switch d["Type"] {
            case .string("directory")?:
                directories.insert(PlistKey(p))
                entries.append(BackupEntry(path: p, kind: .directory, mode: mode))
            case .string("file")?:
                guard case .data(let h)? = d["Hash"], let hash = ContentHash(bytes: h) else { throw damaged("\(p): Hash is missing") }
                let size = Int(try int("Size", 0...Int128(Int.max)))
                let int64 = Int128(Int64.min)...Int128(Int64.max)
                var unsettled = false
                if let flag = d["Unsettled"] {
                    guard version >= 3, case .bool(let b) = flag else { throw damaged("\(p): Unsettled is not a boolean of version 3") }
                    unsettled = b
                }
                var earlier: PlistDate?
                if let t = d["StateOf"] {
                    guard version >= 4, unsettled, case .date(let date) = t else { throw damaged("\(p): StateOf is not the date of version 4 of an unsettled file") }
                    earlier = date
                }
                var extents: [FileExtent]?
                if let x = d["Extents"] {
                    guard version >= 4, case .array(let numbers) = x else { throw damaged("\(p): Extents is not an array of version 4") }
                    extents = try Self.decodeExtents(numbers, size: size) { damaged("\(p): Extents \($0)") }
                }
                entries.append(BackupEntry(path: p, kind: .file(hash: hash, size: size), mode: mode,
                                           modificationTime: Int64(try int("ModificationTime", int64)),
                                           changeTime: Int64(try int("ChangeTime", int64)),
                                           inode: UInt64(try int("Inode", 0...Int128(UInt64.max))), unsettled: unsettled,
                                           earlierState: earlier, extents: extents))
            case .string("symlink")?:
                guard case .string(let target)? = d["Target"], !target.isEmpty, !target.contains("\0") else {
                    throw damaged("\(p): Target is missing")
                }
                entries.append(BackupEntry(path: p, kind: .symlink(target: target), mode: mode))
            default:
                throw damaged("\(p): Type is not directory, file or symlink")
            }
        }
        return entries
    }

    /// A sparse file's extents: offset, length pairs, in order, not
    /// overlapping, each at least one byte, inside `size`.
    static func decodeExtents(_ numbers: [PlistValue], size: Int,
                              _ damaged: (String) -> ContainersError) throws(ContainersError) -> [FileExtent] {
        guard numbers.count % 2 == 0 else { throw damaged("does not hold offset, length pairs") }
        var extents: [FileExtent] = []
        extents.reserveCapacity(numbers.count / 2)
        var end = 0
        var i = 0
        while i < numbers.count {
            guard case .integer(let o) = numbers[i], case .integer(let l) = numbers[i + 1],
                  o >= Int128(end), l >= 1, o + l <= Int128(size) else {
                throw damaged("are not ranges in order inside the file's size")
            }
            extents.append(FileExtent(offset: Int(o), length: Int(l)))
            end = Int(o + l)
            i += 2
        }
        return extents
    }

    /// Why `path` cannot be an entry of a backup, or `nil` when it can: it
    /// must be relative, without `.`, `..` or empty components, and outside
    /// the bundle, `Library/Caches` and `tmp`, which are never backed up.
    /// (`Library/Keychains` is allowed: backups taken before it was left
    /// out hold it, and a restore skips it; see ``isRestored(_:)``.)
    static func pathProblem(_ path: String, bundleName: String) -> String? {
        if let problem = syntaxProblem(path, inside: "the home") { return problem }
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        if parts[0] == "tmp" || parts[0] == Substring(bundleName) || (parts.count > 1 && parts[0] == "Library" && parts[1] == "Caches") {
            return "is in a directory that is never backed up"
        }
        return nil
    }

    /// Why `path` cannot be an entry of a group container in a backup:
    /// the same path rules, and outside `Library/Caches` and the
    /// container's identity file.
    static func groupPathProblem(_ path: String) -> String? {
        if let problem = syntaxProblem(path, inside: "the group's container") { return problem }
        if isExcludedFromGroup(path) { return "is never backed up" }
        return nil
    }

    /// Why `path` is not a relative path without `.`, `..` or empty
    /// components (`nil` when it is one).
    static func syntaxProblem(_ path: String, inside place: String) -> String? {
        if path.isEmpty || path.utf8.count > 4096 || path.contains("\0") { return "is not a valid path" }
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        if parts.contains(where: { $0.isEmpty || $0 == "." || $0 == ".." || $0.utf8.count > 255 }) {
            return "is not a relative path inside \(place)"
        }
        return nil
    }

    /// Whether the entry `relativePath` of a group container is left out
    /// of backups: `Library/Caches`, and the identity file (a restore writes
    /// its own).
    static func isExcludedFromGroup(_ relativePath: String) -> Bool {
        relativePath == "Library/Caches" || relativePath.hasPrefix("Library/Caches/") || relativePath == GroupContainer.identityFileName
            || isPreferencesSpare(relativePath)
    }

    /// Whether `relativePath` is one of prefsd's spare inodes beside a
    /// domain file: `Library/Preferences/.<domain>.plist.spare` or
    /// `….spare.prev` (``ReplacementSpares``). A spare holds an earlier
    /// state of the domain, kept only to be written over by the next
    /// commit: never the app's data, and a value the app removed may still
    /// be in it. Backups leave spares out, and a restore does not write back
    /// one that a backup taken before holds.
    static func isPreferencesSpare(_ relativePath: String) -> Bool {
        let directory = "Library/Preferences/".utf8
        guard relativePath.utf8.starts(with: directory) else { return false }
        let name = relativePath.utf8.dropFirst(directory.count)
        return !name.contains(UInt8(ascii: "/")) && FilePreferenceStore.domainFile(ofSpare: String(Substring(name))) != nil
    }

    /// The directory part of a relative path (`""` for a top-level item).
    static func parent(_ path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "" }
        return String(path[..<slash])
    }

    /// Whether the entry `relativePath` of a home (and everything under it)
    /// is left out of backups: the bundle, `tmp`, `Library/Caches` and
    /// `Library/Keychains` (the app's prefsd credential, which a restore
    /// issues anew).
    static func isExcluded(_ relativePath: String, bundleName: String) -> Bool {
        relativePath == bundleName || relativePath == "tmp" || relativePath == "Library/Caches" || relativePath == "Library/Keychains"
            || isPreferencesSpare(relativePath)
    }

    /// Whether a restore writes the entry `relativePath` back: not what
    /// lies under `Library/Keychains`, which backups taken before it was
    /// left out may hold (an old credential must not come back).
    static func isRestored(_ relativePath: String) -> Bool {
        relativePath != "Library/Keychains" && !relativePath.hasPrefix("Library/Keychains/") && !isPreferencesSpare(relativePath)
    }
}
