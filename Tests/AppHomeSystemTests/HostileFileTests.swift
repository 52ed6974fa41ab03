#if canImport(Glibc)
import Glibc
#endif
import AppHomeSystem
import Testing

/// The open-and-check reader and the descriptor-based tree walks, on files
/// and trees a hostile app could place.
@Suite("hostile files and trees, in process")
struct HostileSystemFileTests {
    static func write(_ text: String, _ path: String) throws {
        try FileSystem.writeAtomically(Array(text.utf8), to: path)
    }

    /// A name that is not UTF-8 (from a snapshot, an archive, an app) is
    /// removed like any other: read as text it would be "repaired" into a
    /// name that is not there, and the directory would stay.
    @Test func aTreeHoldingANameThatIsNotUTF8IsRemovedWhole() throws {
        let dir = SystemTests.scratch()
        defer { _ = system("rm -rf '\(dir)'") }
        try FileSystem.makeDirectories(dir + "/tree/sub")
        let name: [CChar] = Array((dir + "/tree/sub/bad").utf8CString.dropLast()) + [CChar(bitPattern: 0xFF), 0]
        let fd = open(name, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        try #require(fd >= 0)
        _ = Glibc.write(fd, "12345", 5)
        close(fd)
        #expect(try DirectoryTree.removeContents(of: dir + "/tree") == 5)
        #expect(try FileNames.rawEntries(dir + "/tree").isEmpty)
        try FileSystem.makeDirectories(dir + "/tree/sub")
        let again = open(name, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        try #require(again >= 0)
        close(again)
        try DirectoryTree.remove(dir + "/tree")
        #expect(!FileSystem.exists(dir + "/tree"))
    }

    @Test func aFIFOIsRefusedWithoutBlockingAndNamed() throws {
        let dir = SystemTests.scratch()
        defer { _ = system("rm -rf '\(dir)'") }
        let path = dir + "/com.ex.fifo.plist"
        try #require(mkfifo(path, 0o600) == 0)
        #expect(throws: SystemError("open", path: path, errno: EINVAL, detail: "is a FIFO, not a regular file")) {
            _ = try FileSystem.readFileIfPresent(path)
        }
    }

    @Test(arguments: [("/dev/zero", "a character device"), ("/dev/null", "a character device")])
    func aLinkToADeviceIsRefusedBeforeReading(_ device: String, _ kind: String) throws {
        let dir = SystemTests.scratch()
        defer { _ = system("rm -rf '\(dir)'") }
        let path = dir + "/com.ex.zero.plist"
        try #require(symlink(device, path) == 0)
        #expect(throws: SystemError("open", path: path, errno: EINVAL, detail: "is \(kind), not a regular file")) {
            _ = try FileSystem.readFileIfPresent(path)
        }
    }

    @Test func aLinkIsRefusedWhenLinksAreNotFollowed() throws {
        let dir = SystemTests.scratch()
        defer { _ = system("rm -rf '\(dir)'") }
        try Self.write("x", dir + "/real")
        try #require(symlink(dir + "/real", dir + "/link") == 0)
        #expect(try FileSystem.readRegularFile(dir + "/link", limit: 10, followLinks: true) == Array("x".utf8))
        #expect(throws: SystemError("open", path: dir + "/link", errno: ELOOP,
                                    detail: "is a symbolic link, which AppHome does not follow here")) {
            _ = try FileSystem.readRegularFile(dir + "/link", limit: 10, followLinks: false)
        }
    }

    @Test func aFileOverTheLimitIsRefusedAndOneAtTheLimitIsRead() throws {
        let dir = SystemTests.scratch()
        defer { _ = system("rm -rf '\(dir)'") }
        try Self.write("12345", dir + "/f")
        #expect(try FileSystem.readRegularFile(dir + "/f", limit: 5, followLinks: true) == Array("12345".utf8))
        #expect(throws: SystemError("read", path: dir + "/f", errno: EFBIG, detail: "is 5 bytes, over the limit of 4 bytes")) {
            _ = try FileSystem.readRegularFile(dir + "/f", limit: 4, followLinks: true)
        }
        #expect(try FileSystem.readRegularFile(dir + "/missing", limit: 4, followLinks: true) == nil)
    }

    @Test func emptyingALinkedDirectoryIsRefusedAndItsTargetKept() throws {
        let dir = SystemTests.scratch()
        defer { _ = system("rm -rf '\(dir)'") }
        try FileSystem.makeDirectories(dir + "/important/sub")
        try Self.write("keep", dir + "/important/sub/precious")
        try FileSystem.makeDirectories(dir + "/home")
        try #require(symlink(dir + "/important", dir + "/home/tmp") == 0)
        #expect(throws: SystemError("open", path: dir + "/home/tmp", errno: ELOOP,
                                    detail: "is a symbolic link, not a directory; AppHome does not follow it")) {
            try DirectoryTree.removeContents(of: dir + "/home/tmp")
        }
        // A link on the way (Library → elsewhere) is refused too, below the trusted base.
        try #require(symlink(dir + "/important", dir + "/home/Library") == 0)
        #expect(throws: SystemError("open", path: dir + "/home/Library", errno: ELOOP,
                                    detail: "is a symbolic link, not a directory; AppHome does not follow it")) {
            try DirectoryTree.removeContents(of: dir + "/home/Library/sub", below: dir)
        }
        #expect(try FileSystem.readFileIfPresent(dir + "/important/sub/precious") == Array("keep".utf8))
    }

    @Test func removingATreeRemovesLinksInsideButNeverTheirTargets() throws {
        let dir = SystemTests.scratch()
        defer { _ = system("rm -rf '\(dir)'") }
        try FileSystem.makeDirectories(dir + "/important")
        try Self.write("keep", dir + "/important/precious")
        try FileSystem.makeDirectories(dir + "/home/a/b")
        try Self.write("12345", dir + "/home/a/b/file")
        try #require(symlink(dir + "/important", dir + "/home/a/link") == 0)
        try #require(chmod(dir + "/home/a/b", 0o500) == 0)
        #expect(try DirectoryTree.fileBytes(dir + "/home") == 5)
        #expect(try DirectoryTree.removeContents(of: dir + "/home") == 5)
        #expect(try FileSystem.directoryEntries(dir + "/home") == [])
        try FileSystem.makeDirectories(dir + "/home/x")
        try #require(symlink(dir + "/important", dir + "/home/x/link") == 0)
        try DirectoryTree.remove(dir + "/home")
        #expect(!FileSystem.exists(dir + "/home"))
        #expect(try FileSystem.readFileIfPresent(dir + "/important/precious") == Array("keep".utf8))
    }
}
