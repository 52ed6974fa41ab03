import Testing
@testable import Keychain

/// SecItem semantics as Apple documents them: primary keys, match limits,
/// return keys, wildcards, synchronizable, update and delete.
@Suite struct QuerySemanticsTests {
    /// (first item, second item, expected status of adding the second).
    static let duplicateCases: [(String, ItemAttributes, ItemAttributes, Int32)] = [
        ("same account and service", generic("alice", "github"), generic("alice", "github"), -25299),
        ("only the label differs", generic("alice", "github", label: "a"), generic("alice", "github", label: "b"), -25299),
        ("only generic data differs (not in the primary key)", generic("alice", "github", generic: "x"), generic("alice", "github", generic: "y"), -25299),
        ("only accessibility differs", generic("alice", "github"), generic("alice", "github", accessibility: .afterFirstUnlockThisDeviceOnly), -25299),
        ("another account", generic("alice", "github"), generic("bob", "github"), 0),
        ("another service", generic("alice", "github"), generic("alice", "gitlab"), 0),
        ("synchronizable differs", generic("alice", "github"), generic("alice", "github", sync: true), 0),
        ("internet: same everything", internet("alice", "example.com"), internet("alice", "example.com"), -25299),
        ("internet: another port", internet("alice", "example.com"), internet("alice", "example.com", port: 8443), 0),
        ("internet: another protocol", internet("alice", "example.com"), internet("alice", "example.com", protocol: "http"), 0),
        ("internet: another path", internet("alice", "example.com"), internet("alice", "example.com", path: "/x"), 0),
    ]

    @Test(arguments: duplicateCases.indices)
    func addDetectsDuplicatesByPrimaryKey(_ i: Int) throws {
        let (_, first, second, expected) = Self.duplicateCases[i]
        let s = KeychainScratch()
        let k = s.keychain()
        let app = try context("com.example.A")
        try k.add(first, data: secret("one"), context: app)
        #expect(status { () throws(KeychainError) in try k.add(second, data: secret("two"), context: app) } == expected, "\(Self.duplicateCases[i].0)")
    }

    @Test func nothingFoundIsItemNotFoundNeverAnEmptyResult() throws {
        let s = KeychainScratch()
        let k = s.keychain()
        let app = try context("com.example.A")
        #expect(status { () throws(KeychainError) in _ = try k.copyMatching(query(account: "x"), context: app) } == -25300)
        try k.add(generic("alice", "github"), data: secret("pw"), context: app)
        #expect(status { () throws(KeychainError) in _ = try k.copyMatching(query(account: "bob"), context: app) } == -25300)
        #expect(status { () throws(KeychainError) in _ = try k.copyMatching(query(.internetPassword), context: app) } == -25300)
    }

    @Test func matchLimitOneIsTheDefaultAndAllReturnsEveryMatch() throws {
        let s = KeychainScratch()
        let k = s.keychain()
        let app = try context("com.example.A")
        for name in ["a", "b", "c"] { try k.add(generic(name, "svc"), data: secret("pw-" + name), context: app) }
        #expect(ItemQuery(itemClass: .genericPassword).matchLimit == .one)
        #expect(try k.copyMatching(query(service: "svc"), context: app).count == 1)
        let all = try k.copyMatching(query(service: "svc", limit: .all, attributes: true), context: app)
        #expect(all.map { $0.attributes!.account }.sorted() == ["a", "b", "c"])
        #expect(all.compactMap { text($0.data) }.sorted() == ["pw-a", "pw-b", "pw-c"])
    }

