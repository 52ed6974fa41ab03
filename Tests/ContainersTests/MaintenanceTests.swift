import AppHomeSystem
import Foundation
import Testing
@testable import Containers
import ContainersTestSupport
import Preferences
import PropertyList

/// `purge-caches`, `clean-tmp`, and the run lock that protects a running app.
@Suite struct MaintenanceTests {
    /// Free space that grows by what the purge removes.
    final class FakeDisk: @unchecked Sendable {
        var free: UInt64
        init(free: UInt64) { self.free = free }
    }

    struct Fixture {
        let s = Scratch()
        let manager: ContainerManager
        var homes: [String: ApplicationHome] = [:]

        /// Apps A, B and C whose caches hold `sizes` bytes, last modified
        /// at `ages` (seconds since 1970): B oldest, then C, then A.
        init(sizes: [String: Int] = ["A": 100, "B": 200, "C": 400]) throws {
            manager = ContainerManager(root: s.root)
            let ages = ["A": 3_000_000, "B": 1_000_000, "C": 2_000_000]
            for name in ["A", "B", "C"] {
                let id = "com.example." + name
                let home = try manager.install(try AppBundle(path: s.makeBundle(name, name: name + ".app", info: Scratch.info(id: id)))).home
                homes[name] = home
                guard let size = sizes[name], size > 0 else { continue }
                let file = home.caches + "/sub/blob"
                try s.write(String(repeating: "x", count: size), to: file)
                for path in [file, home.caches + "/sub"] {
                    var times = [timespec(tv_sec: ages[name]!, tv_nsec: 0), timespec(tv_sec: ages[name]!, tv_nsec: 0)]
                    utimensat(AT_FDCWD, path, &times, 0)
                }
            }
        }

        func purge(target: UInt64?, disk: FakeDisk) throws -> PurgeReport {
            try manager.purgeCaches(targetFree: target, freeBytes: { _ throws(SystemError) in disk.free })
        }
    }

    static func ids(_ results: [CleanupResult]) -> [String] { results.map(\.owner.description) }

    @Test(arguments: [
        // target, free before, apps purged in order
        (UInt64?.none, UInt64(0), ["com.example.B", "com.example.C", "com.example.A"]),
        (UInt64(1_150), UInt64(1_000), ["com.example.B"]),
        (UInt64(1_200), UInt64(1_000), ["com.example.B"]),
        (UInt64(1_201), UInt64(1_000), ["com.example.B", "com.example.C"]),
        (UInt64(1_000), UInt64(1_000), []),
    ] as [(UInt64?, UInt64, [String])])
    func purgeEmptiesTheOldestCachesUntilTheTargetIsFree(_ target: UInt64?, _ free: UInt64, _ purged: [String]) throws {
        let f = try Fixture()
        let disk = FakeDisk(free: free)
        var sizes = ["com.example.A": 100, "com.example.B": 200, "com.example.C": 400]
        let report = try f.manager.purgeCaches(targetFree: target, freeBytes: { _ throws(SystemError) in
            // The fake disk gains the bytes of every cache found empty.
            for (id, _) in sizes {
                let name = String(id.dropFirst("com.example.".count))
                if (try? FileSystem.directoryEntries(f.homes[name]!.caches))?.isEmpty == true { disk.free += UInt64(sizes[id]!); sizes[id] = 0 }
            }
            return disk.free
        })
        #expect(Self.ids(report.results) == purged)
        #expect(report.results.map(\.bytesFreed) == purged.map { ["com.example.A": 100, "com.example.B": 200, "com.example.C": 400][$0]! })
        #expect(report.targetReached == (target.map { report.freeAfter >= $0 } ?? true))
        for name in ["A", "B", "C"] {
            let emptied = purged.contains("com.example." + name)
            #expect(f.s.entries(f.homes[name]!.caches).isEmpty == emptied)
            #expect(FileSystem_isDirectory(f.homes[name]!.caches), "Caches itself stays")
        }
    }

    @Test func appsWithEmptyCachesAreLeftOut() throws {
        let f = try Fixture(sizes: ["A": 0, "B": 10, "C": 0])
        let report = try f.purge(target: nil, disk: FakeDisk(free: 5))
        #expect(Self.ids(report.results) == ["com.example.B"])
        #expect(report.freeBefore == 5 && report.freeAfter == 5)
    }

