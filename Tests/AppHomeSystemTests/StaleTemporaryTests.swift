import AppHomeSystem
import Foundation
import Glibc
import Testing
import TestSupport

/// A writer killed between creating its temporary and renaming it leaves
/// `.<name>.<random>.tmp`; the next write of that file removes it, and only
/// such leftovers of dead writers of that file.
@Suite struct StaleTemporaryTests {
    static func make(_ path: String, age: Int) {
        #expect(FileManager.default.createFile(atPath: path, contents: Data("half".utf8)))
        var times = [timespec(tv_sec: time(nil) - age, tv_nsec: 0), timespec(tv_sec: time(nil) - age, tv_nsec: 0)]
        #expect(utimensat(AT_FDCWD, path, &times, 0) == 0)
    }

    @Test func theNextWriteRemovesTheTemporariesOfDeadWritersOfThatFileOnly() throws {
        let dir = ScratchDirectory.make("stale-tmp")
        defer { ScratchDirectory.remove(dir) }
        let file = dir + "/prefs.plist"
        try FileSystem.writeAtomicallyKeepingMode(Array("one".utf8), to: file)
        let dead = [".prefs.plist.Ab3dE6gH.tmp", ".prefs.plist.00000000.tmp"]
        for name in dead { Self.make(dir + "/" + name, age: 60) }
        // Left alone: another file's, other names, one too new, one a live writer holds, a link.
        let kept = [".other.plist.Ab3dE6gH.tmp", ".prefs.plist.Ab3dE6g.tmp", ".prefs.plist.Ab3dE6gH.temp", "prefs.plist.Ab3dE6gH.tmp",
                    ".prefs.plist.Fresh123.tmp", ".prefs.plist.LiveLock.tmp"]
        for name in kept where name != ".prefs.plist.Fresh123.tmp" { Self.make(dir + "/" + name, age: 60) }
        Self.make(dir + "/.prefs.plist.Fresh123.tmp", age: 0)
        let live = open(dir + "/.prefs.plist.LiveLock.tmp", O_RDONLY)
        #expect(live >= 0 && flock(live, LOCK_EX) == 0)
        defer { close(live) }
        #expect(symlink(dir + "/prefs.plist", dir + "/.prefs.plist.LinkLink.tmp") == 0)

        try FileSystem.writeAtomicallyKeepingMode(Array("two".utf8), to: file)
        let after = Set(try FileManager.default.contentsOfDirectory(atPath: dir))
        #expect(after == Set(kept + ["prefs.plist", ".prefs.plist.LinkLink.tmp"]), "\(after.sorted())")
        #expect(try String(contentsOfFile: file, encoding: .utf8) == "two")
    }

    @Test func aTemporaryWhoseLockHolderWasKilledIsStale() throws {
        // A killed writer: its lock goes with it, so its temporary is found stale.
        let dir = ScratchDirectory.make("stale-tmp-child")
        defer { ScratchDirectory.remove(dir) }
        let temporary = dir + "/.f.plist.KilledXX.tmp"
        Self.make(temporary, age: 60)
        let pid = fork()
        if pid == 0 {
            let fd = open(temporary, O_RDONLY)
            _ = flock(fd, LOCK_EX)
            raise(SIGKILL)
            _exit(0)
        }
        var status: Int32 = 0
        _ = waitpid(pid, &status, 0)
        #expect(FileSystem.removeStaleTemporaries(of: dir + "/f.plist") == [".f.plist.KilledXX.tmp"])
    }
}
