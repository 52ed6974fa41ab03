import AppHomeSystem
import Foundation
import Glibc
import Testing
import TestSupport

/// What prefsd keeps of a file is its value while the file is the same
/// version: a replacement, an in-place change or a removal is read again.
@Suite struct StampedFileCacheTests {
    struct Unreadable: Error {}

    final class Reads: @unchecked Sendable { var count = 0 }

    /// The file's text through `cache`, counting the reads.
    static func text(_ cache: StampedFileCache<String>, _ path: String, _ reads: Reads) throws -> String? {
        try cache.value(at: path) { () throws(SystemError) -> String? in
            reads.count += 1
            return try FileSystem.readFileIfPresent(path).map { String(decoding: $0, as: UTF8.self) }
        }
    }

    @Test func aFileIsReadAgainOnlyWhenItChanged() throws {
        try ScratchDirectory.with("stamped") { dir in
            let file = dir + "/registry.plist"
            let cache = StampedFileCache<String>()
            let reads = Reads()
            #expect(try Self.text(cache, file, reads) == nil, "no file: nothing")
            #expect(try Self.text(cache, file, reads) == nil)
            #expect(reads.count == 2, "a missing file is asked about every time")
            try FileSystem.writeAtomically(Array("one".utf8), to: file)
            #expect(try Self.text(cache, file, reads) == "one")
            #expect(try Self.text(cache, file, reads) == "one")
            #expect(try Self.text(cache, file, reads) == "one")
            #expect(reads.count == 3, "unchanged: kept")
            try FileSystem.writeAtomically(Array("two".utf8), to: file)
            #expect(try Self.text(cache, file, reads) == "two", "a replacement (a new inode) is read")
            // Changed in place, to another size: seen without a new inode.
            let fd = open(file, O_WRONLY | O_APPEND)
            #expect(fd >= 0)
            #expect(write(fd, "!", 1) == 1)
            close(fd)
            #expect(try Self.text(cache, file, reads) == "two!")
            #expect(unlink(file) == 0)
            #expect(try Self.text(cache, file, reads) == nil, "a removed file is not answered from memory")
            #expect(cache.count == 0)
        }
    }

    @Test func whatALoaderMakesOfAMissingFileIsKeptUntilTheFileAppears() throws {
        try ScratchDirectory.with("stamped") { dir in
            let file = dir + "/registry.plist"
            let cache = StampedFileCache<String>()
            let reads = Reads()
            func empty() -> String? {
                cache.value(at: file) { () -> String? in
                    reads.count += 1
                    return FileManager.default.contents(atPath: file).map { String(decoding: $0, as: UTF8.self) } ?? "empty"
                }
            }
            #expect(empty() == "empty")
            #expect(empty() == "empty")
            #expect(reads.count == 1, "the answer for a missing file is kept")
            try FileSystem.writeAtomically(Array("one".utf8), to: file)
            #expect(empty() == "one", "the file appeared: read")
            #expect(unlink(file) == 0)
            #expect(empty() == "empty", "and gone again: read")
            #expect(reads.count == 3)
        }
    }

    @Test func aFailedReadIsNotKept() throws {
        try ScratchDirectory.with("stamped") { dir in
            let file = dir + "/f"
            try FileSystem.writeAtomically(Array("x".utf8), to: file)
            let cache = StampedFileCache<String>()
            var calls = 0
            for _ in 0..<2 {
                #expect(throws: Unreadable.self) { try cache.value(at: file) { () throws(Unreadable) -> String? in calls += 1; throw Unreadable() } }
            }
            #expect(calls == 2)
            #expect(try cache.value(at: file) { () throws(Unreadable) -> String? in "read" } == "read")
            #expect(try cache.value(at: file) { () throws(Unreadable) -> String? in "not read again" } == "read")
        }
    }

    @Test func aLinkIsItsOwnVersionWhenLinksAreNotFollowed() throws {
        try ScratchDirectory.with("stamped") { dir in
            let file = dir + "/keys.plist", other = dir + "/other"
            try FileSystem.writeAtomically(Array("mine".utf8), to: file)
            try FileSystem.writeAtomically(Array("theirs".utf8), to: other)
            let cache = StampedFileCache<String>(followsLinks: false)
            #expect(try cache.value(at: file) { () throws(Unreadable) -> String? in "mine" } == "mine")
            // The file swapped for a link: a new version, which the loader (O_NOFOLLOW) refuses.
            #expect(unlink(file) == 0 && symlink(other, file) == 0)
            #expect(throws: Unreadable.self) { try cache.value(at: file) { () throws(Unreadable) -> String? in throw Unreadable() } }
        }
    }

    @Test func theTableIsBounded() throws {
        try ScratchDirectory.with("stamped") { dir in
            let cache = StampedFileCache<String>(limit: 4)
            for i in 0..<10 {
                let file = dir + "/f\(i)"
                try FileSystem.writeAtomically(Array("\(i)".utf8), to: file)
                #expect(try cache.value(at: file) { () throws(Unreadable) -> String? in "\(i)" } == "\(i)")
                #expect(cache.count <= 4)
            }
        }
    }
}
