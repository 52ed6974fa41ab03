import Foundation
import Testing
import PropertyList
@testable import Preferences
import PrefsClient
import PrefsService

/// The contract every ``PreferenceStore`` keeps, run against the file store
/// the in-memory store and prefsd's store (a service in process) alike.
@Suite struct PreferenceStoreContractTests {
    enum Kind: String, CaseIterable { case file, memory, daemon }

    struct Fixture {
        let directory = TemporaryDirectory()
        let store: PreferenceStore
        let service: InProcessService?
        init(_ kind: Kind) throws {
            switch kind {
            case .file: store = FilePreferenceStore(root: directory.path); service = nil
            case .memory: store = InMemoryPreferenceStore(); service = nil
            case .daemon:
                let socket = directory.path + "/run/prefsd.sock"
                service = try InProcessService(configuration: ServerConfiguration(
                    root: directory.path, socketPath: socket, ownerUID: getuid(), log: { _ in }))
                store = DaemonPreferenceStore(connection: try PrefsConnection(socketPath: socket, root: directory.path))
            }
        }
    }

    struct Boom: Error {}

    @Test(arguments: Kind.allCases)
    func readOfAMissingDomainIsNil(kind: Kind) throws {
        let f = try Fixture(kind)
        #expect(try f.store.read(.named("com.none")) == nil)
    }

    @Test(arguments: Kind.allCases)
    func updateCommitsAndReadsBack(kind: Kind) throws {
        let f = try Fixture(kind)
        try f.store.update(.named("com.a"), scope: .anyHost) { $0["k"] = .integer(1) }
        try f.store.update(.named("com.a"), scope: .anyHost) { $0["j"] = .string("x") }
        #expect(try f.store.read(.named("com.a")) == ["k": .integer(1), "j": .string("x")])
        #expect(try f.store.domainNames() == ["com.a"])
    }

    @Test(arguments: Kind.allCases)
    func aThrowingChangeWritesNothing(kind: Kind) throws {
        let f = try Fixture(kind)
        try f.store.update(.named("com.a"), scope: .anyHost) { $0["k"] = .integer(1) }
        #expect(throws: Boom.self) {
            try f.store.update(.named("com.a"), scope: .anyHost) { $0["k"] = .integer(2); throw Boom() }
        }
        #expect(try f.store.read(.named("com.a")) == ["k": .integer(1)])
    }

    @Test(arguments: Kind.allCases)
    func emptyingADomainRemovesIt(kind: Kind) throws {
        let f = try Fixture(kind)
        try f.store.update(.named("com.a"), scope: .anyHost) { $0["k"] = .integer(1) }
        try f.store.update(.named("com.a"), scope: .anyHost) { $0 = [:] }
        #expect(try f.store.read(.named("com.a")) == nil)
        #expect(try f.store.domainNames() == [])
    }

    @Test(arguments: Kind.allCases)
    func hostScopesAreSeparateCopies(kind: Kind) throws {
        let f = try Fixture(kind)
        try f.store.update(.named("com.a"), scope: .currentHost) { $0["k"] = .integer(1) }
        #expect(try f.store.read(.named("com.a")) == nil)
        #expect(try f.store.read(.named("com.a"), scope: .currentHost) == ["k": .integer(1)])
    }

    @Test(arguments: Kind.allCases)
    func tooDeepAValueIsRefusedAndNothingChanges(kind: Kind) throws {
        let f = try Fixture(kind)
        var deep = PlistValue.integer(0)
        for _ in 0..<(PlistValue.maximumDepth + 5) { deep = .array([deep]) }
        #expect(throws: PreferencesError.self) {
            try f.store.update(.named("com.a"), scope: .anyHost) { $0["deep"] = deep }
        }
        #expect(try f.store.read(.named("com.a")) == nil)
    }
}