    @Test func aRunningAppsCachesAndTmpAreLeftAlone() throws {
        let f = try Fixture()
        let entryA = try f.manager.entry(for: try BundleIdentifier("com.example.A"))
        try f.s.write("scratch", to: f.homes["A"]!.tmp + "/t")
        try f.s.write("scratch!", to: f.homes["B"]!.tmp + "/dir/t")
        let running = try RunLock.shared(f.manager.layout.runLockPath(uuid: entryA.homeUUID))
        let purge = try f.purge(target: nil, disk: FakeDisk(free: 0))
        #expect(purge.results.map(\.skippedRunning) == [false, false, true])
        #expect(f.s.entries(f.homes["A"]!.caches) == ["sub"])
        let clean = try f.manager.cleanTemporaryDirectories()
        #expect(clean == [
            CleanupResult(owner: .app(try BundleIdentifier("com.example.A")), directory: f.homes["A"]!.tmp, bytesFreed: 0, skippedRunning: true),
            CleanupResult(owner: .app(try BundleIdentifier("com.example.B")), directory: f.homes["B"]!.tmp, bytesFreed: 8, skippedRunning: false),
            CleanupResult(owner: .app(try BundleIdentifier("com.example.C")), directory: f.homes["C"]!.tmp, bytesFreed: 0, skippedRunning: false),
        ])
        #expect(f.s.read(f.homes["A"]!.tmp + "/t") == "scratch")
        #expect(f.s.entries(f.homes["B"]!.tmp).isEmpty)
        running.unlock()
        #expect(try f.manager.cleanTemporaryDirectories().map(\.bytesFreed) == [7, 0, 0])
    }

    @Test func appGroupCachesArePurgedInAgeOrderUnlessAMemberRuns() throws {
        let s = Scratch()
        let manager = ContainerManager(root: s.root)
        var info = Scratch.info(id: "com.example.M")
        info["com.apple.security.application-groups"] = .array([.string("group.com.example.G")])
        let member = try manager.install(try AppBundle(path: s.makeBundle("M", name: "M.app", info: info)))
        let other = try manager.install(try AppBundle(path: s.makeBundle("O", name: "O.app", info: Scratch.info(id: "com.example.O"))))
        let group = manager.layout.groupContainer(uuid: try #require(try manager.registry.read().groups.values.first))
        func fill(_ caches: String, bytes: Int, age: Int) throws {
            try s.write(String(repeating: "x", count: bytes), to: caches + "/blob")
            var times = [timespec(tv_sec: age, tv_nsec: 0), timespec(tv_sec: age, tv_nsec: 0)]
            utimensat(AT_FDCWD, caches + "/blob", &times, 0)
        }
        try fill(group.caches, bytes: 50, age: 1_000_000)
        try fill(other.home.caches, bytes: 70, age: 2_000_000)
        try s.write("kept", to: group.preferences + "/group.com.example.G.plist")

        // While the member app runs, its group's caches stay.
        let running = try RunLock.shared(manager.layout.runLockPath(uuid: member.entry.homeUUID))
        let first = try manager.purgeCaches(targetFree: nil, freeBytes: { _ throws(SystemError) in 0 })
        #expect(first.results == [
            CleanupResult(owner: .group(try AppGroupIdentifier("group.com.example.G")), directory: group.caches, bytesFreed: 0, skippedRunning: true),
            CleanupResult(owner: .app(try BundleIdentifier("com.example.O")), directory: other.home.caches, bytesFreed: 70, skippedRunning: false),
        ])
        #expect(s.entries(group.caches) == ["blob"])
        running.unlock()

        let second = try manager.purgeCaches(targetFree: nil, freeBytes: { _ throws(SystemError) in 0 })
        #expect(Self.ids(second.results) == ["app group group.com.example.G"])
        #expect(second.results.map(\.bytesFreed) == [50])
        #expect(s.entries(group.caches) == [])
        #expect(s.read(group.preferences + "/group.com.example.G.plist") == "kept")
    }

    @Test func runHoldsTheHomesLockSharedWhileItsCommandRuns() throws {
        let f = try Fixture(sizes: [:])
        let id = try BundleIdentifier("com.example.A")
        let lock = f.manager.layout.runLockPath(uuid: try f.manager.entry(for: id).homeUUID)
        // flock(1) -n -x fails (status 1) while the lock is held shared (outside
        // the sandbox: the lock is under the root, which a sandbox does not show).
        let inside = try f.manager.run(id, command: ["/bin/sh", "-c", "flock -n -x \"$0\" true", lock], base: ["PATH": "/usr/bin:/bin"],
                                       options: RunOptions(sandbox: false))
        #expect(inside == .exited(1))
        let shared = try f.manager.run(id, command: ["/bin/sh", "-c", "flock -n -s \"$0\" true", lock], base: ["PATH": "/usr/bin:/bin"],
                                       options: RunOptions(sandbox: false))
        #expect(shared == .exited(0))
        #expect(try RunLock.exclusiveIfFree(lock) != nil, "released when the command ends")
    }

    @Test func availableBytesReadsTheFileSystem() throws {
        let s = Scratch()
        #expect(try ContainerManager.availableBytes(s.path) > 0)
        #expect(throws: SystemError("statvfs", path: s.path + "/none", errno: ENOENT)) { try ContainerManager.availableBytes(s.path + "/none") }
    }
}
