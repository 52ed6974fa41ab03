import AppHomeSystem
import Foundation
import Testing
@testable import Containers
import ContainersTestSupport
import PropertyList
import Preferences

/// `doctor` on damage a crash (or a person) can leave outside a journal.
@Suite struct DoctorTests {
    struct Fixture {
        let s = Scratch()
        let manager: ContainerManager
        let home: ApplicationHome
        var layout: ContainerLayout { manager.layout }

        init() throws {
            manager = ContainerManager(root: s.root, now: fixedClock)
            home = try manager.install(try AppBundle(path: s.makeBundle(info: Scratch.info()))).home
        }

        /// A UUID-named directory under `parent` with `files` (relative paths).
        func orphan(in parent: String, files: [String], uuid: String = "0A1B2C3D-0000-4000-8000-00000000ABCD") throws -> String {
            let path = parent + "/" + uuid
            try FileManager.default.createDirectory(atPath: path + "/Library/Caches", withIntermediateDirectories: true)
            for file in files { try s.write("x", to: path + "/" + file) }
            return path
        }
    }

    enum Damage: String, CaseIterable, Sendable {
        case homeMissing, orphanWithoutData, orphanWithData, missingDirectories, registryTempFile, staleRunLock,
             damagedJournal, orphanGroupWithoutData, groupContainerMissing
    }

    /// What doctor must say (problem, repair), with `{home}`, `{apps}`, `{root}`, `{orphan}` filled in.
    static let expected: [Damage: (String, String)] = [
        .homeMissing: ("com.example.Sample is in the registry but its home {home} does not exist", "removed com.example.Sample from the registry"),
        .orphanWithoutData: ("orphaned home {orphan} (Old.app), named by no registry entry, holding no user data", "removed it"),
        .orphanWithData: ("orphaned home {orphan} (Old.app), named by no registry entry, holding user data",
                          "moved it to {root}/Recovered/0A1B2C3D-0000-4000-8000-00000000ABCD"),
        .missingDirectories: ("com.example.Sample: its home {home} lacks Documents, Library/Caches, tmp", "recreated them (empty)"),
        .registryTempFile: ("temporary file {apps}/.registry.plist.abcdEFGH.tmp left by an interrupted write", "removed it"),
        .staleRunLock: ("run lock file {apps}/.0A1B2C3D-0000-4000-8000-00000000ABCD.run.lock of a home that no longer exists", "removed it"),
        .damagedJournal: ("journal {apps}/journal.plist is damaged: FormatVersion is missing", "removed it; the homes are checked without it"),
        .orphanGroupWithoutData: ("orphaned app-group container {root}/Shared/AppGroup/0A1B2C3D-0000-4000-8000-00000000ABCD, recorded for no group, holding no user data",
                                  "removed it"),
        .groupContainerMissing: ("app group group.com.example.G: its container {group} is missing or incomplete", "recreated it (empty where missing)"),
    ]

