import AppHomeSystem
import CommandSupport
import Foundation
import Testing
@testable import AppHomeCommand
import Containers
import Preferences
import PropertyList

/// `doctor`, `purge-caches`, `clean-tmp` and `container … groups`, in process.
@Suite struct MaintenanceCommandTests {
    static let orphanUUID = "0A1B2C3D-0000-4000-8000-00000000ABCD"

    func home(_ w: World, _ id: String = "com.example.ScaryBugs") -> String {
        String(w.apphome("container", id, "data").out.dropLast())
    }

    @Test func doctorOnAHealthyRootSaysSo() {
        let w = World()
        w.apphome("install", w.v1)
        let r = w.apphome("doctor")
        #expect(r.status == 0 && r.out == "no problems found\n" && r.err.isEmpty)
    }

    @Test func doctorReportsEachProblemAndItsRepair() throws {
        let w = World()
        w.apphome("install", w.v1)
        let home = home(w)
        try FileManager.default.removeItem(atPath: home + "/tmp")
        let orphan = w.root + "/Applications/" + Self.orphanUUID
        try FileManager.default.createDirectory(atPath: orphan + "/Documents", withIntermediateDirectories: true)
        let dry = w.apphome("doctor", "--dry-run")
        #expect(dry.status == 1)
        #expect(dry.out == """
            problem: com.example.ScaryBugs: its home \(home) lacks tmp
              would recreate them (empty)
            problem: orphaned home \(orphan), named by no registry entry, holding no user data
              would remove it

            """)
        #expect(dry.err == "apphome: 2 problem(s) found; nothing changed (dry run)\n")
        #expect(FileManager.default.fileExists(atPath: orphan))
        let r = w.apphome("doctor")
        #expect(r.status == 0)
        #expect(r.err.isEmpty)
        #expect(r.out == """
            problem: com.example.ScaryBugs: its home \(home) lacks tmp
              repaired: recreated them (empty)
            problem: orphaned home \(orphan), named by no registry entry, holding no user data
              repaired: removed it
            2 problem(s) found, 2 repaired

            """)
        #expect(w.apphome("doctor").out == "no problems found\n")
    }

    @Test func doctorFailsWhenSomethingCannotBeRepaired() throws {
        let w = World()
        w.apphome("install", w.v1)
        let app = String(w.apphome("container", "com.example.ScaryBugs").out.dropLast())
        chmod(app, 0o700)
        try FileManager.default.removeItem(atPath: app)
        let r = w.apphome("doctor")
        #expect(r.status == 1)
        #expect(r.out == """
            problem: com.example.ScaryBugs: its bundle \(app) is missing
              not repaired: cannot repair it; reinstall the bundle with 'apphome update <ScaryBugs.app>'
            1 problem(s) found, 0 repaired

            """)
        #expect(r.err == "apphome: 1 problem(s) could not be repaired\n")
    }

    @Test func theNextCommandFinishesAnInterruptedUpdateFirst() throws {
        let w = World()
        w.apphome("install", w.v1)
        let old = home(w)
        try Data("doc".utf8).write(to: URL(fileURLWithPath: old + "/Documents/d.txt"))
        var crashing = ContainerManager(root: w.root)
        crashing.stepHook = { step throws(ContainersError) in if step == "update.moveLibrary" { throw .simulatedCrash(step: step) } }
        #expect(throws: ContainersError.simulatedCrash(step: "update.moveLibrary")) { try crashing.update(try AppBundle(path: w.v2)) }
        let newHome = w.root + "/Applications/" + (try #require(try crashing.pendingJournal())).entry.homeUUID

        let list = w.apphome("uninstall", "com.example.Nothing")
        #expect(list.status == 1)
        #expect(list.err == """
            apphome: note: the update of com.example.ScaryBugs from 1.0 (1) to 2.0 (2) was interrupted after step moveLibrary; \
            undid it: moved 4 item(s) of user data back to \(old) and removed the new home \(newHome); com.example.ScaryBugs 1.0 (1) is installed
            apphome: com.example.Nothing is not installed

            """)
        #expect(w.read(old + "/Documents/d.txt") == "doc")
        let updated = w.apphome("update", w.v2)
        #expect(updated.status == 0 && updated.err.isEmpty)
        #expect(w.read(home(w) + "/Documents/d.txt") == "doc")
    }

    @Test func aDamagedJournalStopsMutatingCommands() throws {
        let w = World()
        w.apphome("install", w.v1)
        try Data("junk".utf8).write(to: URL(fileURLWithPath: w.root + "/Applications/journal.plist"))
        let r = w.apphome("install", w.v2)
        #expect(r.status == 1)
        #expect(r.err.hasPrefix("apphome: journal \(w.root)/Applications/journal.plist is damaged: "))
        #expect(r.err.hasSuffix("; run 'apphome doctor'\n"))
        #expect(w.apphome("doctor").status == 0)
        #expect(w.apphome("doctor").out == "no problems found\n")
    }

    @Test func purgeCachesReportsBytesPerAppAndFailsShortOfTheTarget() throws {
        let w = World()
        w.apphome("install", w.v1)
        let caches = home(w) + "/Library/Caches"
        try Data(count: 1234).write(to: URL(fileURLWithPath: caches + "/thumb.bin"))
        let r = w.apphome("purge-caches", "--target-free", "5000", freeBytes: { _ throws(SystemError) in 1000 })
        #expect(r.status == 1)
        #expect(r.out == "purged com.example.ScaryBugs: 1.2 KiB freed\n1.2 KiB freed in total; 1000 bytes free\n")
        #expect(r.err == "apphome: only 1000 bytes free after purging every cache it could; the target was 4.9 KiB\n")
        #expect(((try? FileManager.default.contentsOfDirectory(atPath: caches)) ?? ["?"]).isEmpty)
        let again = w.apphome("purge-caches", freeBytes: { _ throws(SystemError) in 7 })
        #expect(again.status == 0 && again.out == "0 bytes freed in total; 7 bytes free\n")
        let met = w.apphome("purge-caches", "--target-free=7", freeBytes: { _ throws(SystemError) in 7 })
        #expect(met.status == 0 && met.out == "0 bytes freed in total; 7 bytes free\n")
    }

    @Test func cleanTmpReportsEachApp() throws {
        let w = World()
        w.apphome("install", w.v1)
        try Data(count: 10).write(to: URL(fileURLWithPath: home(w) + "/tmp/scratch"))
        #expect(w.apphome("clean-tmp").out == "cleaned com.example.ScaryBugs: 10 bytes freed\n")
        // Outside the sandbox: the root is not visible inside one.
        let running = w.apphome("run", "--no-sandbox", "com.example.ScaryBugs", "--", "/bin/sh", "-c", "\"$0\" --root \"$1\" clean-tmp > \"$2\"",
                                Self.apphomeBinary, w.root, w.base + "/out")
        #expect(running.status == 0)
        #expect(w.read(w.base + "/out") == "skipped com.example.ScaryBugs: it is running\n")
    }

    /// The built `apphome` next to the test bundle.
    static var apphomeBinary: String {
        var dir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        while !FileManager.default.isExecutableFile(atPath: dir.appendingPathComponent("apphome").path) && dir.path != "/" {
            dir.deleteLastPathComponent()
        }
        return dir.appendingPathComponent("apphome").path
    }

    @Test func containerGroupsPrintsOneLinePerGroup() throws {
        let w = World()
        let bundle = w.base + "/Grouped.app"
        try FileManager.default.createDirectory(atPath: bundle, withIntermediateDirectories: true)
        let info: PlistValue = .dictionary(["CFBundleIdentifier": .string("com.example.Grouped"), "CFBundleVersion": .string("1"),
                                            PlistKey(AppGroupIdentifier.infoPlistKey): .array([.string("group.com.example.b"), .string("group.com.example.a")])])
        try Data(PlistCodec.encode(info, format: .xml)).write(to: URL(fileURLWithPath: bundle + "/Info.plist"))
        // Only a signed app may claim app groups.
        #expect(w.apphome("install", bundle).err.contains("the bundle is unsigned, and an unsigned app holds only its own group"))
        #expect(w.apphome("keygen", w.base + "/publisher.key").status == 0)
        #expect(w.apphome("sign", bundle, "--key", w.base + "/publisher.key").status == 0)
        #expect(w.apphome("install", bundle).status == 0)
        let registry = try ContainerRegistry(layout: ContainerLayout(root: w.root)).read()
        let a = registry.groups[try AppGroupIdentifier("group.com.example.a")]!, b = registry.groups[try AppGroupIdentifier("group.com.example.b")]!
        let r = w.apphome("container", "com.example.Grouped", "groups")
        #expect(r.out == "group.com.example.a\t\(w.root)/Shared/AppGroup/\(a)\ngroup.com.example.b\t\(w.root)/Shared/AppGroup/\(b)\n")
        #expect(w.apphome("info", "com.example.Grouped").out.hasSuffix("Group group.com.example.a: \(w.root)/Shared/AppGroup/\(a)\nGroup group.com.example.b: \(w.root)/Shared/AppGroup/\(b)\n"))
        w.apphome("install", w.v1)
        #expect(w.apphome("container", "com.example.ScaryBugs", "groups").out == "")
        let removed = w.apphome("uninstall", "com.example.Grouped")
        #expect(removed.out.hasSuffix("""
            removed the container of app group group.com.example.a (no member app left)
            removed the container of app group group.com.example.b (no member app left)

            """))
    }

    @Test(arguments: [
        (["doctor", "now"], "apphome: unexpected argument 'now'\n"),
        (["doctor", "--force"], "apphome: unknown option '--force'\n"),
        (["purge-caches", "--target-free"], "apphome: option --target-free needs a size\n"),
        (["purge-caches", "--target-free", "-5"], "apphome: option --target-free needs a size (bytes, or a number with K, M, G or T: 500M), not '-5'\n"),
        (["purge-caches", "--target-free=1XB"], "apphome: option --target-free needs a size (bytes, or a number with K, M, G or T: 500M), not '1XB'\n"),
        (["purge-caches", "all"], "apphome: unexpected argument 'all'\n"),
        (["clean-tmp", "x"], "apphome: unexpected argument 'x'\n"),
        (["clean-tmp", "--all"], "apphome: unknown option '--all'\n"),
    ] as [([String], String)])
    func usageErrorsOfTheNewVerbs(_ args: [String], _ firstLine: String) {
        let w = World()
        let console = CapturingConsole()
        #expect(AppHomeCommand.run(["--root", w.root] + args, environment: AppHomeEnvironment(), console: console) == 255)
        #expect(console.standardOutput.isEmpty)
        let verb = args[0]
        #expect(console.standardError == firstLine + "Run 'apphome help \(verb)' for its usage.\n")
        #expect(!FileManager.default.fileExists(atPath: w.root))
    }

    /// A malformed bundle identifier on the command line is a usage error of
    /// its verb, with the pointer to its help, as every other one is.
    @Test(arguments: [["container", "X", "documentz"], ["info", "bad/id"], ["run", "X", "--", "true"], ["launch", "X"],
                      ["uninstall", "X"], ["backup", "X"]])
    func aMalformedBundleIdentifierIsAUsageError(_ args: [String]) {
        let w = World()
        let console = CapturingConsole()
        #expect(AppHomeCommand.run(["--root", w.root] + args, environment: AppHomeEnvironment(), console: console) == 255)
        #expect(console.standardOutput.isEmpty)
        #expect(console.standardError.hasPrefix("apphome: invalid bundle identifier '\(args[1])': "), "\(console.standardError)")
        #expect(console.standardError.hasSuffix("\nRun 'apphome help \(args[0])' for its usage.\n"), "\(console.standardError)")
    }
}

extension MaintenanceCommandTests {
    @Test func helpListsTheMaintenanceVerbs() {
        let console = CapturingConsole()
        #expect(AppHomeCommand.run(["help"], environment: AppHomeEnvironment(), console: console) == 0)
        for line in ["  doctor [--dry-run]                 find and repair what a crash left (interrupted\n",
                     "  purge-caches [--target-free SIZE]  empty apps' and app groups' Library/Caches,\n",
                     "  clean-tmp                          empty tmp/ of every app that is not running\n",
                     "                                     groups prints GROUP-ID<TAB>PATH per app group;\n",
                     "                                     get_app_container (simctl's name) is another name for it\n"] {
            #expect(console.standardOutput.contains(line), "\(line)")
        }
    }

    @Test func oneVerbsHelpComesFromHelpVerbOrVerbDashDashHelp() {
        for args in [["help", "prune-backups"], ["prune-backups", "--help"], ["prune-backups", "--keep", "x", "-h"]] {
            let console = CapturingConsole()
            #expect(AppHomeCommand.run(args, environment: AppHomeEnvironment(), console: console) == 0)
            #expect(console.standardOutput == """
                usage: apphome [--root DIR] prune-backups …

                  prune-backups --keep N [<bundle-id>] [--from DIR|restic:REPO] [--dry-run]
                                                     keep each app's N newest backups; remove the older
                                                     ones and the stored files no remaining backup needs
                                                     (restic forget and prune for a repository)

                """, "\(args)")
        }
        let unknown = CapturingConsole()
        #expect(AppHomeCommand.run(["help", "nope"], environment: AppHomeEnvironment(), console: unknown) == 255)
        #expect(unknown.standardError.hasPrefix("apphome: unknown verb 'nope'\n"))
        // After `--`, --help belongs to the command `run` starts.
        let run = CapturingConsole()
        #expect(AppHomeCommand.run(["--root", "/nonexistent", "run", "com.example.A", "--", "ls", "--help"],
                                   environment: AppHomeEnvironment(), console: run) == 1)
        #expect(run.standardError == "apphome: com.example.A is not installed\n")
    }

    @Test func aDamagedRegistryPointsAtDoctorWhichRebuildsIt() throws {
        let w = World()
        #expect(w.apphome("install", w.v1).status == 0)
        let registry = w.root + "/Applications/registry.plist"
        try Data("garbage".utf8).write(to: URL(fileURLWithPath: registry))
        let list = w.apphome("list")
        #expect(list.status == 1)
        #expect(list.err == "apphome: registry \(registry) is damaged: the top level is not a dictionary; run 'apphome doctor' to rebuild it from the homes\n")
        let doctor = w.apphome("doctor")
        #expect(doctor.status == 0, "\(doctor)")
        #expect(doctor.out.hasSuffix("2 problem(s) found, 2 repaired\n"))
        #expect(w.apphome("list").out.contains("com.example.ScaryBugs"))
    }
}
