#if canImport(Glibc)
import Glibc
#endif
import AppHomeSystem
import Containers
import PropertyList
import SettingsBundle
import Synchronization

/// A file's identity as `stat` gives it: a cached reading of the file is
/// used only while the file still has the same one.
struct FileStamp: Equatable, Sendable {
    var device: UInt64
    var inode: UInt64
    var size: Int64
    var modified: timespec
    var changed: timespec

    /// The stamp of `path` (symbolic links followed), or `nil` when it cannot be read.
    static func of(_ path: String) -> FileStamp? {
        var st = stat()
        guard stat(path, &st) == 0 else { return nil }
        return FileStamp(device: UInt64(st.st_dev), inode: UInt64(st.st_ino), size: Int64(st.st_size), modified: st.st_mtim, changed: st.st_ctim)
    }

    static func == (a: FileStamp, b: FileStamp) -> Bool {
        a.device == b.device && a.inode == b.inode && a.size == b.size
            && a.modified.tv_sec == b.modified.tv_sec && a.modified.tv_nsec == b.modified.tv_nsec
            && a.changed.tv_sec == b.changed.tv_sec && a.changed.tv_nsec == b.changed.tv_nsec
    }

    /// Whether the file was modified (or its inode changed) at or after
    /// `start` (less the kernel's coarse clock's lag): it may have changed
    /// while it was being read, so its reading is not kept ("racy", as git
    /// calls an index entry that is as new as the index).
    func isRacy(since start: timespec) -> Bool {
        let limit = Self.nanoseconds(start) - 50_000_000
        return Self.nanoseconds(modified) >= limit || Self.nanoseconds(changed) >= limit
    }

    static func nanoseconds(_ t: timespec) -> Int64 { Int64(t.tv_sec) * 1_000_000_000 + Int64(t.tv_nsec) }

    static func now() -> timespec {
        var t = timespec()
        clock_gettime(CLOCK_REALTIME, &t)
        return t
    }
}

/// What a Settings.bundle declares on one idiom, read and parsed once: its
/// pages, the editable rows by key, the registered defaults, its `.lproj`
/// directories and a write validator built from the same pages.
public struct BundleSchema: Sendable {
    public let bundle: SettingsBundle
    public let idiom: Idiom
    /// The pages reached from Root, depth first (``SettingsBundle/pages(idiom:profile:schema:)``).
    public let pages: [Page]
    /// ``PageDocument/editableRows(_:idiom:)`` of ``pages``.
    public let editable: [String: Specifier]
    /// The registered defaults, title values included.
    public let defaults: [PlistKey: PlistValue]
    /// The `.lproj` directories, sorted.
    public let localizations: [String]
    /// Checks writes against the same pages.
    public let validator: WriteValidator
    /// The files whose identity the reading depends on (absolute paths).
    let sources: [String]

    /// Reads and parses `bundle` (no cache).
    public init(bundle: SettingsBundle, idiom: Idiom) {
        self.bundle = bundle
        self.idiom = idiom
        let walked = bundle.pagesAndFiles(idiom: idiom)
        pages = walked.pages
        editable = PageDocument.editableRows(pages, idiom: idiom)
        defaults = Registration.defaults(pages: pages, idiom: idiom, includeReadOnly: true)
        localizations = bundle.localizations
        validator = WriteValidator(pages: pages, pageFiles: walked.files, idiom: idiom)
        // The bundle directory (a page or an .lproj added or removed), every
        // page read and the directory it is in, and the directory a child
        // pane's file would be in (a page that does not exist yet).
        var sources = [bundle.path]
        func add(_ path: String) { if !sources.contains(path) { sources.append(path) } }
        for file in walked.files {
            add(bundle.path + "/" + file)
            add(FileSystem.parentDirectory(bundle.path + "/" + file))
        }
        for page in pages {
            for s in page.specifiers {
                if case .string(let child)? = s["File"], !child.hasPrefix("/"), !child.split(separator: "/").contains("..") {
                    add(FileSystem.parentDirectory(bundle.path + "/" + child))
                }
            }
        }
        for lproj in localizations { add(bundle.path + "/" + lproj) }
        self.sources = sources
    }

    /// Root's `ApplicationGroupContainerIdentifier` (``SettingsBundle/groupContainerIdentifier(idiom:)``).
    public var groupContainerIdentifier: String? {
        guard let root = pages.first, root.file.hasPrefix("Root"),
              case .string(let group)? = root.contents["ApplicationGroupContainerIdentifier"], !group.isEmpty else { return nil }
        return group
    }
}

