import Foundation
import Testing
import PropertyList

/// Files and trees placed by a hostile app or an unlucky user: nothing
/// blocks, nothing grows without bound, nothing outside is touched. Runs
/// with and without prefsd (`APPHOME_TEST_PREFSD=daemon`).
@Suite("hostile files and trees")
struct HostileFileTests {
    /// Makes `url` a FIFO (nothing ever writes to it).
    static func makeFIFO(_ url: URL) throws {
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try #require(mkfifo(url.path, 0o600) == 0)
    }

    /// `defaults` through the root still answers a plain request: a write and its read.
    static func expectStillAnswering(_ root: TempRoot, sourceLocation: SourceLocation = #_sourceLocation) throws {
        try root.succeed(["write", "com.example.ok", "alive", "-int", "1"], sourceLocation: sourceLocation)
        try root.expectOutput(["read", "com.example.ok", "alive"], "1\n", sourceLocation: sourceLocation)
    }

    @Test func readingADomainThatIsAFIFOFailsAtOnceNamingThePath() throws {
        let root = try TempRoot()
        try root.succeed(["write", "com.example.other", "k", "-int", "1"])
        let fifo = root.domainFile("com.example.fifo")
        try Self.makeFIFO(fifo)
        // A generous bound: the old code blocked in open() for ever.
        let read = try root.run(["read", "com.example.fifo"], timeout: 30)
        #expect(!read.signaled && read.status == 1, "\(read)")
        #expect(read.stderr.contains(fifo.path) && read.stderr.contains("is a FIFO, not a regular file"), "\(read)")
        let find = try root.run(["find", "zzz"], timeout: 30)
        #expect(!find.signaled, "\(find)")
        let write = try root.run(["write", fifo.path, "k", "-int", "1"], timeout: 30)
        #expect(!write.signaled && write.status == 1 && write.stderr.contains("is a FIFO"), "\(write)")
        var st = stat()
        #expect(lstat(fifo.path, &st) == 0 && st.st_mode & S_IFMT == S_IFIFO, "the FIFO is left as it was")
        try Self.expectStillAnswering(root)
    }

    @Test func aDomainLinkedToDevZeroIsRefusedWithoutReading() throws {
        let root = try TempRoot()
        try FileManager.default.createDirectory(at: root.preferences, withIntermediateDirectories: true)
        let file = root.domainFile("com.example.zero")
        try #require(symlink("/dev/zero", file.path) == 0)
        let read = try root.run(["read", "com.example.zero"], timeout: 30)
        #expect(!read.signaled && read.status == 1, "\(read)")
        #expect(read.stderr.contains(file.path) && read.stderr.contains("is a character device, not a regular file"), "\(read)")
        let write = try root.run(["write", "com.example.zero", "k", "-int", "1"], timeout: 30)
        #expect(write.status == 1 && write.stderr.contains("character device"), "\(write)")
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: file.path)) == "/dev/zero", "the link is left as it was")
        try Self.expectStillAnswering(root)
    }

    @Test func aDomainFileOverTheSizeLimitIsRefusedBeforeReading() throws {
        let root = try TempRoot()
        try FileManager.default.createDirectory(at: root.preferences, withIntermediateDirectories: true)
        let file = root.domainFile("com.example.huge")
        // Sparse: 64 MiB + 1 byte of size, no blocks on disk.
        #expect(FileManager.default.createFile(atPath: file.path, contents: nil))
        try #require(truncate(file.path, off_t(64 << 20) + 1) == 0)
        let read = try root.run(["read", "com.example.huge"], timeout: 30)
        #expect(read.status == 1 && read.stderr.contains(file.path)
                && read.stderr.contains("is 67108865 bytes, over the limit of 67108864 bytes"), "\(read)")
        try Self.expectStillAnswering(root)
    }

    func apphome(_ root: TempRoot, _ arguments: [String]) throws -> CommandResult {
        try CrashAndDoctorTests.apphome(root, arguments)
    }

    /// A directory outside the root with a file that must survive.
    static func important(_ root: TempRoot) throws -> URL {
        let important = root.work.appendingPathComponent("important")
        try FileManager.default.createDirectory(at: important, withIntermediateDirectories: true)
        try root.write("keep me", to: important.appendingPathComponent("precious.txt"))
        return important
    }

    @Test(arguments: ["tmp", "Library/Caches", "Library"])
    func cleanTmpAndPurgeCachesNeverFollowALinkedDirectoryAndDoctorReplacesIt(_ linked: String) throws {
        let root = try TempRoot()
        let v1 = InstalledAppTests.examples.appendingPathComponent("ScaryBugs-v1/ScaryBugs.app").path
        try #require(try apphome(root, ["install", v1]).status == 0)
        let data = try apphome(root, ["container", InstalledAppTests.bundleID, "data"]).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let important = try Self.important(root)
        if linked == "Library" {
            try FileManager.default.createDirectory(at: important.appendingPathComponent("Caches"), withIntermediateDirectories: true)
            try root.write("cached", to: important.appendingPathComponent("Caches/c.txt"))
        }
        let dir = data + "/" + linked
        try FileManager.default.removeItem(atPath: dir)
        try #require(symlink(linked == "Library" ? important.path : important.path, dir) == 0)

        let clean = try apphome(root, ["clean-tmp"])
        let purge = try apphome(root, ["purge-caches"])
        #expect(FileManager.default.fileExists(atPath: important.appendingPathComponent("precious.txt").path))
        if linked == "Library" {
            #expect(FileManager.default.fileExists(atPath: important.appendingPathComponent("Caches/c.txt").path))
        }
        let refused = linked == "tmp" ? clean : purge
        #expect(refused.status == 1 && refused.stderr.contains("symbolic link") && refused.stderr.contains("apphome doctor"), "\(refused)")

        let doctor = try apphome(root, ["doctor"])
        #expect(doctor.status == 0 && doctor.stdout.contains("is a symbolic link"), "\(doctor)")
        var st = stat()
        #expect(lstat(dir, &st) == 0 && st.st_mode & S_IFMT == S_IFDIR, "\(dir) is a real directory again")
        #expect(FileManager.default.fileExists(atPath: important.appendingPathComponent("precious.txt").path))
        #expect(try apphome(root, ["clean-tmp"]).status == 0)
        #expect(try apphome(root, ["purge-caches"]).status == 0)
        #expect(FileManager.default.fileExists(atPath: important.appendingPathComponent("precious.txt").path))
        try Self.expectStillAnswering(root)
    }

    @Test func uninstallRemovesALinkedDirectoryButNotItsTarget() throws {
        let root = try TempRoot()
        let v1 = InstalledAppTests.examples.appendingPathComponent("ScaryBugs-v1/ScaryBugs.app").path
        try #require(try apphome(root, ["install", v1]).status == 0)
        let data = try apphome(root, ["container", InstalledAppTests.bundleID, "data"]).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let important = try Self.important(root)
        try #require(symlink(important.path, data + "/Documents/elsewhere") == 0)
        let uninstall = try apphome(root, ["uninstall", InstalledAppTests.bundleID])
        #expect(uninstall.status == 0, "\(uninstall)")
        #expect(!FileManager.default.fileExists(atPath: data))
        #expect(FileManager.default.fileExists(atPath: important.appendingPathComponent("precious.txt").path))
    }
}

