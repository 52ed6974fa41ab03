#if canImport(Glibc)
import Glibc
#endif
import AppHomeSystem
import CommandSupport
import Foundation
import Preferences
import PropertyList
import Testing
@testable import DefaultsCommand

/// `defaults apply` is all or nothing (issue 23, findings 6 and 8), on real
/// files: every lock and every new file before the first domain is
/// replaced; a failure after that is listed and finished by the next run.
@Suite final class ApplyAllOrNothingTests {
    let root: String

    init() throws {
        root = NSTemporaryDirectory() + "apphome-apply-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: root) }

    var preferences: String { root + "/Library/Preferences" }

    struct Result { var status: Int32; var out: String; var err: String }

    @discardableResult
    func defaults(_ args: [String], input: String = "") -> Result {
        let console = CapturingConsole(input: Array(input.utf8))
        let status = DefaultsCommand.run(["--root", root] + args, configuration: Configuration(root: root, serviceMode: .success(.off)), console: console)
        return Result(status: status, out: console.standardOutput, err: console.standardError)
    }

    func file(_ text: String, _ name: String = "desired.plist") throws -> String {
        let path = root + "/" + name
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    func snapshot() -> [String: Data] {
        var out: [String: Data] = [:]
        for name in (try? FileManager.default.contentsOfDirectory(atPath: preferences)) ?? [] where name.hasSuffix(".plist") {
            out[name] = FileManager.default.contents(atPath: preferences + "/" + name)
        }
        return out
    }

    @Test func aDomainThatCannotBeLockedChangesNothing() throws {
        #expect(defaults(["write", "com.a", "x", "-int", "1"]).status == 0)
        #expect(defaults(["write", "com.b", "x", "-int", "1"]).status == 0)
        try FileManager.default.removeItem(atPath: preferences + "/.com.b.plist.lock")
        try FileManager.default.createDirectory(atPath: preferences + "/.com.b.plist.lock", withIntermediateDirectories: false)
        let before = snapshot()
        let r = defaults(["apply", try file("{ \"com.a\" = { x = 2; }; \"com.b\" = { x = 2; }; }")])
        #expect(r.status == 1 && r.out.isEmpty, "\(r)")
        #expect(r.err.contains(".com.b.plist.lock"), "\(r)")
        #expect(snapshot() == before)
        #expect(!((try? FileManager.default.contentsOfDirectory(atPath: preferences)) ?? []).contains { $0.hasSuffix(".pending") || $0.hasSuffix(".journal") })
    }

    @Test func aFailureAfterTheFirstReplaceListsWhatWasCommittedAndTheNextRunFinishes() throws {
        #expect(defaults(["write", "com.a", "x", "-int", "1"]).status == 0)
        #expect(defaults(["write", "com.b", "x", "-int", "1"]).status == 0)
        let desired = try file("{ \"com.a\" = { x = 2; }; \"com.b\" = { x = 2; }; }")
        let target = preferences + "/com.b.plist"
        let r = SystemFaults.injecting({ call, path in call == "rename" && path == target ? EIO : nil }) {
            defaults(["apply", desired])
        }
        #expect(r.status == 1, "\(r)")
        #expect(r.out == "com.a: changed x = 2 (was 1)\n", "\(r)")
        #expect(r.err.contains("the domains of the changes listed were committed"), "\(r)")
        // The next run finishes com.b from the journal, and has nothing left to change.
        let again = defaults(["apply", desired])
        #expect(again.status == 0 && again.out.isEmpty, "\(again)")
        #expect(again.err == "defaults: \(target): finished the interrupted apply\n", "\(again)")
        #expect(defaults(["read", "com.b", "x"]).out == "2\n")
        #expect(!((try? FileManager.default.contentsOfDirectory(atPath: preferences)) ?? []).contains { $0.hasSuffix(".pending") || $0.hasSuffix(".journal") })
    }

    @Test func aDomainAndItsFilesPathInOneFileAreOneDomain() throws {
        #expect(defaults(["write", "com.b", "x", "-int", "1"]).status == 0)
        let before = snapshot()
        let r = defaults(["apply", try file("{ \"com.b\" = { x = 2; }; \"\(preferences)/com.b\" = { x = 3; }; }")])
        #expect(r.status == 1 && r.out.isEmpty, "\(r)")
        #expect(r.err.contains("domains \(preferences)/com.b and com.b are one domain (a domain and its file's path); give it once"), "\(r)")
        #expect(snapshot() == before)
    }

    @Test func anXMLFileWithADomainTwiceIsAnError() throws {
        let xml = """
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0"><dict>
            <key>com.a</key><dict><key>x</key><integer>1</integer></dict>
            <key>com.a</key><dict><key>x</key><integer>2</integer></dict>
            </dict></plist>
            """
        let r = defaults(["apply", try file(xml)])
        #expect(r.status == 1 && r.out.isEmpty, "\(r)")
        #expect(r.err.contains("key \"com.a\" appears twice in one <dict>"), "\(r)")
        #expect(snapshot().isEmpty)
    }

    @Test func currentHostIsAnOptionNotADomain() throws {
        let r = defaults(["apply", try file("{ \"-currentHost\" = { x = 1; }; }")])
        #expect(r.status == 1, "\(r)")
        #expect(r.err.contains("-currentHost is an option of defaults, not a domain"), "\(r)")
        #expect(snapshot().isEmpty)
    }

    @Test func aKeyWithALineEndCannotFakeALineOfOutput() throws {
        let r = defaults(["apply", try file("{ \"com.a\" = { \"k\\ncom.a: removed everything\" = 1; }; }")])
        #expect(r.status == 0, "\(r)")
        #expect(r.out == "com.a: added k\\x0Acom.a: removed everything = 1\n", "\(r)")
    }

    /// Domains are bytes: "é" as one scalar and as "e" + U+0301 are two
    /// domains (two files), not one given twice.
    @Test func canonicallyEquivalentDomainsAreTwoDomains() throws {
        let r = defaults(["apply", try file("{ \"com.caf\u{E9}\" = { x = 1; }; \"com.cafe\u{301}\" = { x = 2; }; }")])
        #expect(r.status == 0, "\(r)")
        #expect(FileManager.default.contents(atPath: preferences + "/com.caf\u{E9}.plist") != nil)
        #expect(FileManager.default.contents(atPath: preferences + "/com.cafe\u{301}.plist") != nil)
        #expect(defaults(["read", "com.caf\u{E9}", "x"]).out == "1\n")
        #expect(defaults(["read", "com.cafe\u{301}", "x"]).out == "2\n")
    }
}