/// The Settings app's readings of files, kept between requests: the app
/// registry, each Settings.bundle's ``BundleSchema`` and its strings
/// tables. Each is used only while every file it was read from has the
/// identity it had (``FileStamp``: device, inode, size, modification and
/// change times, checked with one `stat` per file on each use), so a
/// changed file is read again at the next request, never served stale.
public final class SettingsCache: Sendable {
    struct Entry<Value: Sendable>: Sendable {
        var value: Value
        var stamps: [(String, FileStamp?)]

        var isCurrent: Bool { stamps.allSatisfy { FileStamp.of($0.0) == $0.1 } }
    }

    struct State: Sendable {
        var registry: Entry<Registry>?
        var schemas: [String: Entry<BundleSchema>] = [:]
        var strings: [String: Entry<[String: String]>] = [:]
    }

    let state = Mutex(State())
    /// Bundles and tables kept at most (a root holds a few dozen apps).
    static let maximumEntries = 256

    public init() {}

    /// Stamps `paths` after a reading started at `start`; `nil` when one of
    /// them changed since (the reading is used once, not kept).
    static func stamps(_ paths: [String], since start: timespec) -> [(String, FileStamp?)]? {
        var out: [(String, FileStamp?)] = []
        for path in paths {
            let stamp = FileStamp.of(path)
            if let stamp, stamp.isRacy(since: start) { return nil }
            out.append((path, stamp))
        }
        return out
    }

    /// The app registry under `root`.
    public func registry(root: String) -> Registry {
        let path = ContainerLayout(root: root).registryPath
        if let entry = state.withLock({ $0.registry }), entry.stamps.first?.0 == path, entry.isCurrent { return entry.value }
        let start = FileStamp.now()
        let registry = ContainerRegistry.readOrEmpty(root: root)
        if let stamps = Self.stamps([path], since: start) {
            state.withLock { $0.registry = Entry(value: registry, stamps: stamps) }
        }
        return registry
    }

    /// The schema of `bundle` on `idiom`.
    public func schema(_ bundle: SettingsBundle, idiom: Idiom) -> BundleSchema {
        let key = bundle.path + "\0" + idiom.rawValue
        if let entry = state.withLock({ $0.schemas[key] }), entry.isCurrent { return entry.value }
        let start = FileStamp.now()
        let schema = BundleSchema(bundle: bundle, idiom: idiom)
        if let stamps = Self.stamps(schema.sources, since: start) {
            state.withLock { s in
                if s.schemas.count >= Self.maximumEntries { s.schemas = [:] }
                s.schemas[key] = Entry(value: schema, stamps: stamps)
            }
        }
        return schema
    }

    /// The strings of `table` in `lproj` of `bundle` on `idiom` (empty when there is none).
    public func strings(_ bundle: SettingsBundle, lproj: String, table: String, idiom: Idiom) -> [String: String] {
        let key = bundle.path + "\0" + lproj + "\0" + table + "\0" + idiom.rawValue
        if let entry = state.withLock({ $0.strings[key] }), entry.isCurrent { return entry.value }
        let start = FileStamp.now()
        let found = bundle.stringsTable(table, lproj: lproj, idiom: idiom)
        // The .lproj directory (a table added for the idiom) and the file read.
        var paths = [bundle.path + "/" + lproj]
        if let file = found.file { paths.append(bundle.path + "/" + file) }
        if let stamps = Self.stamps(paths, since: start) {
            state.withLock { s in
                if s.strings.count >= Self.maximumEntries { s.strings = [:] }
                s.strings[key] = Entry(value: found.strings, stamps: stamps)
            }
        }
        return found.strings
    }

    /// The validator of a bundle for ``SettingsWritePolicy`` (the one of its cached schema).
    public var validators: SettingsWritePolicy.ValidatorSource {
        { [self] bundle, idiom in schema(bundle, idiom: idiom).validator }
    }
}

/// The schemas one request uses, each taken from the ``SettingsCache`` once:
/// its files are `stat`ed once per request, not once per use (the row's
/// look-up, the domain, the write policy's validator).
public final class RequestSchemas: Sendable {
    let cache: SettingsCache
    let taken = Mutex<[String: BundleSchema]>([:])

    public init(cache: SettingsCache) {
        self.cache = cache
    }

    /// The schema of `bundle` on `idiom`, as the cache had it at its first use in this request.
    public func schema(_ bundle: SettingsBundle, idiom: Idiom) -> BundleSchema {
        let key = bundle.path + "\0" + idiom.rawValue
        return taken.withLock { taken in
            if let schema = taken[key] { return schema }
            let schema = cache.schema(bundle, idiom: idiom)
            taken[key] = schema
            return schema
        }
    }

    /// The validators of this request's schemas for ``SettingsWritePolicy``.
    public var validators: SettingsWritePolicy.ValidatorSource {
        { [self] bundle, idiom in schema(bundle, idiom: idiom).validator }
    }
}
