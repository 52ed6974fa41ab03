import Foundation
import Testing

/// The built `apphome`, killed with a real SIGKILL right after a journaled
/// step (`APPHOME_TEST_KILL_AT`), then `apphome doctor` or the next command.
@Suite("apphome crashes and doctor")
struct CrashAndDoctorTests {
    static let id = "com.example.ScaryBugs"
    static var v1: String { InstalledAppTests.examples.appendingPathComponent("ScaryBugs-v1/ScaryBugs.app").path }
    static var v2: String { InstalledAppTests.examples.appendingPathComponent("ScaryBugs-v2/ScaryBugs.app").path }

    /// Signs `bundle` with a key made for it by the built `apphome keygen` (in the root's work directory).
    static func signWithNewKey(_ root: TempRoot, _ bundle: String) throws {
        let key = root.workFile("publisher-\(UUID().uuidString).key").path
        let made = try apphome(root, ["keygen", key])
        try #require(made.status == 0, "\(made)")
        let signed = try apphome(root, ["sign", bundle, "--key", key])
        try #require(signed.status == 0, "\(signed)")
    }

    static func apphome(_ root: TempRoot, _ arguments: [String], env: [String: String] = [:]) throws -> CommandResult {
        // A kill point needs the test build with the step hook; the shipped binary has none.
        let name = env["APPHOME_TEST_KILL_AT"] == nil ? "apphome" : "apphome-crashing"
        let binary = try DefaultsBinary.url().deletingLastPathComponent().appendingPathComponent(name)
        var env = env
        // The kill points are in the embedded code path: in the daemon pass a
        // killed operation runs without prefsd (an uninstall through prefsd is
        // prefsd's, and prefsd's own SIGKILL tests cover it).
        if env["APPHOME_TEST_KILL_AT"] != nil { env["APPHOME_PREFSD"] = "off" }
        return try Subprocess.run(binary, ["--root", root.root.path] + arguments,
                                  environment: root.environment(env), ioDirectory: root.io)
    }

    /// The version installed afterwards (nil: not installed), and whether the repair finished (true) or undid it.
    static let cases: [(String, String?, Bool)] = [
        ("install.begin", nil, false),
        ("install.copyBundle", nil, false),
        ("install.createGroups", nil, false),
        ("install.writeRegistry", "1.0 (1)", true),
        ("update.createHome", "1.0 (1)", false),
        ("update.moveDocuments", "1.0 (1)", false),
        ("update.moveLibrary", "1.0 (1)", false),
        ("update.switchRegistry", "2.0 (2)", true),
        ("update.removeOldHome", "2.0 (2)", true),
        ("uninstall.begin", "1.0 (1)", false),
        ("uninstall.removeEntry", nil, true),
        ("uninstall.removeHome", nil, true),
    ]

    @Test(arguments: cases)
    func aKilledOperationIsFinishedOrUndoneByDoctor(_ killAt: String, _ version: String?, _ finished: Bool) throws {
        let root = try TempRoot()
        let op = String(killAt.prefix { $0 != "." })
        if op != "install" {
            try #require(try Self.apphome(root, ["install", Self.v1]).status == 0)
            let app = try Self.apphome(root, ["container", Self.id]).stdout.trimmingCharacters(in: .newlines)
            try #require(try Self.apphome(root, ["run", Self.id, "--", app + "/ScaryBugs"]).status == 0)
            try root.succeed(["write", Self.id, "maxBugs", "-int", "12"])
        }
        let args = op == "install" ? ["install", Self.v1] : op == "update" ? ["update", Self.v2] : ["uninstall", Self.id]
        // The kill point is in this process: an uninstall must not go to prefsd.
        let killed = try Self.apphome(root, args, env: ["APPHOME_TEST_KILL_AT": killAt])
        #expect(killed.signaled && killed.status == SIGKILL, "\(killed)")

        let doctor = try Self.apphome(root, ["doctor"])
        #expect(doctor.status == 0, "\(doctor)")
        let lines = doctor.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let summary = op == "install" ? "the install of \(Self.id) 1.0 (1)"
            : op == "update" ? "the update of \(Self.id) from 1.0 (1) to 2.0 (2)" : "the uninstall of \(Self.id) 1.0 (1)"
        let step = String(killAt.dropFirst(op.count + 1))
        #expect(lines.first == "problem: \(summary) was interrupted after step \(step)")
        #expect(lines.dropFirst().first?.hasPrefix(finished ? "  repaired: finished it" : "  repaired: undid it") == true, "\(doctor)")
        #expect(try Self.apphome(root, ["doctor"]).stdout == "no problems found\n")

        let info = try Self.apphome(root, ["info", Self.id])
        if let version {
            #expect(info.stdout.contains("Version: \(version.prefix { $0 != " " })\n"), "\(info)")
            if op != "install" {
                let data = try Self.apphome(root, ["container", Self.id, "documents"]).stdout.trimmingCharacters(in: .newlines)
                #expect(FileManager.default.contents(atPath: data + "/launches.txt") == Data("launched version 1\n".utf8))
                try root.expectOutput(["read", Self.id, "maxBugs"], "12\n")
            }
        } else {
            #expect(info.status == 1 && info.stderr == "apphome: \(Self.id) is not installed\n")
        }
        let homes = (try? FileManager.default.contentsOfDirectory(atPath: root.root.path + "/Applications")) ?? []
        #expect(homes.filter { $0.count == 36 }.count == (version == nil ? 0 : 1))
    }

