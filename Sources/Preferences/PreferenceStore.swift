import AppHomeSystem
import PropertyList

/// Where preference domains are kept.
///
/// The contract, which every implementation passes in the shared contract
/// tests:
/// - ``read(_:scope:)`` returns `nil` for a domain that does not exist, and
///   never changes anything, even for a file it cannot read.
/// - ``commit(_:scope:options:_:)`` (and ``update(_:scope:_:)``) runs `change` on the current contents
///   under an exclusive lock and commits the result atomically: concurrent
///   updates of distinct keys all survive. If `change` throws, nothing is
///   written. An update that leaves the domain unchanged writes nothing; one
///   that leaves it empty removes the domain.
/// - Every update passes the store's ``WritePolicy`` (for prefsd, the
///   service's) before anything is written: a refused value throws
///   ``PreferencesError/policyViolation(_:)`` and changes nothing.
/// - A domain that cannot be read is never overwritten or removed.
public protocol PreferenceStore: Sendable {
    /// The stored contents of `domain`, or `nil` when it does not exist.
    func read(_ domain: Domain, scope: HostScope) throws(PreferencesError) -> [PlistKey: PlistValue]?

    /// Applies `change` to the contents of `domain` (empty when it does
    /// not exist), checks the result against the write policy, and commits
    /// it. Rethrows what `change` throws.
    ///
    /// - Returns: the policy's notes for the writer (warnings, forced values).
    func commit(_ domain: Domain, scope: HostScope, options: WriteOptions,
                _ change: (inout [PlistKey: PlistValue]) throws -> Void) throws -> [WriteNote]

    /// Names of the stored domains, sorted, without the global domain.
    func domainNames() throws(PreferencesError) -> [String]

    /// A human-readable location of the domain, for messages.
    func location(of domain: Domain, scope: HostScope) throws(PreferencesError) -> String

    /// The identifier of this machine used for ByHost domains.
    func hostIdentifier() throws(PreferencesError) -> String
}

extension PreferenceStore {
    public func read(_ domain: Domain) throws(PreferencesError) -> [PlistKey: PlistValue]? {
        try read(domain, scope: .anyHost)
    }

    /// ``commit(_:scope:options:_:)`` with the default options (no
    /// `force`), its notes left unread.
    public func update(_ domain: Domain, scope: HostScope, _ change: (inout [PlistKey: PlistValue]) throws -> Void) throws {
        _ = try commit(domain, scope: scope, options: WriteOptions(), change)
    }
}

/// The embedded store: domains as binary plists on disk, under the root.
///
/// Readers go straight to the file (a rename makes every replacement
/// atomic, so no lock is needed to read). Writers commit through
/// ``DomainCommit``, holding an `flock` on a lock file beside the domain
/// (`.<file>.lock`) for the whole read-modify-write; prefsd commits through
/// the same path, so the two modes never lose each other's updates.
public struct FilePreferenceStore: PreferenceStore {
    public let resolver: DomainResolver
    /// The rules every update must keep (a domain's settings schema).
    public let policy: (any WritePolicy)?

    public init(resolver: DomainResolver, policy: (any WritePolicy)? = nil) {
        self.resolver = resolver
        self.policy = policy
    }

    public init(root: String, policy: (any WritePolicy)? = nil) {
        self.init(resolver: DomainResolver(root: root), policy: policy)
    }

    public func location(of domain: Domain, scope: HostScope) throws(PreferencesError) -> String {
        try resolver.path(for: domain, scope: scope, hostIdentifier: hostIdentifier)
    }

    public func hostIdentifier() throws(PreferencesError) -> String {
        try HostIdentifier.loadOrCreate(root: resolver.root)
    }

    public func domainNames() throws(PreferencesError) -> [String] {
        try resolver.domainNames()
    }

    public func read(_ domain: Domain, scope: HostScope) throws(PreferencesError) -> [PlistKey: PlistValue]? {
        let path = try location(of: domain, scope: scope)
        return try Self.load(domain, path: path)
    }

    public static func load(_ domain: Domain, path: String) throws(PreferencesError) -> [PlistKey: PlistValue]? {
        let bytes: [UInt8]?
        do { bytes = try FileSystem.readFileIfPresent(path) } catch {
            throw .unreadableDomain(domain, path: path, reason: error.reason)
        }
        guard let bytes else { return nil }
        if bytes.isEmpty { throw .unreadableDomain(domain, path: path, reason: "the file is empty") }
        let value: PlistValue
        do { value = try PlistCodec.decode(bytes) } catch {
            throw .unreadableDomain(domain, path: path, reason: error.description)
        }
        guard case .dictionary(let dict) = value else { throw .notADictionary(domain, path: path) }
        return dict
    }

