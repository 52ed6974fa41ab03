import PropertyList
@testable import Preferences
import Testing
@testable import SettingsBundle

@Suite struct VariantAndRegistrationTests {
    static let bundle = BundleDirectory([
        "Root.plist": Rows.page([Rows.group(), Rows.toggle("a"), Rows.child("Child")]),
        "Root~ipad.plist": Rows.page([Rows.group(), Rows.toggle("a", ["DefaultValue": false]), Rows.toggle("padOnly"), Rows.child("Child")]),
        "Child.plist": Rows.page([Rows.group(), Rows.toggle("c"),
                                  Rows.toggle("hiddenOnPhone", ["SupportedUserInterfaceIdioms": ["Pad"]])]),
        "Child~ipad.plist": Rows.page([Rows.group(), Rows.toggle("c", ["DefaultValue": false])]),
    ], forProcess: true)

    @Test func phoneUsesThePlainPagesAndPadItsVariants() {
        #expect(Registration.defaults(of: Self.bundle.bundle, idiom: .phone) == ["a": true, "c": true])
        #expect(Registration.defaults(of: Self.bundle.bundle, idiom: .pad) == ["a": false, "padOnly": true, "c": false])
    }

    @Test func pageFilesResolveVariantFirst() {
        #expect(Self.bundle.bundle.pageFile("Root", idiom: .pad) == "Root~ipad.plist")
        #expect(Self.bundle.bundle.pageFile("Root", idiom: .phone) == "Root.plist")
        #expect(Self.bundle.bundle.pageFile("Nope", idiom: .phone) == nil)
    }

    @Test func aPadOnlyRootLintsForPadAndIsMissingOnPhone() {
        let dir = BundleDirectory(["Root~ipad.plist": Rows.page([Rows.group()])])
        #expect(Linter().lint(dir.bundle).findings.map(\.text) == [
            "error: no root page: neither Root~iphone.plist nor Root.plist exists in Settings.bundle [SB100]",
            "Root~ipad.plist: info: device variant Root~ipad.plist has no base page Root.plist; it is used only on pad [SB105]",
        ])
        #expect(Registration.defaults(of: dir.bundle, idiom: .pad) == [:])
    }

    @Test func bothVariantsAreLinted() {
        let dir = BundleDirectory([
            "Root.plist": Rows.page([Rows.group()]),
            "Root~ipad.plist": Rows.page([Rows.group(), Rows.toggle("t", ["DefaultValue": "x"])]),
        ])
        #expect(Linter().lint(dir.bundle).findings.map(\.rule) == ["SB421", "SB604"])
        #expect(Linter().lint(dir.bundle, idioms: [.phone]).findings.isEmpty)
    }

    @Test func theLastRowOfAKeyWinsAndReadOnlyRowsRegisterOnlyWhenAsked() {
        let dir = BundleDirectory(["Root.plist": Rows.page([
            Rows.group(), Rows.toggle("k"), Rows.toggle("k", ["DefaultValue": false]),
            .dictionary(["Type": "PSTitleValueSpecifier", "Key": "ro", "DefaultValue": "1"]),
            .dictionary(["Type": "PSTextFieldSpecifier", "Key": "noDefault"]),
        ])])
        #expect(Registration.defaults(of: dir.bundle) == ["k": false])
        #expect(Registration.defaults(of: dir.bundle, includeReadOnly: true) == ["k": false, "ro": "1"])
    }

    @Test func binaryPagesLoadLikeXMLOnes() {
        let dir = BundleDirectory(["Root.plist": Rows.page([Rows.group(), Rows.toggle("b")])], binary: true)
        #expect(Registration.defaults(of: dir.bundle) == ["b": true])
        #expect(Linter().lint(dir.bundle).findings.isEmpty)
    }

    @Test func userDefaultsResolvesBundleDefaultsAsTheRegistrationLayer() throws {
        let store = InMemoryPreferenceStore()
        try store.update(.named("com.app"), scope: .anyHost) { $0 = ["c": false] }
        try store.update(.global, scope: .anyHost) { $0 = ["a": false] }
        var defaults = UserDefaults(store: store, domain: .named("com.app"), arguments: ["x": "arg"])
        defaults.register(settingsBundle: Self.bundle.bundle)
        #expect(try defaults.resolve("c") == ResolvedValue(value: false, layer: .application))
        #expect(try defaults.resolve("a") == ResolvedValue(value: false, layer: .global))
        #expect(try defaults.resolve("x") == ResolvedValue(value: "arg", layer: .argument))
        try store.update(.global, scope: .anyHost) { $0 = [:] }
        #expect(try defaults.resolve("a") == ResolvedValue(value: true, layer: .registration))
        #expect(try defaults.resolve("hiddenOnPhone") == nil)
    }

    @Test(arguments: ["ScaryBugs-v1", "ScaryBugs-v2"])
    func scaryBugsSettingsBundleLintsCleanAndRegistersItsDefaults(example: String) throws {
        let bundle = try SettingsBundle(path: Fixtures.repository + "/examples/\(example)/ScaryBugs.app/Settings.bundle")
        #expect(Linter().lint(bundle).findings.map(\.text) == [])
        #expect(Linter().lint(bundle).strict().findings.isEmpty)
        #expect(Registration.defaults(of: bundle) == [
            "sortOrder": "name", "showRatings": true, "thumbnailSize": 64.0, "userName": "",
            "soundEnabled": "YES", "volume": 2,
        ])
        #expect(bundle.localizations == ["en.lproj", "fr.lproj"])
        let fr = Localization(bundle: bundle, preferredLanguages: ["fr-CA"])
        #expect(fr.localized("Sort order", table: "Root") == "Ordre de tri")
        #expect(Localization(bundle: bundle, preferredLanguages: ["en-GB"]).localized("Sort order", table: "Root") == "Sort order")
    }
}