/// `apphome doctor` finds the temporary file of a `defaults` writer killed mid-write.
@Suite("doctor and preference temporary files")
struct PreferenceTemporaryFileEndToEndTests {
    @Test func doctorReportsAndRemovesAKilledWritersTemporaryFile() throws {
        let root = try TempRoot()
        try root.succeed(["write", "com.example.kept", "k", "-int", "1"])
        let temp = root.preferences.appendingPathComponent(".com.example.kept.plist.Ab3dE6gH.tmp")
        try Data(repeating: 0x41, count: 2 << 20).write(to: temp)
        let doctor = try CrashAndDoctorTests.apphome(root, ["doctor"])
        #expect(doctor.status == 0, "\(doctor)")
        #expect(doctor.stdout.contains("temporary file \(temp.path) left by an interrupted preference write"), "\(doctor)")
        #expect(!FileManager.default.fileExists(atPath: temp.path))
        try root.expectOutput(["read", "com.example.kept", "k"], "1\n")
        let again = try CrashAndDoctorTests.apphome(root, ["doctor"])
        #expect(!again.stdout.contains("temporary file"), "\(again)")
    }
}

/// Dates that are not a finite time, from a binary plist.
@Suite("non-finite dates")
struct NonFiniteDateTests {
    @Test(arguments: [Double.infinity, -Double.infinity, Double.nan])
    func importOfANonFiniteDateIsRefusedAndNothingWritten(_ seconds: Double) throws {
        let root = try TempRoot()
        try root.succeed(["write", "com.example.dates", "kept", "-int", "1"])
        let before = root.snapshot()
        let file = root.workFile("dates.plist")
        let value = PlistValue.dictionary(["ok": .integer(1), "when": .array([.date(PlistDate(secondsSinceReferenceDate: seconds))])])
        try Data(try PlistCodec.encode(value, format: .binary)).write(to: file)
        let result = try root.run(["import", "com.example.dates", file.path])
        #expect(result.status == 1, "\(result)")
        #expect(result.stderr.contains("the date at when.0 is") && result.stderr.contains("not a finite time"), "\(result)")
        root.expectUnchanged(since: before, after: "import of a date of \(seconds)")
        try root.expectOutput(["read", "com.example.dates", "kept"], "1\n")
    }
}
