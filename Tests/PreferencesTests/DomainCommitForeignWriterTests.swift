import Foundation
import Preferences
import PropertyList
import Testing

/// A domain that another writer (stock Foundation, which takes no lock)
/// is rewriting in place cannot be read for a moment: the commit reads it
/// again and keeps that writer's keys, and never overwrites a domain that
/// stays unreadable.
@Suite struct DomainCommitForeignWriterTests {
    @Test func aDomainCaughtMidRewriteIsReadAgainAndItsKeysAreKept() throws {
        let dir = TemporaryDirectory()
        let path = dir.path + "/com.example.App.plist"
        let domain = Domain.named("com.example.App")
        let failures = LockedCount(2)
        let outcome = try DomainCommit.run(domain, path: path, load: { d, p throws(PreferencesError) in
            if failures.take() { throw .unreadableDomain(d, path: p, reason: "the file is empty") }
            return ["fromFoundation": .string("kept")]
        }) { contents in contents["fromAppHome"] = .string("new") }
        #expect(outcome.outcome.new == ["fromFoundation": .string("kept"), "fromAppHome": .string("new")])
        #expect(failures.remaining == 0)
    }

    @Test func aDomainThatStaysUnreadableIsNeverOverwritten() throws {
        let dir = TemporaryDirectory()
        dir.write("com.example.App.plist", Array("<?xml version=\"1.0\"?><plist><dict><key>a</key>".utf8))
        let before = dir.read("com.example.App.plist")
        #expect(throws: PreferencesError.self) {
            try DomainCommit.run(.named("com.example.App"), path: dir.path + "/com.example.App.plist") { $0["b"] = .string("x") }
        }
        #expect(dir.read("com.example.App.plist") == before)
    }
}

/// How many more loads fail (shared with the non-escaping load closure).
final class LockedCount: @unchecked Sendable {
    private let lock = NSLock()
    private var count: Int
    init(_ count: Int) { self.count = count }
    var remaining: Int { lock.withLock { count } }
    /// Whether this load should fail (counts it).
    func take() -> Bool { lock.withLock { if count > 0 { count -= 1; return true }; return false } }
}
