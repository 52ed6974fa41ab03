import Foundation
import Testing
@testable import Containers
import ContainersTestSupport
import PropertyList

/// A crash after every journaled step of install, update and uninstall,
/// then `doctor` (or the next command): the root must end consistent, with
/// the operation either finished or undone and no user data lost.
@Suite struct CrashRecoveryTests {
    enum Operation: String, Sendable { case install, update, uninstall }
    enum Repairer: String, Sendable, CaseIterable { case doctor, nextCommand }

    static let steps: [(Operation, String)] =
        ([Operation.install, .update, .uninstall].map { ($0, "begin") })
        + InstallStep.allCases.map { (.install, $0.rawValue) }
        + UpdateStep.allCases.map { (.update, $0.rawValue) }
        + UninstallStep.allCases.map { (.uninstall, $0.rawValue) }

    /// Whether a crash after `step` comes after the operation's commit point.
    static func committed(_ op: Operation, _ step: String) -> Bool {
        switch op {
        case .install: return step == InstallStep.writeRegistry.rawValue
        case .update: return [UpdateStep.switchRegistry.rawValue, UpdateStep.removeOldHome.rawValue].contains(step)
        case .uninstall: return step != "begin"
        }
    }

    static let userData = ["Documents/notes.txt", "Library/Preferences/com.example.Sample.plist",
                           "Library/Application Support/db.sqlite", "Library/Custom/state.bin"]

    struct World {
        let s = Scratch()
        let manager: ContainerManager
        let v1: AppBundle
        let v2: AppBundle
        var hookLog: String { s.path + "/hooks.log" }

        init() throws {
            manager = ContainerManager(root: s.root, now: fixedClock)
            var info1 = Scratch.info()
            info1[AppGroupIdentifier.infoPlistKey] = .array([.string("group.com.example.Shared")])
            var info2 = Scratch.info(version: "2", short: "2.0")
            info2[AppGroupIdentifier.infoPlistKey] = .array([.string("group.com.example.Shared"), .string("group.com.example.Added")])
            v1 = try AppBundle(path: s.makeBundle("v1", info: info1, resource: "one"))
            v2 = try AppBundle(path: s.makeBundle("v2", info: info2, resource: "two"))
            try s.write("#!/bin/sh\necho \"$APPHOME_BUNDLE_ID\" >> \(hookLog)\n", to: s.root + "/Hooks/uninstall.d/10-log")
            chmod(s.root + "/Hooks/uninstall.d/10-log", 0o755)
        }

        func crashing(after op: Operation, _ step: String) -> ContainerManager {
            var m = manager
            let target = op.rawValue + "." + step
            m.stepHook = { done throws(ContainersError) in if done == target { throw .simulatedCrash(step: done) } }
            return m
        }

        var groupContainers: [String] { s.entries(s.root + "/Shared/AppGroup").filter(ContainerLayout.isValidUUID) }
    }

    static let cases: [(Operation, String, Repairer)] = steps.flatMap { step in Repairer.allCases.map { (step.0, step.1, $0) } }

    @Test(arguments: cases)
    func crashAfterEachStepIsFinishedOrUndone(_ op: Operation, _ step: String, _ repairer: Repairer) throws {
        let w = try World()
        var inodes: [Int] = []
        var oldHome: ApplicationHome?
        if op != .install {
            oldHome = try w.manager.install(w.v1).home
            for file in Self.userData { try w.s.write(file, to: oldHome!.path + "/" + file) }
            inodes = Self.userData.map { Int(inode(oldHome!.path + "/" + $0)) }
        }
        let crashing = w.crashing(after: op, step)
        #expect(throws: ContainersError.simulatedCrash(step: op.rawValue + "." + step)) {
            switch op {
            case .install: _ = try crashing.install(w.v1)
            case .update: _ = try crashing.update(w.v2)
            case .uninstall: _ = try crashing.uninstall(w.v1.identifier)
            }
        }
        let journal = try #require(try w.manager.pendingJournal())
        #expect(journal.operation.rawValue == op.rawValue && journal.step == step)
        // Every mutating operation refuses while the journal is pending.
        #expect(throws: ContainersError.interruptedOperation(journal.summary)) { try w.manager.install(w.v1) }
        #expect(throws: ContainersError.interruptedOperation(journal.summary)) { try w.manager.uninstall(w.v1.identifier) }

