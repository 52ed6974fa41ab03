import AppHomeSystem
import Foundation
import Testing
@testable import Containers
import ContainersTestSupport

/// `doctor` and the `.<domain>.plist.<random>.tmp` files of killed preference writers.
@Suite struct PreferenceTemporaryFileTests {
    @Test(arguments: [(".com.ex.a.plist.Ab3dE6gH.tmp", "com.ex.a.plist"), (".com.ex.a.plist.tmp", nil),
                      ("com.ex.a.plist", nil), (".registry.plist.x.y", nil), (".a.b.plist.Q1.tmp", "a.b.plist")] as [(String, String?)])
    func temporaryFileNamesAreRecognised(_ name: String, _ file: String?) {
        #expect(Doctor.domainFileOfTemporaryFile(name) == file)
    }

    @Test func doctorRemovesADeadWritersTemporaryFilesButNotALiveOnes() throws {
        let f = try MaintenanceTests.Fixture(sizes: [:])
        let home = f.homes["A"]!
        let rootPrefs = f.s.root + "/Library/Preferences"
        try FileSystem.makeDirectories(rootPrefs)
        let dead = [rootPrefs + "/.com.ex.dead.plist.Ab3dE6gH.tmp", home.preferences + "/.com.example.A.plist.Zz9yX8wV.tmp"]
        for path in dead { try f.s.write(String(repeating: "x", count: 4096), to: path) }
        let live = rootPrefs + "/.com.ex.live.plist.Kk1Jj2Hh.tmp"
        try f.s.write("being written", to: live)
        let writerLock = try FileLock(path: rootPrefs + "/.com.ex.live.plist.lock")
        defer { writerLock.unlock() }

        let dry = try f.manager.doctor(dryRun: true)
        #expect(dry.findings.filter { $0.outcome == .wouldRepair }.map(\.problem).sorted()
                == dead.map { "temporary file \($0) left by an interrupted preference write" }.sorted())
        for path in dead + [live] { #expect(FileSystem.exists(path)) }

        let report = try f.manager.doctor()
        #expect(report.findings.filter { $0.outcome == .repaired }.map(\.problem).sorted()
                == dead.map { "temporary file \($0) left by an interrupted preference write" }.sorted())
        for path in dead { #expect(!FileSystem.exists(path)) }
        #expect(FileSystem.exists(live), "a writer holds that domain's lock: its file is left alone")
    }
}
