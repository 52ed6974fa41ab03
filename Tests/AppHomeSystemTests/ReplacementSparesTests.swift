import AppHomeSystem
import Foundation
import Glibc
import Testing
import TestSupport

/// prefsd's replacements re-use the inode the previous one freed, without
/// ever letting a reader see a file change under it.
@Suite struct ReplacementSparesTests {
    static func inode(_ path: String) -> UInt64? {
        var st = stat()
        return lstat(path, &st) == 0 ? UInt64(st.st_ino) : nil
    }

    static func text(_ path: String) throws -> String? {
        try FileSystem.readFileIfPresent(path).map { String(decoding: $0, as: UTF8.self) }
    }

    /// Reads all of `fd` from its start.
    static func contents(of fd: Int32) -> String {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let n = pread(fd, &buffer, buffer.count, 0)
        return String(decoding: buffer.prefix(max(0, n)), as: UTF8.self)
    }

    /// Runs `body` with a scratch directory, a domain file in it (not made)
    /// and that file's spare's name.
    static func inScratch(_ body: (_ dir: String, _ file: String, _ spare: String) throws -> Void) throws {
        try ScratchDirectory.with("spares") { dir in
            let file = dir + "/com.example.plist"
            try body(dir, file, ReplacementSpares.spareName(of: file))
        }
    }

    @Test func replacementsAlternateBetweenTwoInodes() throws {
        try Self.inScratch { dir, file, spare in
            let spares = ReplacementSpares()
            try spares.replace(Array("first, a longer text".utf8), at: file)
            #expect(try Self.text(file) == "first, a longer text")
            #expect(!FileSystem.exists(spare), "nothing was replaced: no spare yet")
            let first = try #require(Self.inode(file))
            try spares.replace(Array("second".utf8), at: file)
            #expect(try Self.text(file) == "second")
            #expect(Self.inode(spare) == first, "the replaced inode is kept as the spare")
            let second = try #require(Self.inode(file))
            try spares.replace(Array("third!".utf8), at: file)
            #expect(try Self.text(file) == "third!", "written into the spare and cut to length")
            #expect(Self.inode(file) == first)
            #expect(Self.inode(spare) == second)
            #expect(spares.reused == 1)
            try spares.replace(Array("4".utf8), at: file)
            #expect(try Self.text(file) == "4")
            #expect(spares.reused == 2)
            var st = stat()
            #expect(lstat(file, &st) == 0 && st.st_mode & 0o7777 == 0o600 && st.st_nlink == 1)
            #expect(lstat(spare, &st) == 0 && st.st_nlink == 1)
            #expect(!FileSystem.exists(spare + ".prev"))
            let names = try FileSystem.directoryEntries(dir).filter { $0.hasSuffix(".tmp") }
            #expect(names.isEmpty)
        }
    }

    @Test func aReplacementSwapsTheSpareAndTheFileInOneCall() throws {
        try Self.inScratch { dir, file, spare in
            let spares = ReplacementSpares()
            try spares.replace(Array("one".utf8), at: file)
            #expect(spares.exchanged == 0, "nothing to swap with yet")
            try spares.replace(Array("two".utf8), at: file)
            try spares.replace(Array("three".utf8), at: file)
            #expect(spares.exchanges && spares.exchanged == 2)
            #expect(try Self.text(file) == "three")
            #expect(try Self.text(spare) == "two", "the replaced file is the spare, whole")
            #expect(!FileSystem.exists(spare + ".prev"), "no link on the way")
        }
    }

    @Test func whereNamesCannotBeSwappedTheFileIsLinkedAndRenamed() throws {
        try Self.inScratch { dir, file, spare in
            let spares = ReplacementSpares()
            try spares.replace(Array("one".utf8), at: file)
            let first = try #require(Self.inode(file))
            // An old kernel or C library, or a file system without RENAME_EXCHANGE.
            try SystemFaults.injecting({ call, _ in call == "exchange" ? EINVAL : nil }) {
                try spares.replace(Array("two".utf8), at: file)
            }
            #expect(!spares.exchanges && spares.exchanged == 0)
            #expect(try Self.text(file) == "two")
            #expect(Self.inode(spare) == first, "the replaced inode is still kept as the spare")
            try spares.replace(Array("three".utf8), at: file)
            #expect(try Self.text(file) == "three")
            #expect(spares.reused == 1 && spares.exchanged == 0, "the spare is written, without swapping")
            #expect(!FileSystem.exists(spare + ".prev"))
        }
    }

    @Test func aDirectoryInTheFilesPlaceIsNotMovedAside() throws {
        try Self.inScratch { dir, file, spare in
            let spares = ReplacementSpares()
            try spares.replace(Array("one".utf8), at: file)
            try spares.replace(Array("two".utf8), at: file)
            #expect(unlink(file) == 0 && mkdir(file, 0o700) == 0 && mkdir(file + "/inside", 0o700) == 0)
            #expect(throws: SystemError.self) { try spares.replace(Array("three".utf8), at: file) }
            #expect(FileSystem.isDirectory(file + "/inside"), "the directory stays where it was")
            #expect(!FileSystem.exists(spare) && !FileSystem.exists(spare + ".prev"))
        }
    }

