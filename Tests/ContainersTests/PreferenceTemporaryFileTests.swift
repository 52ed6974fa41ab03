import AppHomeSystem
import Foundation
import Testing
@testable import Containers
import ContainersTestSupport
import Preferences

/// `doctor` and the `.<domain>.plist.<random>.tmp` files of killed preference writers.
@Suite struct PreferenceTemporaryFileTests {
    /// Names of leftovers, and the domain file each belongs to as a
    /// temporary file and as a spare (`nil`: not one).
    @Test(arguments: [(".com.ex.a.plist.Ab3dE6gH.tmp", "com.ex.a.plist", nil), (".com.ex.a.plist.tmp", nil, nil),
                      ("com.ex.a.plist", nil, nil), (".registry.plist.x.y", nil, nil), (".a.b.plist.Q1.tmp", "a.b.plist", nil),
                      (".com.ex.a.plist.spare", nil, "com.ex.a.plist"), (".com.ex.a.plist.spare.prev", nil, "com.ex.a.plist"),
                      (".plist.spare", nil, nil), ("com.ex.a.plist.spare", nil, nil), (".com.ex.a.plist.spare.old", nil, nil),
                      (".com.ex.a.spare", nil, nil)] as [(String, String?, String?)])
    func leftoverNamesAreRecognised(_ name: String, _ temporaryOf: String?, _ spareOf: String?) {
        #expect(Doctor.domainFileOfTemporaryFile(name) == temporaryOf)
        #expect(FilePreferenceStore.domainFile(ofSpare: name) == spareOf)
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

    /// A dead prefsd's spares (`.<domain>.plist.spare`, whose `flock` is
    /// free, and a `.spare.prev`) hold an earlier state of the domain: doctor
    /// removes them. A spare a live prefsd holds, and any spare of a domain
    /// whose lock a writer holds, is left alone.
    @Test func doctorRemovesADeadPrefsdsSparesButNotALiveOnes() throws {
        let f = try MaintenanceTests.Fixture(sizes: [:])
        let home = f.homes["A"]!
        let rootPrefs = f.s.root + "/Library/Preferences"
        try FileSystem.makeDirectories(rootPrefs)
        let dead = [rootPrefs + "/.com.ex.dead.plist.spare", rootPrefs + "/.com.ex.dead.plist.spare.prev",
                    home.preferences + "/.com.example.A.plist.spare"]
        for path in dead { try f.s.write("removed-value", to: path) }
        let held = rootPrefs + "/.com.ex.held.plist.spare"
        try f.s.write("a live prefsd's", to: held)
        let prefsdHolds = try FileLock(path: held)
        defer { prefsdHolds.unlock() }
        let busy = rootPrefs + "/.com.ex.busy.plist.spare.prev"
        try f.s.write("mid-replacement", to: busy)
        let writerLock = try FileLock(path: rootPrefs + "/.com.ex.busy.plist.lock")
        defer { writerLock.unlock() }
        let problems = dead.map { "prefsd's spare \($0) left by a prefsd that is gone" }.sorted()

        let dry = try f.manager.doctor(dryRun: true)
        #expect(dry.findings.filter { $0.outcome == .wouldRepair }.map(\.problem).sorted() == problems)
        for path in dead + [held, busy] { #expect(FileSystem.exists(path)) }

        let report = try f.manager.doctor()
        #expect(report.findings.filter { $0.outcome == .repaired }.map(\.problem).sorted() == problems)
        for path in dead { #expect(!FileSystem.exists(path)) }
        #expect(FileSystem.exists(held) && FileSystem.exists(busy))
    }
}