        let report: DoctorReport
        switch repairer {
        case .doctor: report = try w.manager.doctor()
        case .nextCommand: report = try w.manager.finishInterruptedOperation()
        }
        #expect(!report.hasUnrepairedProblems, "\(report.findings)")
        #expect(report.findings.first?.problem == "\(journal.summary) was interrupted after step \(step)")
        #expect(try w.manager.pendingJournal() == nil)
        #expect(try w.manager.doctor().findings == [], "a second doctor finds nothing")
        if op == .install && !Self.committed(op, step) {
            let home = w.manager.layout.applicationsDirectory + "/" + journal.entry.homeUUID
            #expect(report.findings.first?.repair == (step == "begin" ? "undid it: nothing had been created" : "undid it: removed the partial home \(home)"))
        }
        if op == .update && step == "begin" {
            #expect(report.findings.first?.repair == "undid it: nothing had been created; com.example.Sample 1.0 (1) is installed")
        }
        if op == .update && step == UpdateStep.moveLibrary.rawValue {
            let new = w.manager.layout.applicationsDirectory + "/" + journal.entry.homeUUID
            #expect(report.findings.first?.repair
                == "undid it: moved 4 item(s) of user data back to \(oldHome!.path) and removed the new home \(new); com.example.Sample 1.0 (1) is installed")
        }

        let registry = try w.manager.registry.read()
        let committed = Self.committed(op, step)
        switch op {
        case .install:
            #expect(registry.entries.count == (committed ? 1 : 0))
            #expect(w.s.homes.count == (committed ? 1 : 0))
            #expect(w.groupContainers.count == (committed ? 1 : 0))
        case .update:
            let entry = try #require(registry.entries[w.v1.identifier])
            #expect(entry.version == (committed ? "2" : "1"))
            #expect(w.s.homes == [entry.homeUUID], "exactly one home is left")
            let home = w.manager.layout.home(uuid: entry.homeUUID, bundleName: entry.bundleName)
            for (file, ino) in zip(Self.userData, inodes) {
                #expect(w.s.read(home.path + "/" + file) == file)
                #expect(Int(inode(home.path + "/" + file)) == ino, "\(file) moved, never copied")
            }
            #expect(w.s.read(home.app + "/Resources/data.txt") == (committed ? "two" : "one"))
            #expect(registry.groups.count == (committed ? 2 : 1))
            #expect(w.groupContainers.count == registry.groups.count)
        case .uninstall:
            #expect(registry.entries.isEmpty == committed)
            #expect(w.s.homes.count == (committed ? 0 : 1))
            #expect(w.groupContainers.count == (committed ? 0 : 1))
            #expect(w.s.read(w.hookLog) == (committed ? "com.example.Sample\n" : nil), "hooks ran exactly once")
        }
        // And the app can be worked on again.
        if registry.entries.isEmpty { _ = try w.manager.install(w.v1) } else { _ = try w.manager.update(w.v2) }
    }

    /// An error after the commit point (here: from the step hook, standing
    /// in for a failed journal write) must not undo a committed operation.
    @Test(arguments: ["install.writeRegistry", "update.switchRegistry"])
    func anErrorAfterTheCommitPointUndoesNothing(_ point: String) throws {
        let w = try World()
        if point.hasPrefix("update") {
            let home = try w.manager.install(w.v1).home
            try w.s.write("notes", to: home.documents + "/notes.txt")
        }
        var failing = w.manager
        failing.stepHook = { done throws(ContainersError) in if done == point { throw .injectedFailure(step: done) } }
        #expect(throws: ContainersError.injectedFailure(step: point)) {
            if point.hasPrefix("update") { _ = try failing.update(w.v2) } else { _ = try failing.install(w.v1) }
        }
        let entry = try #require(try w.manager.registry.read().entries[w.v1.identifier])
        #expect(entry.version == (point.hasPrefix("update") ? "2" : "1"))
        let home = w.manager.layout.home(uuid: entry.homeUUID, bundleName: entry.bundleName)
        #expect(FileSystem_isDirectory(home.app))
        if point.hasPrefix("update") { #expect(w.s.read(home.documents + "/notes.txt") == "notes") }
        let report = try w.manager.doctor()
        #expect(report.findings.first?.repair.hasPrefix("finished it") == true, "\(report.findings)")
        #expect(w.s.homes == [entry.homeUUID])
    }

    @Test func dryRunReportsAnInterruptedUpdateAndChangesNothing() throws {
        let w = try World()
        let home = try w.manager.install(w.v1).home
        try w.s.write("notes", to: home.documents + "/notes.txt")
        #expect(throws: ContainersError.self) { try w.crashing(after: .update, "moveDocuments").update(w.v2) }
        let journal = try #require(try w.manager.pendingJournal())
        let before = try tree(w.s.root)
        let report = try w.manager.doctor(dryRun: true)
        #expect(try tree(w.s.root) == before)
        #expect(report.findings.count == 1, "the new home is the journal's, not an orphan: \(report.findings)")
        #expect(report.findings.first?.outcome == .wouldRepair)
        let newHome = w.manager.layout.home(uuid: journal.entry.homeUUID, bundleName: "Sample.app").path
        #expect(report.findings.first?.repair
            == "would undo it: move 1 item(s) of user data back to \(home.path) and remove the new home \(newHome)")
    }

    @Test func undoingAnUpdateRefusesWhenBothHomesHoldTheSameItem() throws {
        let w = try World()
        let home = try w.manager.install(w.v1).home
        try w.s.write("notes", to: home.documents + "/notes.txt")
        #expect(throws: ContainersError.self) { try w.crashing(after: .update, "moveDocuments").update(w.v2) }
        try w.s.write("made later", to: home.documents + "/other.txt")
        let report = try w.manager.doctor()
        #expect(report.hasUnrepairedProblems)
        #expect(report.findings.first?.repair.hasPrefix("cannot undo it: both \(home.path) and ") == true)
        #expect(report.findings.first?.repair.hasSuffix(" hold Documents; merge them by hand, then run 'apphome doctor' again") == true)
        #expect(try w.manager.pendingJournal() != nil, "the journal stays for the next try")
    }

    /// Every file and directory below `root` with its contents (files) or "dir".
    func tree(_ root: String) throws -> [String: String] {
        var result: [String: String] = [:]
        guard let walker = FileManager.default.enumerator(atPath: root) else { return result }
        for case let relative as String in walker {
            let path = root + "/" + relative
            result[relative] = FileSystem_isDirectory(path) ? "dir" : (FileManager.default.contents(atPath: path).map { $0.base64EncodedString() } ?? "?")
        }
        return result
    }
}