    @Test func aSpareSomeoneStillReadsIsNotWritten() throws {
        try Self.inScratch { dir, file, spare in
            let spares = ReplacementSpares()
            try spares.replace(Array("zero".utf8), at: file)
            try spares.replace(Array("one".utf8), at: file)
            // A reader opens the file now and reads it after two more replacements.
            let reader = open(file, O_RDONLY)
            #expect(reader >= 0)
            defer { close(reader) }
            try spares.replace(Array("two".utf8), at: file)
            try spares.replace(Array("three".utf8), at: file)
            try spares.replace(Array("four".utf8), at: file)
            #expect(Self.contents(of: reader) == "one", "the reader's file was not re-used")
            #expect(spares.busy == 1)
            #expect(try Self.text(file) == "four")
        }
    }

    @Test func aSpareThatIsNoLongerOursIsNotWritten() throws {
        try Self.inScratch { dir, file, spare in
            let other = dir + "/other"
            try FileSystem.writeAtomically(Array("someone else's".utf8), to: other)
            let spares = ReplacementSpares()
            try spares.replace(Array("a".utf8), at: file)
            try spares.replace(Array("b".utf8), at: file)
            // The spare's name made a link to another file (removed as stale), then a hard link.
            #expect(unlink(spare) == 0 && symlink(other, spare) == 0)
            try spares.replace(Array("c".utf8), at: file)
            #expect(try Self.text(file) == "c")
            #expect(try Self.text(other) == "someone else's", "a link in the spare's place is not followed")
            try spares.replace(Array("d".utf8), at: file)
            #expect(unlink(spare) == 0 && link(other, spare) == 0)
            try spares.replace(Array("e".utf8), at: file)
            #expect(try Self.text(file) == "e")
            #expect(try Self.text(other) == "someone else's", "a file of two links is not written")
        }
    }

    @Test func aFailedWriteLeavesTheFileAsItWas() throws {
        try Self.inScratch { dir, file, spare in
            let spares = ReplacementSpares()
            try spares.replace(Array("kept".utf8), at: file)
            try spares.replace(Array("kept 2".utf8), at: file)
            for call in ["write", "fsync", "rename"] {
                #expect(throws: SystemError.self) {
                    try SystemFaults.injecting({ c, _ in c == call ? ENOSPC : nil }) {
                        try spares.replace(Array("lost".utf8), at: file)
                    }
                }
                #expect(try Self.text(file) == "kept 2", "a failed \(call) changes nothing")
            }
            try spares.replace(Array("after".utf8), at: file)
            #expect(try Self.text(file) == "after")
        }
    }

    @Test func whereLeasesAreRefusedEveryReplacementIsANewFile() throws {
        try Self.inScratch { dir, file, spare in
            let spares = ReplacementSpares()
            try spares.replace(Array("a".utf8), at: file)
            try spares.replace(Array("b".utf8), at: file)
            #expect(FileSystem.exists(spare))
            // NFS, or fs.leases-enable = 0: nobody can tell whether a spare is unused.
            try SystemFaults.injecting({ call, _ in call == "lease" ? EINVAL : nil }) {
                try spares.replace(Array("c".utf8), at: file)
            }
            #expect(!spares.leasesWork)
            #expect(try Self.text(file) == "c")
            #expect(!FileSystem.exists(spare), "the spare is given up")
            let before = try #require(Self.inode(file))
            try spares.replace(Array("d".utf8), at: file)
            #expect(try Self.text(file) == "d")
            #expect(Self.inode(file) != before, "a new file, as without spares")
            #expect(!FileSystem.exists(spare))
            #expect(spares.count == 0 && spares.reused == 0)
        }
    }

    @Test func onlyADeadWritersSpareIsStale() throws {
        try Self.inScratch { dir, file, spare in
            var spares: ReplacementSpares? = ReplacementSpares()
            try spares?.replace(Array("a".utf8), at: file)
            try spares?.replace(Array("b".utf8), at: file)
            #expect(ReplacementSpares.removeStale(of: file, among: try FileSystem.directoryEntries(dir)).isEmpty, "a live writer's spare is kept")
            #expect(FileSystem.exists(spare))
            try FileSystem.writeAtomically(Array("x".utf8), to: spare + ".prev")
            spares = nil
            #expect(ReplacementSpares.removeStale(of: file, among: try FileSystem.directoryEntries(dir)) == [spare + ".prev", spare])
            #expect(!FileSystem.exists(spare) && !FileSystem.exists(spare + ".prev"))
            #expect(try Self.text(file) == "b")
        }
    }
}
