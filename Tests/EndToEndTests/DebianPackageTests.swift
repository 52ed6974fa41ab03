import Foundation
import Testing

/// `examples/debian/scarybugs/DEBIAN/postrm`, run with the built `apphome`
/// against a temporary root.
@Suite("Debian postrm example")
struct DebianPackageTests {
    static var package: URL { InstalledAppTests.examples.appendingPathComponent("debian/scarybugs/DEBIAN") }

    func postrm(_ root: TempRoot, _ argument: String) throws -> CommandResult {
        let apphome = try DefaultsBinary.url().deletingLastPathComponent().appendingPathComponent("apphome").path
        return try Subprocess.run(URL(fileURLWithPath: "/bin/sh"), [Self.package.appendingPathComponent("postrm").path, argument],
                                  environment: root.environment(["APPHOME": apphome, "APPHOME_ROOT": root.root.path]),
                                  ioDirectory: root.io)
    }

    @Test(arguments: ["remove", "purge"])
    func removeUninstallsTheAppAndToleratesNotInstalled(_ action: String) throws {
        let root = try TempRoot()
        try #require(try CrashAndDoctorTests.apphome(root, ["install", CrashAndDoctorTests.v1]).status == 0)
        let home = try CrashAndDoctorTests.apphome(root, ["container", "com.example.ScaryBugs", "data"]).stdout
            .trimmingCharacters(in: .newlines)
        let first = try postrm(root, action)
        #expect(first.status == 0 && first.stderr.isEmpty, "\(first)")
        #expect(first.stdout == "uninstalled com.example.ScaryBugs 1.0 (1): removed \(home)\n")
        #expect(!FileManager.default.fileExists(atPath: home))
        let again = try postrm(root, action)
        #expect(again.status == 0 && again.stdout.isEmpty && again.stderr.isEmpty, "\(again)")
    }

    @Test func upgradeKeepsTheAppAndOtherErrorsAreReportedNotFatal() throws {
        let root = try TempRoot()
        try #require(try CrashAndDoctorTests.apphome(root, ["install", CrashAndDoctorTests.v1]).status == 0)
        #expect(try postrm(root, "upgrade").status == 0)
        #expect(try CrashAndDoctorTests.apphome(root, ["info", "com.example.ScaryBugs"]).status == 0)
        let unknown = try postrm(root, "frobnicate")
        #expect(unknown.status == 1 && unknown.stderr == "scarybugs postrm: called with unknown argument 'frobnicate'\n")
        // A newer registry makes apphome fail: the removal still succeeds, with the reason on stderr.
        try root.writePlist("{'FormatVersion': 99, 'Applications': {}}", to: root.root.appendingPathComponent("Applications/registry.plist"))
        let failed = try postrm(root, "remove")
        #expect(failed.status == 0)
        #expect(failed.stderr.hasPrefix("scarybugs postrm: apphome: registry "))
    }

    @Test func controlHasTheFieldsDpkgNeeds() throws {
        let control = try String(contentsOf: Self.package.appendingPathComponent("control"), encoding: .utf8)
        let fields = Set(control.split(separator: "\n").compactMap { line -> String? in
            line.first == " " ? nil : line.split(separator: ":").first.map(String.init)
        })
        #expect(fields.isSuperset(of: ["Package", "Version", "Architecture", "Maintainer", "Description"]))
        #expect(control.contains("Package: scarybugs\n"))
        var st = stat()
        stat(Self.package.appendingPathComponent("postrm").path, &st)
        #expect(st.st_mode & 0o777 == 0o755, "dpkg wants maintainer scripts 0755")
    }
}