    /// Whether `name` (or a path) ends as what a writer leaves behind when it
    /// dies mid-write: a temporary (`.tmp`) or an unfinished `defaults
    /// apply` (`.pending`). ``removeStaleTemporaryFiles(for:spares:)``
    /// removes such files named after the domain.
    public static func endsLikeALeftover(_ name: String) -> Bool {
        name.hasSuffix(".tmp") || name.hasSuffix(".pending")
    }

    /// The domain file (`X.plist`) whose prefsd spare `name` is
    /// (`.X.plist.spare` or `.X.plist.spare.prev`), else `nil`.
    public static func domainFile(ofSpare name: String) -> String? {
        guard let file = ReplacementSpares.fileName(ofSpare: name), file.utf8.count > 6, file.hasSuffix(".plist") else { return nil }
        return file
    }

    /// Removes `.<name>.<random>.tmp` files that a writer killed mid-write
    /// left beside `path`. Only called with the domain's lock held: every
    /// writer creates its temporary file under that lock, so any such file
    /// seen now belongs to a writer that died. A `.<name>.spare` is
    /// removed only if no live writer holds it (``ReplacementSpares``); the
    /// one `spares` (the caller's) holds is not even looked at.
    public static func removeStaleTemporaryFiles(for path: String, spares: ReplacementSpares? = nil) {
        let dir = FileSystem.parentDirectory(path)
        let prefix = "." + FileSystem.lastComponent(path) + "."
        guard let names = try? FileSystem.directoryEntries(dir) else { return }
        // `.apply-<id>.pending`: a `defaults apply` that died before its
        // journal finished it (``DomainTransaction``); this write comes after.
        // By bytes: `String.hasPrefix` would take the files of a canonically
        // equivalent domain ("é" and "e" + U+0301) for this one's.
        for name in names where name.utf8.starts(with: prefix.utf8) && endsLikeALeftover(name) {
            try? FileSystem.removeFile(dir + "/" + name)
        }
        if spares?.holdsSpare(of: path) != true { ReplacementSpares.removeStale(of: path, among: names) }
    }

    public func commit(_ domain: Domain, scope: HostScope, options: WriteOptions,
                       _ change: (inout [PlistKey: PlistValue]) throws -> Void) throws -> [WriteNote] {
        let path = try location(of: domain, scope: scope)
        return try DomainCommit.run(domain, path: path) { contents throws -> [WriteNote] in
            let old = contents
            try change(&contents)
            return try policy?.check(domain, old: old, new: contents, options: options) ?? []
        }.result
    }
}

/// The identifier of this machine for ByHost domains: a random uppercase
/// UUID made on first use and kept in `<root>/Library/Preferences/ByHost/.HostIdentifier`.
///
/// Not `/etc/machine-id`, which cloned images share.
public enum HostIdentifier {
    public static func loadOrCreate(root: String) throws(PreferencesError) -> String {
        let dir = DomainResolver(root: root).byHostDirectory
        let path = dir + "/.HostIdentifier"
        do {
            if let bytes = try FileSystem.readFileIfPresent(path) {
                let text = String(decoding: bytes, as: UTF8.self).trimmingWhitespace()
                if isValid(text) { return text }
                throw PreferencesError.unreadableDomain(.named("HostIdentifier"), path: path, reason: "the host identifier is not a UUID")
            }
            try FileSystem.makeDirectories(dir)
            let lock = try FileLock(path: dir + "/.HostIdentifier.lock")
            defer { lock.unlock() }
            if let bytes = try FileSystem.readFileIfPresent(path) {
                return String(decoding: bytes, as: UTF8.self).trimmingWhitespace()
            }
            let id = Random.uuid()
            try FileSystem.writeAtomically(Array((id + "\n").utf8), to: path)
            return id
        } catch let error as SystemError {
            throw .system(error)
        } catch let error as PreferencesError {
            throw error
        } catch {
            throw .system(SystemError("host identifier", path: path, errno: 5))
        }
    }

    static func isValid(_ text: String) -> Bool {
        text.utf8.count == 36 && text.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x46) || $0 == 0x2D }
    }

}

extension String {
    func trimmingWhitespace() -> String {
        var s = Substring(self)
        while let f = s.first, f.isWhitespace { s.removeFirst() }
        while let l = s.last, l.isWhitespace { s.removeLast() }
        return String(s)
    }
}