    /// (returnData, returnAttributes) → (data present, attributes present).
    @Test(arguments: [(false, false, false, false), (true, false, true, false), (false, true, false, true), (true, true, true, true)])
    func returnKeysDecideWhatComesBack(data: Bool, attributes: Bool, hasData: Bool, hasAttributes: Bool) throws {
        let s = KeychainScratch()
        let k = s.keychain()
        let app = try context("com.example.A")
        try k.add(generic("alice", "github", label: "GitHub"), data: secret("pw"), context: app)
        let r = try k.copyMatching(query(account: "alice", data: data, attributes: attributes), context: app)
        #expect(r.count == 1)
        #expect((r[0].data != nil) == hasData)
        #expect((r[0].attributes != nil) == hasAttributes)
        if hasAttributes {
            let a = r[0].attributes!
            let g = try group("com.example.A")
            #expect(a.label == "GitHub" && a.service == "github" && a.accessGroup == g)
            #expect(a.creationDate == testClock() && a.modificationDate == testClock())
        }
    }

    @Test func absentAttributesAreWildcardsAndStringsMatchExactly() throws {
        let s = KeychainScratch()
        let k = s.keychain()
        let app = try context("com.example.A")
        try k.add(generic("Alice", "github"), data: secret("pw"), context: app)
        #expect(try k.copyMatching(query(), context: app).count == 1)
        #expect(status { () throws(KeychainError) in _ = try k.copyMatching(query(account: "alice"), context: app) } == -25300)
        #expect(status { () throws(KeychainError) in _ = try k.copyMatching(query(service: "git"), context: app) } == -25300)
    }

    /// (query synchronizable, accounts found among a plain "p" and a synchronizable "s").
    @Test(arguments: [(ItemQuery.Synchronizable.no, ["p"]), (.yes, ["s"]), (.any, ["p", "s"])])
    func synchronizableDefaultsToNoAsOnApplePlatforms(sync: ItemQuery.Synchronizable, expected: [String]) throws {
        let s = KeychainScratch()
        let k = s.keychain()
        let app = try context("com.example.A")
        try k.add(generic("p", "svc"), data: secret("1"), context: app)
        try k.add(generic("s", "svc", sync: true), data: secret("2"), context: app)
        let r = try k.copyMatching(query(service: "svc", limit: .all, data: false, attributes: true, sync: sync), context: app)
        #expect(r.map { $0.attributes!.account }.sorted() == expected)
        // A query that says nothing about it finds only the plain item.
        var bare = ItemQuery(itemClass: .genericPassword)
        bare.service = "svc"
        bare.matchLimit = .all
        bare.returnAttributes = true
        #expect(try k.copyMatching(bare, context: app).map { $0.attributes!.account } == ["p"])
    }

    @Test func updateChangesEveryMatchAndTheModificationDate() throws {
        let s = KeychainScratch()
        let k1 = s.keychain()
        let app = try context("com.example.A")
        try k1.add(generic("a", "svc"), data: secret("old"), context: app)
        try k1.add(generic("b", "svc"), data: secret("old"), context: app)
        let k2 = s.keychain(clock: { .init(secondsSince1970: 1_900_000_000) })
        var changes = ItemChanges()
        changes.data = secret("new")
        changes.label = .some("L")
        try k2.update(query(service: "svc", data: false), with: changes, context: app)
        let r = try k2.copyMatching(query(service: "svc", limit: .all, attributes: true), context: app)
        #expect(r.compactMap { text($0.data) } == ["new", "new"])
        #expect(r.allSatisfy { $0.attributes!.label == "L" && $0.attributes!.creationDate == testClock() })
        #expect(r.allSatisfy { $0.attributes!.modificationDate.secondsSince1970 == 1_900_000_000 })
    }

    static let updateErrors: [(String, Int32)] = [
        ("return keys in the query", -50), ("no changes", -50), ("no match", -25300), ("collides with another item", -25299),
        ("group the app lacks", -34018),
    ]

    @Test(arguments: updateErrors.indices)
    func updateRefusesBadRequestsAndChangesNothing(_ i: Int) throws {
        let s = KeychainScratch()
        let k = s.keychain()
        let app = try context("com.example.A")
        try k.add(generic("a", "svc"), data: secret("pa"), context: app)
        try k.add(generic("b", "svc"), data: secret("pb"), context: app)
        let before = s.bytes(s.keychains + "/com.example.A.keychain")
        var q = query(account: "a", data: false)
        var changes = ItemChanges()
        changes.data = secret("x")
        switch i {
        case 0: q.returnData = true
        case 1: changes = ItemChanges()
        case 2: q.account = "zzz"
        case 3: changes.account = "b"
        default: changes.accessGroup = try group("com.example.Other")
        }
        #expect(status { () throws(KeychainError) in try k.update(q, with: changes, context: app) } == Self.updateErrors[i].1, "\(Self.updateErrors[i].0)")
        #expect(s.bytes(s.keychains + "/com.example.A.keychain") == before)
    }

