#if canImport(Glibc)
import Glibc
#endif
import AppHomeSystem
import PropertyList

/// The one commit path of a domain's file: every writer (the embedded
/// ``FilePreferenceStore`` and prefsd's write queue) goes through
/// ``run(_:path:load:_:)``.
///
/// Under an exclusive `flock` on `.<file>.lock` beside the domain, it
/// removes temporary files of writers that died, loads the current
/// contents, lets the caller change them (applying its ``WritePolicy``
/// there), and, when they changed, replaces the file atomically and durably
/// (binary plist, 0600, `fsync`, `rename`, `fsync` of the directory), or
/// removes it when the domain became empty. A domain that cannot be read is
/// never overwritten; one that is being rewritten in place by a writer
/// that takes no lock (stock Foundation) is read again until it parses
/// (``loadSettled(_:_:_:)``).
public enum DomainCommit {
    /// What a commit found and left.
    public struct Outcome: Sendable {
        /// The contents before (empty for a domain that did not exist).
        public var old: [PlistKey: PlistValue]
        /// The contents after.
        public var new: [PlistKey: PlistValue]
        /// Whether the file was replaced or removed.
        public var written: Bool
        /// The file's status right after the write, taken under the lock
        /// (`nil` when it was removed or not written). A cache must record
        /// this one: a `stat` after the lock is released may already see
        /// the next writer's file.
        public var status: FileStatus? = nil
    }

    /// The lock every writer of the domain file at `path` holds:
    /// `.<file>.lock` beside it.
    public static func lockPath(of path: String) -> String {
        FileSystem.parentDirectory(path) + "/." + FileSystem.lastComponent(path) + ".lock"
    }

    /// Takes the lock of the domain file at `path` (``lockPath(of:)``),
    /// waiting for it. Its directory is made only when it is missing (the
    /// lock's `open` says so), so the common case costs no `stat` of it.
    public static func lock(_ path: String) throws(SystemError) -> FileLock {
        do { return try FileLock(path: lockPath(of: path)) } catch {
            guard error.errno == ENOENT else { throw error }
        }
        try FileSystem.makeDirectories(FileSystem.parentDirectory(path))
        return try FileLock(path: lockPath(of: path))
    }

    /// Locks, loads, changes, commits.
    ///
    /// - Parameters:
    ///   - domain: the domain (for messages).
    ///   - path: its file.
    ///   - load: reads the current contents (prefsd passes its cache, which
    ///     it checks against the file); the file by default.
    ///   - spares: where a long-running writer keeps the inodes its
    ///     replacements free, to write the next one into
    ///     (``ReplacementSpares``, prefsd's); a new temporary file each time
    ///     without.
    ///   - leftovers: asked under the lock whether the directory may hold
    ///     temporary files of dead writers of `path` to remove; always by
    ///     default (prefsd knows from inotify when none can have appeared).
    ///   - change: changes the contents; what it throws is rethrown and
    ///     nothing is written.
    /// - Returns: the outcome and what `change` returned.
    public static func run<T>(_ domain: Domain, path: String,
                              load: (Domain, String) throws(PreferencesError) -> [PlistKey: PlistValue]? = FilePreferenceStore.load,
                              spares: ReplacementSpares? = nil,
                              leftovers: (String) -> Bool = { _ in true },
                              _ change: (inout [PlistKey: PlistValue]) throws -> T) throws -> (outcome: Outcome, result: T) {
        let lock: FileLock
        do { lock = try Self.lock(path) } catch { throw PreferencesError.system(error) }
        defer { lock.unlock() }
        if leftovers(path) { FilePreferenceStore.removeStaleTemporaryFiles(for: path, spares: spares) }
        let old = try loadSettled(load, domain, path) ?? [:]
        var contents = old
        let result = try change(&contents)
        if contents == old { return (Outcome(old: old, new: contents, written: false), result) }
        // A date of inf or nan has no calendar form (XML, JSON and `read`
        // could never print it): refused in what this change sets.
        for (key, value) in contents where old[key] != value {
            if let (where_, seconds) = value.firstNonFiniteDate(at: key.string) {
                throw PreferencesError.encoding(domain, .malformed(format: "date", detail: "the date at \(where_) is \(seconds), not a finite time; only finite dates can be stored"))
            }
        }
        do {
            if contents.isEmpty {
                try FileSystem.removeFile(path)
            } else {
                let bytes: [UInt8]
                do { bytes = try PlistCodec.encode(.dictionary(contents), format: .binary) } catch {
                    throw PreferencesError.encoding(domain, error)
                }
                if let spares { try spares.replace(bytes, at: path) } else { try FileSystem.writeAtomically(bytes, to: path) }
            }
        } catch let error as SystemError {
            throw PreferencesError.system(error)
        }
        return (Outcome(old: old, new: contents, written: true, status: FileStatus.of(path)), result)
    }
}
