#if canImport(Glibc)
import Glibc
#endif
import PropertyList

/// inotify on the directories that hold domains (prefsd's cache, `defaults
/// watch` without prefsd): reports the paths of entries created, replaced,
/// written or removed there.
public final class DirectoryWatcher {
    /// The inotify descriptor, for `poll` (negative when inotify is unavailable).
    public let fd: Int32
    private var directoryByWatch: [Int32: String] = [:]
    private var watchByDirectory: [String: Int32] = [:]
    /// Set when the kernel's queue overflowed: every cached entry is suspect.
    public private(set) var overflowed = false
    /// Where ``drain()`` reads the events (kept: a turn of prefsd drains once).
    private var buffer = [UInt8](repeating: 0, count: 65_536)

    public init() {
        fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
    }

    deinit { if fd >= 0 { close(fd) } }

    /// Whether `directory` is watched (it existed when ``watch(_:)`` ran).
    public func isWatching(_ directory: String) -> Bool { watchByDirectory[directory] != nil }

    /// Starts watching `directory`; false when it does not exist.
    @discardableResult
    public func watch(_ directory: String) -> Bool {
        if watchByDirectory[directory] != nil { return true }
        guard fd >= 0 else { return false }
        let mask = UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE | IN_DELETE | IN_DELETE_SELF | IN_MOVE_SELF)
        let wd = inotify_add_watch(fd, directory, mask)
        guard wd >= 0 else { return false }
        directoryByWatch[wd] = directory
        watchByDirectory[directory] = wd
        return true
    }

    /// Whether events are waiting to be drained, or it cannot tell (no
    /// inotify, or the query failed). inotify queues an event before the
    /// call that caused it returns, so `false` means that nothing changed
    /// in a watched directory since the last ``drain()``: one `ioctl`,
    /// where a `stat` of each file a caller keeps would walk its path.
    public var hasPendingEvents: Bool {
        guard fd >= 0 else { return true }
        var queued: Int32 = 0
        return ioctl(fd, UInt(FIONREAD), &queued) != 0 || queued != 0
    }

    /// Whether `name` is a writer's bookkeeping beside a file, never a
    /// file with contents of its own: a lock (`.<name>.lock`) or prefsd's
    /// spare inode (`.<name>.spare`, `.<name>.spare.prev`). Their events
    /// are not reported: each commit of prefsd makes several.
    static func isBookkeeping(_ name: Slice<UnsafeRawBufferPointer>) -> Bool {
        guard name.first == UInt8(ascii: ".") else { return false }
        func ends(_ suffix: String) -> Bool { name.count > suffix.utf8.count && name.suffix(suffix.utf8.count).elementsEqual(suffix.utf8) }
        let spare = ReplacementSpares.spareSuffix
        return ends(".lock") || ends(spare) || ends(spare + ReplacementSpares.previousSuffix)
    }

    /// The paths touched since the last call (without duplicates, in
    /// order), but for writers' bookkeeping (``isBookkeeping(_:)``).
    public func drain() -> [String] {
        overflowed = false
        var paths: [String] = []
        // By bytes: two names that are canonically equivalent (one `String`)
        // are two files (`PlistKey` hashes and compares the bytes at once).
        var seen: Set<PlistKey> = []
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            var offset = 0
            buffer.withUnsafeBytes { raw in
                while offset + 16 <= n {
                    let wd = raw.loadUnaligned(fromByteOffset: offset, as: Int32.self)
                    let mask = raw.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self)
                    let len = Int(raw.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self))
                    let nameBytes = raw[(offset + 16)..<min(offset + 16 + len, n)].prefix { $0 != 0 }
                    offset += 16 + len
                    if mask & UInt32(IN_Q_OVERFLOW) != 0 { overflowed = true; continue }
                    guard let dir = directoryByWatch[wd] else { continue }
                    if mask & UInt32(IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF) != 0 {
                        // The directory went away: forget it, so that it is watched again when it comes back.
                        if mask & UInt32(IN_IGNORED) != 0 { directoryByWatch[wd] = nil; watchByDirectory[dir] = nil }
                        overflowed = true
                        continue
                    }
                    if Self.isBookkeeping(nameBytes) { continue }
                    let path = dir + "/" + String(decoding: nameBytes, as: UTF8.self)
                    if seen.insert(PlistKey(path)).inserted { paths.append(path) }
                }
            }
        }
        return paths
    }
}