    @Test func deleteRemovesEveryMatch() throws {
        let s = KeychainScratch()
        let k = s.keychain()
        let app = try context("com.example.A")
        for name in ["a", "b"] { try k.add(generic(name, "svc"), data: secret("1"), context: app) }
        try k.add(generic("c", "other"), data: secret("1"), context: app)
        try k.delete(query(service: "svc", data: false), context: app)
        #expect(try k.copyMatching(query(limit: .all, attributes: true), context: app).map { $0.attributes!.account } == ["c"])
        #expect(status { () throws(KeychainError) in try k.delete(query(service: "svc"), context: app) } == -25300)
    }

    @Test func appsSeeOnlyTheirGroupsAndAddsGoToTheFirstGroup() throws {
        let s = KeychainScratch()
        let k = s.keychain()
        let a = try context("com.example.A", ["group.shared"])
        let b = try context("com.example.B", ["group.shared"])
        let c = try context("com.example.C")
        try k.add(generic("mine", "svc"), data: secret("a"), context: a)
        try k.add(generic("ours", "svc", group: try group("group.shared")), data: secret("shared"), context: a)
        let own = try group("com.example.A")
        #expect(try k.copyMatching(query(account: "mine", attributes: true), context: a)[0].attributes!.accessGroup == own)
        // B sees the shared item only; C sees nothing.
        #expect(try k.copyMatching(query(limit: .all, attributes: true), context: b).map { $0.attributes!.account } == ["ours"])
        #expect(text(try k.copyMatching(query(account: "ours"), context: b)[0].data) == "shared")
        #expect(status { () throws(KeychainError) in _ = try k.copyMatching(query(), context: c) } == -25300)
        // Naming a group the app lacks is an entitlement error, for every call.
        let foreign = try group("com.example.A")
        #expect(status { () throws(KeychainError) in _ = try k.copyMatching(query(group: foreign), context: c) } == -34018)
        #expect(status { () throws(KeychainError) in try k.add(generic("x", "y", group: foreign), data: secret("z"), context: c) } == -34018)
        #expect(status { () throws(KeychainError) in try k.delete(query(group: foreign), context: c) } == -34018)
        #expect(status { () throws(KeychainError) in try k.delete(query(account: "mine"), context: b) } == -25300)
    }

    @Test func updateCanMoveAnItemToAnotherGroupOfTheApp() throws {
        let s = KeychainScratch()
        let k = s.keychain()
        let a = try context("com.example.A", ["group.shared"])
        let b = try context("com.example.B", ["group.shared"])
        try k.add(generic("move", "svc"), data: secret("pw"), context: a)
        var changes = ItemChanges()
        changes.accessGroup = try group("group.shared")
        try k.update(query(account: "move", data: false), with: changes, context: a)
        #expect(text(try k.copyMatching(query(account: "move"), context: b)[0].data) == "pw")
        #expect(s.files().contains("com.example.A.keychain") == false)
    }

    /// Access-group names become file names: anything that could leave the directory is refused.
    @Test(arguments: ["", "..", "../x", "a/b", ".hidden", "a..b", "a b", "é"])
    func invalidGroupNamesAreRefused(_ name: String) {
        #expect(throws: KeychainError.self) { try AccessGroup(name) }
    }

    @Test func secretsPrintRedacted() {
        let s = secret("hunter2")
        #expect("\(s)" == "<redacted>")
        #expect(String(reflecting: s) == "<redacted>")
        var r = ItemResult()
        r.data = s
        #expect(!"\(r)".contains("hunter2"))
    }
}

