import Testing
import PropertyList
@testable import Preferences

@Suite struct SearchListTests {
    func makeDefaults() throws -> UserDefaults {
        let store = InMemoryPreferenceStore()
        try store.update(.named("com.app"), scope: .anyHost) { $0 = ["app": .integer(1), "shared": .string("app")] }
        try store.update(.global, scope: .anyHost) { $0 = ["global": .integer(2), "shared": .string("global"), "lang": .string("en")] }
        var defaults = UserDefaults(store: store, domain: .named("com.app"), arguments: ["arg": .string("x"), "lang": .string("fr")])
        defaults.register(["reg": .bool(true), "app": .integer(99), "global": .integer(99)])
        return defaults
    }

    @Test func resolvesThroughArgumentApplicationGlobalRegistration() throws {
        let d = try makeDefaults()
        #expect(try d.resolve("arg") == ResolvedValue(value: .string("x"), layer: .argument))
        #expect(try d.resolve("lang") == ResolvedValue(value: .string("fr"), layer: .argument))
        #expect(try d.resolve("app") == ResolvedValue(value: .integer(1), layer: .application))
        #expect(try d.resolve("shared") == ResolvedValue(value: .string("app"), layer: .application))
        #expect(try d.resolve("global") == ResolvedValue(value: .integer(2), layer: .global))
        #expect(try d.resolve("reg") == ResolvedValue(value: .bool(true), layer: .registration))
        #expect(try d.resolve("none") == nil)
    }

    @Test func dictionaryRepresentationMergesInSearchOrder() throws {
        let all = try makeDefaults().dictionaryRepresentation()
        #expect(all["lang"] == .string("fr"))
        #expect(all["shared"] == .string("app"))
        #expect(all["app"] == .integer(1))
        #expect(all["reg"] == .bool(true))
    }

    @Test func setWritesTheApplicationDomainOnly() throws {
        let d = try makeDefaults()
        try d.set(.integer(5), forKey: "new")
        #expect(try d.store.read(.named("com.app"))?["new"] == .integer(5))
        #expect(try d.store.read(.global)?["new"] == nil)
        try d.set(nil, forKey: "new")
        #expect(try d.resolve("new") == nil)
    }

    @Test func parsesTheArgumentDomainLikeNSUserDefaults() {
        let args = UserDefaults.argumentDomain(from: ["prog", "-Size", "(1, 2)", "-Name", "Ray", "file.txt", "--verbose", "-Flag"])
        #expect(args == ["Size": .array([.string("1"), .string("2")]), "Name": .string("Ray")])
    }
}

@Suite struct ManagedLayerTests {
    @Test func aForcedKeyIsAboveTheArgumentDomainAndReportsItself() throws {
        let store = InMemoryPreferenceStore()
        try store.update(.named("com.app"), scope: .anyHost) { $0 = ["size": .integer(1)] }
        let d = UserDefaults(store: store, domain: .named("com.app"), arguments: ["size": .integer(2)], managed: ["size": .integer(3)])
        #expect(try d.resolve("size") == ResolvedValue(value: .integer(3), layer: .managed))
        #expect(try d.dictionaryRepresentation()["size"] == .integer(3))
        #expect(d.objectIsForced(forKey: "size"))
        #expect(!d.objectIsForced(forKey: "other"))
    }

    @Test func theManagedPolicyRefusesSettingChangingAndRemovingAForcedKeyEvenWithForce() throws {
        let dir = TemporaryDirectory()
        let file = dir.path + "/com.app.plist"
        dir.write("com.app.plist", Array("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<plist version=\"1.0\"><dict><key>size</key><integer>3</integer></dict></plist>\n".utf8))
        let policy = ManagedWritePolicy(ManagedPreferences(directory: dir.path))
        let refusal = PreferencesError.policyViolation(ManagedWritePolicy.refusal(key: "size", domain: .named("com.app"), file: file))
        #expect(throws: refusal) { try policy.check(.named("com.app"), old: [:], new: ["size": .integer(1)], options: WriteOptions(force: true)) }
        #expect(throws: refusal) { try policy.check(.named("com.app"), old: ["size": .integer(1)], new: [:], options: WriteOptions()) }
        #expect(throws: refusal) { try policy.check(.named("com.app"), old: ["size": .integer(3)], new: ["size": .integer(3)], options: WriteOptions(checkedKeys: ["size"])) }
        #expect(try policy.check(.named("com.app"), old: ["size": .integer(1)], new: ["size": .integer(1), "free": .bool(true)], options: WriteOptions()) == [])
        #expect(try policy.check(.named("com.other"), old: [:], new: ["size": .integer(1)], options: WriteOptions()) == [])
    }
}
