import AppHomeSystem
import Glibc
import Testing
import TestSupport

/// The watcher reports the files of a watched directory that were created,
/// replaced, written or removed, once each per drain, and says whether
/// events wait; writers' locks and prefsd's spares are not reported.
@Suite struct DirectoryWatcherTests {
    static func touch(_ path: String) {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        #expect(fd >= 0)
        _ = "x".withCString { write(fd, $0, 1) }
        close(fd)
    }

    @Test func eventsWaitUntilDrainedAndBookkeepingIsNotReported() throws {
        let dir = ScratchDirectory.make("watcher")
        defer { ScratchDirectory.remove(dir) }
        let watcher = DirectoryWatcher()
        #expect(watcher.watch(dir))
        #expect(!watcher.hasPendingEvents)
        #expect(watcher.drain().isEmpty)

        // A lock, a spare and its `.prev` beside a domain: events, but not reported.
        for name in [".d.plist.lock", ".d.plist.spare"] { Self.touch(dir + "/" + name) }
        #expect(link(dir + "/.d.plist.spare", dir + "/.d.plist.spare.prev") == 0)
        #expect(watcher.hasPendingEvents, "inotify queued them")
        #expect(watcher.drain().isEmpty)
        #expect(!watcher.hasPendingEvents)

        // Files with contents are reported, and names that only look alike.
        let reported = ["d.plist", ".d.plist.Ab3dE6gH.tmp", ".lock", "d.plist.lock", ".d.plist.locks", ".d.plist.spare.previous"]
        for name in reported { Self.touch(dir + "/" + name) }
        #expect(rename(dir + "/.d.plist.spare", dir + "/d.plist") == 0)
        #expect(watcher.hasPendingEvents)
        let paths = watcher.drain()
        #expect(paths == reported.map { dir + "/" + $0 }, "\(paths)")
        #expect(!watcher.overflowed)
    }

    /// Once each by bytes: two names that are one `String` (two normal
    /// forms) are two files, and each is reported once however many events it had.
    @Test func eachFileIsReportedOnceByItsBytes() throws {
        let dir = ScratchDirectory.make("watcher")
        defer { ScratchDirectory.remove(dir) }
        let watcher = DirectoryWatcher()
        #expect(watcher.watch(dir))
        let names = ["caf\u{e9}.plist", "cafe\u{301}.plist"]
        for _ in 0..<3 { for name in names { Self.touch(dir + "/" + name) } }
        #expect(watcher.drain() == names.map { dir + "/" + $0 })
    }
}