@Suite struct FilePreferenceStoreTests {
    @Test func writesBinaryPlistsWithPrivateModes() throws {
        let dir = TemporaryDirectory()
        let store = FilePreferenceStore(root: dir.path)
        try store.update(.named("com.a"), scope: .anyHost) { $0["k"] = .string("v") }
        let bytes = try #require(dir.read("Library/Preferences/com.a.plist"))
        #expect(bytes.starts(with: Array("bplist00".utf8)))
        #expect(dir.mode("Library/Preferences/com.a.plist") == 0o600)
        #expect(dir.mode("Library") == 0o700)
        #expect(dir.mode("Library/Preferences") == 0o700)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: dir.path + "/Library/Preferences").filter { $0.hasSuffix(".tmp") }
        #expect(leftovers.isEmpty)
    }

    @Test func readsXMLAndOldStyleFiles() throws {
        let dir = TemporaryDirectory()
        dir.write("Library/Preferences/com.xml.plist", Array("""
        <?xml version="1.0" encoding="UTF-8"?>
        <plist version="1.0"><dict><key>n</key><integer>5</integer></dict></plist>
        """.utf8))
        dir.write("Library/Preferences/com.old.plist", Array("{ n = 5; }".utf8))
        let store = FilePreferenceStore(root: dir.path)
        #expect(try store.read(.named("com.xml")) == ["n": .integer(5)])
        #expect(try store.read(.named("com.old")) == ["n": .string("5")])
    }

    @Test func neverOverwritesACorruptDomain() throws {
        let dir = TemporaryDirectory()
        let garbage: [UInt8] = Array("bplist00 this is not a plist".utf8)
        dir.write("Library/Preferences/com.bad.plist", garbage)
        let store = FilePreferenceStore(root: dir.path)
        #expect(throws: PreferencesError.self) { try store.read(.named("com.bad")) }
        #expect(throws: PreferencesError.self) { try store.update(.named("com.bad"), scope: .anyHost) { $0["k"] = .integer(1) } }
        #expect(dir.read("Library/Preferences/com.bad.plist") == garbage)
    }

    @Test func reportsANonDictionaryDomainWithItsPath() throws {
        let dir = TemporaryDirectory()
        dir.write("Library/Preferences/com.arr.plist", Array("(a, b)".utf8))
        let store = FilePreferenceStore(root: dir.path)
        #expect(throws: PreferencesError.notADictionary(.named("com.arr"), path: dir.path + "/Library/Preferences/com.arr.plist")) {
            try store.read(.named("com.arr"))
        }
    }

    @Test func keepsAStableHostIdentifier() throws {
        let dir = TemporaryDirectory()
        let a = try HostIdentifier.loadOrCreate(root: dir.path)
        let b = try HostIdentifier.loadOrCreate(root: dir.path)
        #expect(a == b)
        #expect(a.count == 36 && a == a.uppercased())
    }

    @Test func concurrentUpdatesOfDistinctKeysAllSurvive() async throws {
        let dir = TemporaryDirectory()
        let root = dir.path
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    let store = FilePreferenceStore(root: root)
                    for i in 0..<20 {
                        try? store.update(.named("com.shared"), scope: .anyHost) { $0["w\(worker)_\(i)"] = .integer(Int128(i)) }
                    }
                }
            }
        }
        #expect(try FilePreferenceStore(root: root).read(.named("com.shared"))?.count == 160)
    }
}

@Suite struct StaleTemporaryFileTests {
    @Test func aWriteRemovesTemporaryFilesLeftByAKilledWriter() throws {
        let dir = TemporaryDirectory()
        let store = FilePreferenceStore(root: dir.path)
        try store.update(.named("com.a"), scope: .anyHost) { $0["k"] = .integer(1) }
        dir.write("Library/Preferences/.com.a.plist.AbCdEfGh.tmp", [1, 2, 3])
        dir.write("Library/Preferences/.com.b.plist.AbCdEfGh.tmp", [1, 2, 3])
        try store.update(.named("com.a"), scope: .anyHost) { $0["k"] = .integer(2) }
        #expect(dir.read("Library/Preferences/.com.a.plist.AbCdEfGh.tmp") == nil)
        #expect(dir.read("Library/Preferences/.com.b.plist.AbCdEfGh.tmp") == [1, 2, 3])
        #expect(try store.read(.named("com.a")) == ["k": .integer(2)])
    }
}
