#if canImport(Glibc)
import Glibc
#endif
import AppHomeSystem
import TestSupport
import Testing

@Suite("system layer")
struct SystemTests {
    static func scratch() -> String { ScratchDirectory.make("apphome-system") }

    @Test func anInjectedRenameFailureLeavesTheOldFileAndNoTemporaryFile() throws {
        let dir = Self.scratch()
        defer { ScratchDirectory.remove(dir) }
        let path = dir + "/a.plist"
        try FileSystem.writeAtomically(Array("old".utf8), to: path)
        #expect(throws: SystemError("rename", path: path, errno: EXDEV)) {
            try SystemFaults.injecting({ call, _ in call == "rename" ? EXDEV : nil }) {
                try FileSystem.writeAtomically(Array("new".utf8), to: path)
            }
        }
        #expect(try FileSystem.readFileIfPresent(path) == Array("old".utf8))
        #expect(try FileSystem.directoryEntries(dir) == ["a.plist"])
    }

    @Test func anInjectedWriteFailureNamesTheTemporaryFileAndWritesNothing() throws {
        let dir = Self.scratch()
        defer { ScratchDirectory.remove(dir) }
        let path = dir + "/b.plist"
        var caught: SystemError?
        do {
            try SystemFaults.injecting({ call, _ in call == "write" ? ENOSPC : nil }) {
                try FileSystem.writeAtomically(Array("x".utf8), to: path)
            }
        } catch let e as SystemError { caught = e }
        #expect(caught?.operation == "write")
        #expect(caught?.errno == ENOSPC)
        #expect(try FileSystem.directoryEntries(dir).isEmpty)
    }

    @Test func afterAnInjectedFailureThrowsTheSameCallRunsForReal() throws {
        let dir = Self.scratch()
        defer { ScratchDirectory.remove(dir) }
        let path = dir + "/d"
        #expect(throws: SystemError.self) {
            try SystemFaults.injecting({ call, _ in call == "rename" ? EXDEV : nil }) {
                try FileSystem.writeAtomically([1], to: path)
            }
        }
        try FileSystem.writeAtomically([2], to: path)
        #expect(try FileSystem.readFileIfPresent(path) == [2])
    }

    @Test func aThreadRunningBesideAnInjectorMakesTheRealCalls() throws {
        let dir = Self.scratch()
        defer { ScratchDirectory.remove(dir) }
        let inside = dir + "/inside", beside = dir + "/beside"
        var besideWrote = false
        #expect(throws: SystemError("rename", path: inside, errno: EXDEV)) {
            try SystemFaults.injecting({ call, _ in call == "rename" ? EXDEV : nil }) {
                // A thread does not inherit the task's injector, though one is installed now.
                besideWrote = Self.onAnotherThread { (try? FileSystem.writeAtomically([3], to: beside)) != nil }
                try FileSystem.writeAtomically([4], to: inside)
            }
        }
        #expect(besideWrote)
        #expect(try FileSystem.readFileIfPresent(beside) == [3])
        #expect(try FileSystem.readFileIfPresent(inside) == nil)
    }

    /// Runs `body` on a new POSIX thread and waits for it.
    static func onAnotherThread(_ body: @escaping @Sendable () -> Bool) -> Bool {
        final class Box: @unchecked Sendable {
            let body: @Sendable () -> Bool
            var result = false
            init(_ body: @escaping @Sendable () -> Bool) { self.body = body }
        }
        let box = Box(body)
        var thread = pthread_t()
        let unmanaged = Unmanaged.passRetained(box)
        guard pthread_create(&thread, nil, { raw in
            let box = Unmanaged<Box>.fromOpaque(raw!).takeRetainedValue()
            box.result = box.body()
            return nil
        }, unmanaged.toOpaque()) == 0 else {
            unmanaged.release()
            return false
        }
        pthread_join(thread, nil)
        return box.result
    }

    @Test func withoutAnInjectorTheRealCallsRun() throws {
        let dir = Self.scratch()
        defer { ScratchDirectory.remove(dir) }
        try FileSystem.writeAtomically([1, 2, 3], to: dir + "/c")
        #expect(try FileSystem.readFileIfPresent(dir + "/c") == [1, 2, 3])
    }

    @Test(arguments: [([UInt8](), ""), ([0x00, 0xff, 0x1a], "00ff1a")])
    func hexRoundTrips(bytes: [UInt8], text: String) {
        #expect(Hex.encode(bytes) == text)
        #expect(Hex.decode(text) == bytes)
        #expect(Hex.decode(text.uppercased()) == bytes)
    }

    @Test(arguments: ["abc", "zz", "0g"])
    func hexRefusesOddLengthAndNonDigits(text: String) {
        #expect(Hex.decode(text) == nil)
    }

    @Test func fixedWidthDigitsPadAndCut() {
        #expect(Hex.digits(UInt32(0x2a), width: 8, uppercase: true) == "0000002A")
        #expect(Hex.digits(UInt64.max, width: 16) == "ffffffffffffffff")
    }

    @Test func uuidsAreVersionFourUpperCase() {
        let u = Random.uuid()
        #expect(u.count == 36)
        #expect(Array(u)[14] == "4")
        #expect(u == u.uppercased())
        #expect(Random.uuid() != u)
    }

    @Test(arguments: [("/a/b///", "/a/b"), ("/", "/"), ("//", "/"), ("a", "a")])
    func trailingSlashesAreTrimmed(path: String, expected: String) {
        #expect(Paths.trimmingTrailingSlashes(path) == expected)
    }

    @Test func aSingleComponentIsJudgedByItsBytes() {
        for name in ["a", "a.b", "...", "..\u{301}", "caf\u{e9}"] { #expect(FileNames.isSingleComponent(name), "\(name)") }
        for name in ["", ".", "..", "a/b", "/", "a/\u{301}b", "/\u{301}", "a\u{0}b"] { #expect(!FileNames.isSingleComponent(name), "\(name)") }
    }

    @Test(arguments: [("/a/b/c.plist", "/a/b", "c.plist"), ("/top", "/", "top"), ("bare", ".", "bare"),
                      ("dir/", "dir", ""), ("/a/\u{301}x/f", "/a/\u{301}x", "f"), ("/a/b\u{301}/\u{301}f", "/a/b\u{301}", "\u{301}f")])
    func pathsSplitAtTheirLastSlashByte(path: String, parent: String, last: String) {
        // "/\u{301}" is one Character: a search of Characters finds no "/" in it.
        #expect(FileSystem.parentDirectory(path) == parent)
        #expect(FileSystem.lastComponent(path) == last)
        #expect(Array(FileSystem.parentDirectory(path).utf8) == Array(parent.utf8), "the bytes, not an equal text")
    }

    @Test func cLibraryFunctionsAreFoundByNameAndCallable() {
        let getpid = CLibrary.function("getpid", as: (@convention(c) () -> pid_t).self)
        #expect(getpid?() == Glibc.getpid(), "the looked-up function is the C library's")
        #expect(CLibrary.function("renameat2", as: (@convention(c) (Int32, UnsafePointer<CChar>, Int32, UnsafePointer<CChar>, UInt32) -> Int32).self) != nil)
        #expect(CLibrary.function("apphome_no_such_function", as: (@convention(c) () -> Int32).self) == nil)
    }

    @Test func theDefaultRootFollowsAppHomeRootThenXDGThenHome() {
        #expect(Paths.defaultRoot(apphomeRoot: "/r", xdgDataHome: "/x", home: "/h") == "/r")
        #expect(Paths.defaultRoot(apphomeRoot: "", xdgDataHome: "/x", home: "/h") == "/x/apphome")
        #expect(Paths.defaultRoot(apphomeRoot: nil, xdgDataHome: "relative", home: "/h") == "/h/.local/share/apphome")
        #expect(Paths.defaultRoot(apphomeRoot: nil, xdgDataHome: nil, home: nil) == nil)
    }
}
