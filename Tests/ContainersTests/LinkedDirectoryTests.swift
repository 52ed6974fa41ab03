import AppHomeSystem
import Foundation
import Testing
@testable import Containers
import ContainersTestSupport

/// A home whose `tmp`, `Library/Caches` or `Library` was replaced by a link
/// to somewhere outside: the maintenance verbs refuse it, doctor repairs it,
/// the target is never touched.
@Suite struct LinkedDirectoryTests {
    @Test(arguments: ["tmp", "Library/Caches", "Library"])
    func maintenanceRefusesALinkedDirectoryAndDoctorReplacesIt(_ linked: String) throws {
        let f = try MaintenanceTests.Fixture(sizes: [:])
        let home = f.homes["A"]!
        let important = f.s.path + "/important"
        try FileSystem.makeDirectories(important + "/Caches")
        try f.s.write("keep me", to: important + "/precious")
        try f.s.write("cached", to: important + "/Caches/c")
        let dir = home.path + "/" + linked
        try TreeOperations.remove(dir)
        try #require(symlink(important, dir) == 0)

        let cleaned = try f.manager.cleanTemporaryDirectories()
        let purged = try f.manager.purgeCaches(freeBytes: { _ throws(SystemError) in 0 })
        let refused = (linked == "tmp" ? cleaned : purged.results).filter(\.refusedLink)
        #expect(refused.map(\.owner.description) == ["com.example.A"])
        #expect(try FileSystem.readFileIfPresent(important + "/precious") == Array("keep me".utf8))
        #expect(try FileSystem.readFileIfPresent(important + "/Caches/c") == Array("cached".utf8))

        let dry = try f.manager.doctor(dryRun: true)
        #expect(dry.findings.contains { $0.problem.contains("\(dir) is a symbolic link") && $0.outcome == .wouldRepair })
        #expect(DirectoryTree.isSymbolicLink(dir), "a dry run changes nothing")
        let report = try f.manager.doctor()
        #expect(report.findings.contains { $0.problem == "com.example.A: its \(linked) \(dir) is a symbolic link, not a directory"
                                           && $0.outcome == .repaired }, "\(report.findings)")
        #expect(DirectoryTree.isDirectoryNotLink(dir))
        for standard in home.standardDirectories { #expect(DirectoryTree.isDirectoryNotLink(standard)) }
        #expect(try f.manager.cleanTemporaryDirectories().allSatisfy { !$0.refusedLink })
        #expect(try FileSystem.readFileIfPresent(important + "/precious") == Array("keep me".utf8))
        #expect(try FileSystem.readFileIfPresent(important + "/Caches/c") == Array("cached".utf8))
    }
}
