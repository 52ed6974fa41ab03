#if canImport(Glibc)
import Glibc
#endif
import AppHomeSystem
import PropertyList

/// The values an administrator forces: one property list per domain in a
/// directory root controls (`<domain>.plist`, and `.GlobalPreferences.plist`
/// for keys forced in every domain), in any plist format.
///
/// They sit above every layer of the search list (``DefaultsLayer/managed``),
/// and ``ManagedWritePolicy`` refuses to change them in the user's files. A
/// file (or the directory) that is not owned by root, or that its group or
/// others can write, is not trusted: it is ignored and ``warn`` is told,
/// naming it. A file that cannot be read is ignored the same way. Nothing
/// is cached: every call reads the directory as it is now.
public struct ManagedPreferences: Sendable {
    /// The administrator's directory (`Configuration.managedDirectory`).
    public let directory: String
    /// Told of every file ignored, with a message naming it.
    public let warn: @Sendable (String) -> Void

    /// A forced value and the file that forces it.
    public struct ForcedValue: Sendable, Equatable {
        public var value: PlistValue
        public var file: String
    }

    public init(directory: String, warn: @escaping @Sendable (String) -> Void = { _ in }) {
        self.directory = FileSystem.trimmingTrailingSlashes(directory)
        self.warn = warn
    }

    /// The managed file of `domain`; `nil` for a domain given by path, which
    /// nothing manages.
    public func file(for domain: Domain) -> String? {
        switch domain {
        case .global: return directory + "/.GlobalPreferences.plist"
        case .named(let name): return directory + "/" + name + ".plist"
        case .file: return nil
        }
    }

    /// Every key forced in `domain` with its value and file: the global
    /// file's keys, then the domain's own, which win.
    public func forced(in domain: Domain) -> [PlistKey: ForcedValue] {
        guard let own = file(for: domain), directoryIsTrusted() else { return [:] }
        let global = file(for: .global)!
        var result = load(global, domain: .global).mapValues { ForcedValue(value: $0, file: global) }
        if own != global {
            result.merge(load(own, domain: domain).mapValues { ForcedValue(value: $0, file: own) }) { _, mine in mine }
        }
        return result
    }

    /// The forced values of `domain` (``forced(in:)`` without the files).
    public func forcedValues(in domain: Domain) -> [PlistKey: PlistValue] {
        forced(in: domain).mapValues(\.value)
    }

    /// The trusted contents of every managed file, by domain (for a
    /// service that tells subscribers what changed).
    public func all() -> [Domain: [PlistKey: PlistValue]] {
        guard directoryIsTrusted(), let names = try? FileSystem.directoryEntries(directory) else { return [:] }
        var result: [Domain: [PlistKey: PlistValue]] = [:]
        for name in names where name.hasSuffix(".plist") {
            let base = String(name.dropLast(6))
            let domain: Domain
            if name == ".GlobalPreferences.plist" { domain = .global } else {
                guard let d = try? Domain(argument: base), case .named = d else { continue }
                domain = d
            }
            let contents = load(directory + "/" + name, domain: domain)
            if !contents.isEmpty { result[domain] = contents }
        }
        return result
    }

    /// The values forced in `domain` by `files` (what ``all()`` returned):
    /// the global file's, then the domain's own.
    public static func forcedValues(in domain: Domain, of files: [Domain: [PlistKey: PlistValue]]) -> [PlistKey: PlistValue] {
        guard case .named = domain else { return domain == .global ? files[.global] ?? [:] : [:] }
        return (files[.global] ?? [:]).merging(files[domain] ?? [:]) { _, mine in mine }
    }

    /// Whether the directory may be trusted; a missing one holds nothing.
    private func directoryIsTrusted() -> Bool {
        let ownership: FileOwnership?
        do { ownership = try FileSystem.directoryOwnership(directory) } catch {
            warn("ignoring the managed preferences directory \(directory): \(error.reason)")
            return false
        }
        guard let ownership else { return false }
        if let why = Self.distrust(ownership) {
            warn("ignoring the managed preferences directory \(directory): \(why)")
            return false
        }
        return true
    }

    private func load(_ path: String, domain: Domain) -> [PlistKey: PlistValue] {
        let found: (bytes: [UInt8], ownership: FileOwnership)?
        do { found = try FileSystem.readFileWithOwnership(path) } catch {
            warn("ignoring managed preferences file \(path): \(error.errno == ELOOP ? "it is a symbolic link" : error.reason)")
            return [:]
        }
        guard let found else { return [:] }
        if let why = Self.distrust(found.ownership) {
            warn("ignoring managed preferences file \(path): \(why)")
            return [:]
        }
        let value: PlistValue
        do { value = try PlistCodec.decode(found.bytes) } catch {
            warn("ignoring managed preferences file \(path): \(error)")
            return [:]
        }
        guard case .dictionary(let contents) = value else {
            warn("ignoring managed preferences file \(path): the property list is not a dictionary")
            return [:]
        }
        return contents
    }

    /// Why a file with `ownership` is not trusted, or `nil` when it is.
    static func distrust(_ ownership: FileOwnership) -> String? {
        if ownership.owner != 0 { return "it is not owned by root (owner uid \(ownership.owner))" }
        if ownership.permissions & 0o022 != 0 { return "its group or others can write it" }
        return nil
    }
}

/// The write policy of the managed layer: a key an administrator forces
/// in a domain (``ManagedPreferences/forced(in:)``) cannot be set,
/// changed or removed there by any writer, `force` or not.
public struct ManagedWritePolicy: WritePolicy {
    public let managed: ManagedPreferences
    /// The forced keys read for one commit (``forOneCommit()``), else `nil`.
    private let memo: CommitMemo<Domain, [PlistKey: ManagedPreferences.ForcedValue]>?

    public init(_ managed: ManagedPreferences) {
        self.init(managed, memo: nil)
    }

    private init(_ managed: ManagedPreferences, memo: CommitMemo<Domain, [PlistKey: ManagedPreferences.ForcedValue]>?) {
        self.managed = managed
        self.memo = memo
    }

    public func forOneCommit() -> any WritePolicy { ManagedWritePolicy(managed, memo: CommitMemo()) }

    /// The message of a refused change, the same for every writer.
    public static func refusal(key: String, domain: Domain, file: String) -> String {
        "Key \(key) of domain \(domain) is managed by \(file) and cannot be changed.\nDefaults have not been changed."
    }

    public func check(_ domain: Domain, old: [PlistKey: PlistValue], new: [PlistKey: PlistValue],
                      options: WriteOptions) throws(PreferencesError) -> [WriteNote] {
        let forced = CommitMemo.value(in: memo, domain) { managed.forced(in: domain) }
        if forced.isEmpty { return [] }
        // Only the forced keys can be refused: each is looked at, not the
        // whole domain (a write to a large domain costs its own keys only).
        // Refused: a forced key the change sets, changes or removes, or one
        // of the options' checked keys that the new contents hold.
        var refused: [PlistKey] = []
        for (k, _) in forced where old[k] != new[k] || (new[k] != nil && options.checkedKeys.contains { PlistKey($0) == k }) {
            refused.append(k)
        }
        if let k = refused.min() {
            throw .policyViolation(Self.refusal(key: k.string, domain: domain, file: forced[k]!.file))
        }
        return []
    }
}