    @Test(arguments: Damage.allCases)
    func doctorRepairsAndASecondRunFindsNothing(_ damage: Damage) throws {
        let f = try Fixture()
        let apps = f.layout.applicationsDirectory
        var orphan = ""
        var group = ""
        switch damage {
        case .homeMissing:
            try TreeOperations.remove(f.home.path)
        case .orphanWithoutData:
            orphan = try f.orphan(in: apps, files: ["Old.app/Info.plist", "Library/Caches/c", "tmp/t"])
        case .orphanWithData:
            orphan = try f.orphan(in: apps, files: ["Old.app/Info.plist", "Documents/notes.txt"])
        case .missingDirectories:
            for dir in [f.home.documents, f.home.caches, f.home.tmp] { try TreeOperations.remove(dir) }
        case .registryTempFile:
            try f.s.write("partial", to: apps + "/.registry.plist.abcdEFGH.tmp")
        case .staleRunLock:
            try f.s.write("", to: f.layout.runLockPath(uuid: "0A1B2C3D-0000-4000-8000-00000000ABCD"))
        case .damagedJournal:
            try f.s.write("{ Operation = install; }", to: f.layout.journalPath)
        case .orphanGroupWithoutData:
            _ = try f.orphan(in: f.layout.groupsDirectory, files: ["Library/Caches/c"])
        case .groupContainerMissing:
            var registry = try f.manager.registry.read()
            registry.groups[try AppGroupIdentifier("group.com.example.G")] = "0A1B2C3D-0000-4000-8000-0000000000FF"
            try f.manager.registry.write(registry)
            group = f.layout.groupContainer(uuid: "0A1B2C3D-0000-4000-8000-0000000000FF").path
        }
        func fill(_ text: String) -> String {
            text.replacingOccurrences(of: "{home}", with: f.home.path).replacingOccurrences(of: "{apps}", with: apps)
                .replacingOccurrences(of: "{root}", with: f.s.root).replacingOccurrences(of: "{orphan}", with: orphan)
                .replacingOccurrences(of: "{group}", with: group)
        }
        let (problem, repair) = try #require(Self.expected[damage])

        let dry = try f.manager.doctor(dryRun: true)
        #expect(dry.findings == [DoctorFinding(problem: fill(problem), repair: "would " + Self.imperative(fill(repair)), outcome: .wouldRepair)]
                || damage == .damagedJournal && dry.findings.first?.outcome == .wouldRepair)
        let report = try f.manager.doctor()
        #expect(report.findings == [DoctorFinding(problem: fill(problem), repair: fill(repair), outcome: .repaired)])
        #expect(try f.manager.doctor().findings == [])
        switch damage {
        case .homeMissing: #expect(try f.manager.registry.read().entries.isEmpty)
        case .orphanWithData: #expect(f.s.read(f.s.root + "/Recovered/0A1B2C3D-0000-4000-8000-00000000ABCD/Documents/notes.txt") == "x")
        case .orphanWithoutData: #expect(!FileSystem_exists(orphan))
        case .groupContainerMissing: #expect(FileSystem_isDirectory(group + "/Library/Preferences"))
        default: break
        }
    }

    /// "removed it" → "remove it", as a dry run words it.
    static func imperative(_ past: String) -> String {
        for (from, to) in [("removed ", "remove "), ("moved ", "move "), ("recreated them", "recreate them"), ("recreated it (empty where missing)", "recreate it")]
        where past.hasPrefix(from) {
            return to + past.dropFirst(from.count)
        }
        return past
    }

    @Test func aHealthyRootHasNoFindings() throws {
        let f = try Fixture()
        #expect(try f.manager.doctor().findings == [])
        #expect(try ContainerManager(root: f.s.path + "/empty").doctor(dryRun: true).findings == [])
        #expect(!FileSystem_exists(f.s.path + "/empty"), "doctor creates nothing on an empty root")
    }

    @Test func aMissingBundleCannotBeRepaired() throws {
        let f = try Fixture()
        try TreeOperations.remove(f.home.app)
        let report = try f.manager.doctor()
        #expect(report.hasUnrepairedProblems)
        #expect(report.findings == [DoctorFinding(problem: "com.example.Sample: its bundle \(f.home.app) is missing",
                                                  repair: "cannot repair it; reinstall the bundle with 'apphome update <Sample.app>'",
                                                  outcome: .notRepaired)])
    }

    @Test func aDamagedRegistryIsMovedAsideAndRebuiltFromTheHomes() throws {
        let f = try Fixture()
        try f.s.write("garbage", to: f.layout.registryPath)
        let orphan = try f.orphan(in: f.layout.applicationsDirectory, files: [])
        let dryRun = try f.manager.doctor(dryRun: true)
        #expect(dryRun.findings.map(\.outcome) == [.wouldRepair, .wouldRepair, .wouldRepair])
        #expect(try String(contentsOfFile: f.layout.registryPath, encoding: .utf8) == "garbage")
        #expect(FileSystem_exists(orphan))

        let report = try f.manager.doctor()
        let aside = f.layout.registryPath + ".damaged"
        #expect(report.findings == [
            DoctorFinding(problem: "registry \(f.layout.registryPath) is damaged: the top level is not a dictionary",
                          repair: "moved it to \(aside) and rebuilt the registry from the homes", outcome: .repaired),
            DoctorFinding(problem: "home \(f.home.path) holds com.example.Sample 1.0 (1), which the registry does not name",
                          repair: "registered it again", outcome: .repaired),
            DoctorFinding(problem: "orphaned home \(orphan), named by no registry entry, holding no user data", repair: "removed it", outcome: .repaired),
        ])
        #expect(try String(contentsOfFile: aside, encoding: .utf8) == "garbage")
        #expect(try f.manager.home(for: BundleIdentifier("com.example.Sample")) == f.home)
        #expect(try f.manager.doctor().findings.isEmpty)
    }

    @Test func aLostRegistryIsRebuiltWithTheNewestHomeOfEachAppAndItsGroupContainers() throws {
        let s = Scratch()
        let manager = ContainerManager(root: s.root, now: fixedClock)
        var info = Scratch.info()
        info["com.apple.security.application-groups"] = .array([.string("group.com.example.G")])
        let v1 = try AppBundle(path: s.makeBundle("v1", info: info))
        info["CFBundleVersion"] = .string("10")
        let v10 = try AppBundle(path: s.makeBundle("v10", info: info))
        _ = try manager.install(v1)
        // An update whose old home could not be removed: two homes of one app.
        let update = try manager.update(v10, failAt: .removeOldHome)
        let old = try #require(update.leftoverHome)
        let group = try #require(try manager.registry.read().groups[AppGroupIdentifier("group.com.example.G")])
        try s.write("shared", to: manager.layout.groupContainer(uuid: group).preferences + "/group.com.example.G.plist")
        try s.write("mine", to: update.home.documents + "/notes.txt")
        try FileManager.default.removeItem(atPath: manager.layout.registryPath)

        let report = try manager.doctor()
        #expect(!report.hasUnrepairedProblems)
        #expect(report.findings.first == DoctorFinding(
            problem: "home \(update.home.path) holds com.example.Sample \(update.entry.displayVersion), which the registry does not name",
            repair: "registered it again with the containers of group.com.example.G", outcome: .repaired))
        #expect(report.findings.dropFirst().map(\.problem) == ["orphaned home \(old) (Sample.app), named by no registry entry, holding no user data"])
        let rebuilt = try manager.registry.read()
        #expect(rebuilt.entries[v10.identifier]?.homeUUID == update.entry.homeUUID)
        #expect(rebuilt.entries[v10.identifier]?.version == "10")
        #expect(rebuilt.groups == [try AppGroupIdentifier("group.com.example.G"): group])
        #expect(FileSystem_exists(update.home.documents + "/notes.txt") && !FileSystem_exists(old))
        #expect(try manager.doctor().findings.isEmpty)
    }

    @Test func aGroupContainerWithoutItsIdentityFileGetsOne() throws {
        let s = Scratch()
        let manager = ContainerManager(root: s.root, now: fixedClock)
        var info = Scratch.info()
        info["com.apple.security.application-groups"] = .array([.string("group.com.example.G")])
        _ = try manager.install(AppBundle(path: s.makeBundle(info: info)))
        let uuid = try #require(try manager.registry.read().groups.values.first)
        let container = manager.layout.groupContainer(uuid: uuid)
        try FileManager.default.removeItem(atPath: container.identityFile)
        let report = try manager.doctor()
        #expect(report.findings == [DoctorFinding(problem: "app group group.com.example.G: its container \(container.path) does not record its group",
                                                  repair: "wrote its identity file", outcome: .repaired)])
        #expect(FileSystem_exists(container.identityFile))
    }

    @Test func aRegistryFromANewerAppHomeIsNotRebuilt() throws {
        let f = try Fixture()
        let newer = PlistValue.dictionary(["FormatVersion": .integer(99), "Applications": .dictionary([:])])
        try Data(try PlistCodec.encode(newer, format: .binary)).write(to: URL(fileURLWithPath: f.layout.registryPath))
        let before = try Data(contentsOf: URL(fileURLWithPath: f.layout.registryPath))
        let report = try f.manager.doctor()
        #expect(report.hasUnrepairedProblems)
        #expect(report.findings.count == 1)
        #expect(report.findings.first?.problem.contains("has format version 99") == true)
        #expect(try Data(contentsOf: URL(fileURLWithPath: f.layout.registryPath)) == before)
    }

    @Test func aRunLockStillHeldIsLeftAlone() throws {
        let f = try Fixture()
        let path = f.layout.runLockPath(uuid: "0A1B2C3D-0000-4000-8000-00000000ABCD")
        let held = try RunLock.shared(path)
        #expect(try f.manager.doctor().findings == [])
        held.unlock()
        #expect(try f.manager.doctor().findings.count == 1)
    }

    @Test func aJournalThatCannotBeReadIsLeftAloneWithEveryHome() throws {
        let f = try Fixture()
        try FileManager.default.createDirectory(atPath: f.layout.journalPath, withIntermediateDirectories: false)
        let orphan = try f.orphan(in: f.layout.applicationsDirectory, files: [])
        let report = try f.manager.doctor()
        #expect(report.findings == [DoctorFinding(problem: "the journal cannot be read: read \(f.layout.journalPath): Is a directory",
                                                  repair: "left it and every home alone; fix the cause and run 'apphome doctor' again",
                                                  outcome: .notRepaired)])
        #expect(FileSystem_isDirectory(f.layout.journalPath) && FileSystem_exists(orphan))
    }

    @Test func aJournalFromANewerAppHomeIsLeftAlone() throws {
        let f = try Fixture()
        try FileSystem.writeAtomically(try PlistCodec.encode(.dictionary(["FormatVersion": .integer(7)]), format: .binary), to: f.layout.journalPath)
        let orphan = try f.orphan(in: f.layout.applicationsDirectory, files: [])
        let report = try f.manager.doctor()
        #expect(report.findings == [DoctorFinding(problem: "journal \(f.layout.journalPath) has format version 7, newer than this AppHome (1)",
                                                  repair: "left it alone; use a newer apphome", outcome: .notRepaired)])
        #expect(FileSystem_exists(orphan), "homes are not judged without the journal")
        #expect(throws: ContainersError.journalVersionTooNew(path: f.layout.journalPath, found: 7, supported: 1)) {
            try f.manager.install(try AppBundle(path: f.s.makeBundle("other", info: Scratch.info(id: "com.example.Other"))))
        }
    }
}