    @Test func theNextUpdateFinishesAKilledUpdateFirst() throws {
        let root = try TempRoot()
        try #require(try Self.apphome(root, ["install", Self.v1]).status == 0)
        try root.succeed(["write", Self.id, "maxBugs", "-int", "7"])
        let killed = try Self.apphome(root, ["update", Self.v2], env: ["APPHOME_TEST_KILL_AT": "update.moveLibrary"])
        #expect(killed.signaled)
        let update = try Self.apphome(root, ["update", Self.v2])
        #expect(update.status == 0, "\(update)")
        #expect(update.stderr.hasPrefix("apphome: note: the update of \(Self.id) from 1.0 (1) to 2.0 (2) was interrupted after step moveLibrary; undid it: moved "))
        #expect(update.stdout.hasPrefix("updated \(Self.id) from 1.0 (1) to 2.0 (2) at "))
        try root.expectOutput(["read", Self.id, "maxBugs"], "7\n")
    }

    @Test func doctorDryRunChangesNothingAndExits1() throws {
        let root = try TempRoot()
        try #require(try Self.apphome(root, ["install", Self.v1]).status == 0)
        let killed = try Self.apphome(root, ["uninstall", Self.id], env: ["APPHOME_TEST_KILL_AT": "uninstall.removeEntry"])
        #expect(killed.signaled)
        let before = root.snapshot()
        let dry = try Self.apphome(root, ["doctor", "--dry-run"])
        #expect(dry.status == 1)
        #expect(dry.stdout.hasPrefix("problem: the uninstall of \(Self.id) 1.0 (1) was interrupted after step removeEntry\n  would finish it: remove the home "))
        #expect(dry.stderr == "apphome: 1 problem(s) found; nothing changed (dry run)\n")
        #expect(root.snapshot() == before)
    }
}

/// `purge-caches` and `clean-tmp` through the built binary.
@Suite("apphome purge-caches and clean-tmp")
struct CacheAndTmpTests {
    @Test func purgeAndCleanReportBytesPerAppAndSkipARunningApp() throws {
        let root = try TempRoot()
        let id = CrashAndDoctorTests.id
        try #require(try CrashAndDoctorTests.apphome(root, ["install", CrashAndDoctorTests.v1]).status == 0)
        let caches = try CrashAndDoctorTests.apphome(root, ["container", id, "caches"]).stdout.trimmingCharacters(in: .newlines)
        let tmp = try CrashAndDoctorTests.apphome(root, ["container", id, "tmp"]).stdout.trimmingCharacters(in: .newlines)
        try Data(count: 4096).write(to: URL(fileURLWithPath: caches + "/a.bin"))
        try Data(count: 100).write(to: URL(fileURLWithPath: tmp + "/b.tmp"))

        // While the app runs, both leave it alone.
        let binary = try DefaultsBinary.url().deletingLastPathComponent().appendingPathComponent("apphome").path
        // Outside the sandbox: the root is not visible inside one.
        let inside = try CrashAndDoctorTests.apphome(root, ["run", "--no-sandbox", id, "--", "/bin/sh", "-c",
                                                            "\"$0\" --root \"$APPHOME_ROOT\" clean-tmp; \"$0\" --root \"$APPHOME_ROOT\" purge-caches | head -1",
                                                            binary])
        #expect(inside.stdout == "skipped \(id): it is running\nskipped \(id): it is running\n", "\(inside)")
        #expect(FileManager.default.fileExists(atPath: caches + "/a.bin") && FileManager.default.fileExists(atPath: tmp + "/b.tmp"))

        let purge = try CrashAndDoctorTests.apphome(root, ["purge-caches"])
        #expect(purge.status == 0 && purge.stderr.isEmpty)
        // Sizes for people: 4096 bytes are 4 KiB.
        #expect(purge.stdout.hasPrefix("purged \(id): 4 KiB freed\n4 KiB freed in total; "))
        #expect(purge.stdout.hasSuffix(" free\n"))
        let clean = try CrashAndDoctorTests.apphome(root, ["clean-tmp"])
        #expect(clean.status == 0 && clean.stdout == "cleaned \(id): 100 bytes freed\n")
        #expect(try FileManager.default.contentsOfDirectory(atPath: caches).isEmpty)
        #expect(try FileManager.default.contentsOfDirectory(atPath: tmp).isEmpty)

        // A target already met changes nothing.
        try Data(count: 10).write(to: URL(fileURLWithPath: caches + "/c.bin"))
        let met = try CrashAndDoctorTests.apphome(root, ["purge-caches", "--target-free", "1"])
        #expect(met.status == 0 && met.stdout.hasPrefix("0 bytes freed in total; "))
        #expect(FileManager.default.fileExists(atPath: caches + "/c.bin"))
        let huge = try CrashAndDoctorTests.apphome(root, ["purge-caches", "--target-free", "18446744073709551615"])
        #expect(huge.status == 1)
        #expect(huge.stdout.hasPrefix("purged \(id): 10 bytes freed\n"))
        #expect(huge.stderr.hasPrefix("apphome: only ") && huge.stderr.hasSuffix(" free after purging every cache it could; the target was 16777216 TiB\n"))
        // The target in the units people type: 1T is more than this test machine has free.
        let units = try CrashAndDoctorTests.apphome(root, ["purge-caches", "--target-free", "1024T"])
        #expect(units.status == 1 && units.stderr.hasSuffix("; the target was 1024 TiB\n"), "\(units)")

        let bad = try CrashAndDoctorTests.apphome(root, ["purge-caches", "--target-free", "lots"])
        #expect(bad.status == 255 && bad.stdout.isEmpty)
        #expect(bad.stderr == "apphome: option --target-free needs a size (bytes, or a number with K, M, G or T: 500M), not 'lots'\n"
                + "Run 'apphome help purge-caches' for its usage.\n")
    }
}
