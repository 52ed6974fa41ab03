import AppHomeSystem
import Preferences
import PropertyList
import SettingsApp
import SettingsBundle
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The Settings app's logic on the ScaryBugs example's bundle, with an
/// in-memory store under the same settings write policy `defaults` applies.
@Suite final class SettingsEditorTests {
    static let repository: String = {
        var path = #filePath
        for _ in 0..<3 { path = FileSystem.parentDirectory(path) }
        return path
    }()
    static let appPath = repository + "/examples/ScaryBugs-v1/ScaryBugs.app"

    let app: InstalledApp
    let store: InMemoryPreferenceStore
    let scratch: String

    init() throws {
        let bundle = try SettingsBundle(path: Self.appPath + "/Settings.bundle")
        app = InstalledApp(id: "com.example.ScaryBugs", name: "Scary Bugs", version: "1.0 (1)", appPath: Self.appPath,
                           settingsBundle: bundle, groups: [])
        scratch = ScratchDirectory.make("settings-editor")
        store = InMemoryPreferenceStore(policy: SettingsWritePolicy(root: scratch, explicitBundle: bundle.path))
    }

    deinit { ScratchDirectory.remove(scratch) }

    /// A managed directory (root-owned, as the managed layer requires) forcing `userName`.
    func managed(forcing: [String: PlistValue] = [:]) throws -> ManagedPreferences {
        let directory = scratch + "/managed"
        try FileSystem.makeDirectories(directory)
        chmod(directory, 0o755)
        if !forcing.isEmpty {
            let file = directory + "/com.example.ScaryBugs.plist"
            try FileSystem.writeAtomically(try PlistCodec.encode(.dictionary(Dictionary(stringKeys: forcing)), format: .xml), to: file)
            chmod(file, 0o644)
        }
        return ManagedPreferences(directory: directory)
    }

    var domain: Domain { .named("com.example.ScaryBugs") }

    @Test func documentIsLocalisedAndShowsRegisteredDefaults() throws {
        defer { ScratchDirectory.remove(scratch) }
        let editor = SettingsEditor(store: store, managed: try managed())
        let text = try editor.document(app, languages: ["fr-CA", "en"]).json().text
        #expect(text.contains("\"title\":\"Afficher les notes\",\"kind\":\"toggle\""))
        #expect(text.contains("\"title\":\"Avancé\",\"kind\":\"child\",\"page\":\"Advanced.plist\""))
        #expect(text.contains("\"values\":{\"showRatings\":true,\"sortOrder\":\"name\",\"soundEnabled\":\"YES\",\"thumbnailSize\":64.0,\"userName\":\"\",\"volume\":2}"))
        #expect(text.contains("\"language\":\"fr\""))
    }

    @Test func aChangeIsStoredAsTheRowStoresIt() throws {
        defer { ScratchDirectory.remove(scratch) }
        let editor = SettingsEditor(store: store, managed: try managed())
        try editor.change(app, ChangeRequest(key: "soundEnabled", value: .bool(false)))
        try editor.change(app, ChangeRequest(key: "thumbnailSize", value: .integer(100)))
        try editor.change(app, ChangeRequest(key: "sortOrder", value: .integer(2)))
        try editor.change(app, ChangeRequest(key: "volume", value: .integer(0)))
        let stored = try store.read(domain, scope: .anyHost) ?? [:]
        #expect(stored == ["soundEnabled": .string("NO"), "thumbnailSize": .real(100), "sortOrder": .string("date"), "volume": .integer(1)])
    }

    @Test func aRefusedValueGivesTheSchemaReasonAndWritesNothing() throws {
        defer { ScratchDirectory.remove(scratch) }
        let editor = SettingsEditor(store: store, managed: try managed())
        #expect(throws: SettingsAppError.refused("com.example.ScaryBugs thumbnailSize: 500.0 is outside the valid range [32.0, 128.0] [SB702]")) {
            try editor.change(app, ChangeRequest(key: "thumbnailSize", value: .real(500)))
        }
        #expect(throws: SettingsAppError.badRequest("no such choice for sortOrder")) {
            try editor.change(app, ChangeRequest(key: "sortOrder", value: .integer(3)))
        }
        #expect(throws: SettingsAppError.badRequest("com.example.ScaryBugs's Settings.bundle has no row for secret")) {
            try editor.change(app, ChangeRequest(key: "secret", value: .string("x")))
        }
        #expect(try store.read(domain, scope: .anyHost) == nil)
    }

    @Test func aManagedKeyCannotBeChangedNorReset() throws {
        defer { ScratchDirectory.remove(scratch) }
        let editor = SettingsEditor(store: store, managed: try managed(forcing: ["userName": .string("team")]))
        #expect(throws: SettingsAppError.managed("Managed by your administrator")) {
            try editor.change(app, ChangeRequest(key: "userName", value: .string("me")))
        }
        try editor.change(app, ChangeRequest(key: "showRatings", value: .bool(false)))
        _ = try store.commit(domain, scope: .anyHost, options: WriteOptions()) { $0["other"] = .integer(1) }
        #expect(try editor.reset(app) == ["showRatings"])
        #expect(try store.read(domain, scope: .anyHost) == ["other": .integer(1)])
        let text = try editor.document(app, languages: []).json().text
        #expect(text.contains("\"managed\":[\"userName\"]") && text.contains("\"userName\":\"team\""))
    }

    @Test func theRawViewSetsOnlyKeysNoRowDeclaresTyped() throws {
        defer { ScratchDirectory.remove(scratch) }
        let editor = SettingsEditor(store: store, managed: try managed(forcing: ["team": .string("x")]))
        try editor.setRaw(app, key: "launchCount", type: "integer", text: " 4 ")
        try editor.setRaw(app, key: "beta", type: "boolean", text: "YES")
        try editor.setRaw(app, key: "ratio", type: "float", text: "0.5")
        #expect(try store.read(domain, scope: .anyHost) == ["launchCount": .integer(4), "beta": .bool(true), "ratio": .real(0.5)])
        #expect(throws: SettingsAppError.badRequest("thumbnailSize is declared by the Settings.bundle: change it on its row")) {
            try editor.setRaw(app, key: "thumbnailSize", type: "float", text: "500")
        }
        #expect(throws: SettingsAppError.badRequest("\"four\" is not an integer")) {
            try editor.setRaw(app, key: "launchCount", type: "integer", text: "four")
        }
        #expect(throws: SettingsAppError.managed("Managed by your administrator")) {
            try editor.setRaw(app, key: "team", type: "string", text: "y")
        }
        #expect(throws: SettingsAppError.badRequest("the raw view sets strings, integers, floats and booleans, not date")) {
            try editor.setRaw(app, key: "when", type: "date", text: "2026-01-01")
        }
        #expect(try store.read(domain, scope: .anyHost)?.count == 3)
    }

    @Test func jsonTextCannotCloseATagOrAString() {
        #expect(JSON.string("</script>&\u{2028}\"").text == #""\u003c/script\u003e\u0026\u2028\"""#)
    }

    @Test func routerRefusesBeforeItReadsAnything() throws {
        defer { ScratchDirectory.remove(scratch) }
        let gate = AccessGate(address: .loopback(host: "127.0.0.1", port: 9), token: "T", session: "S")
        let router = SettingsRouter(gate: gate, catalog: Catalog(root: scratch), editor: SettingsEditor(store: store, managed: try managed()))
        let host = ["host": "127.0.0.1:9"]
        #expect(router.handle(HTTPRequest(method: "GET", path: "/api/apps", headers: host)).status == 403)
        #expect(router.handle(HTTPRequest(method: "GET", path: "/api/apps", headers: ["host": "evil:9", "cookie": "apphome_settings=S"])).status == 421)
        let exchanged = router.handle(HTTPRequest(method: "GET", path: "/", token: "T", headers: host))
        #expect(exchanged.status == 303 && exchanged.headers.contains { $0.0 == "Set-Cookie" && $0.1.hasPrefix("apphome_settings=S;") })
        #expect(router.handle(HTTPRequest(method: "GET", path: "/", token: "X", headers: host)).status == 403)
        let cookie = host.merging(["cookie": "apphome_settings=S"]) { a, _ in a }
        #expect(router.handle(HTTPRequest(method: "GET", path: "/api/apps", headers: cookie)).status == 200)
        #expect(router.handle(HTTPRequest(method: "POST", path: "/api/apps/x/reset", headers: cookie)).status == 403)
        #expect(router.handle(HTTPRequest(method: "POST", path: "/api/apps/x/reset",
                                          headers: cookie.merging(["origin": "http://127.0.0.1:9"]) { a, _ in a })).status == 404)
        #expect(router.handle(HTTPRequest(method: "DELETE", path: "/", headers: cookie)).status == 405)
    }

    @Test func theWebSocketsHandshakePassesTheGateAsAChangeDoes() throws {
        defer { ScratchDirectory.remove(scratch) }
        let gate = AccessGate(address: .loopback(host: "127.0.0.1", port: 9), token: "T", session: "S")
        let router = SettingsRouter(gate: gate, catalog: Catalog(root: scratch), editor: SettingsEditor(store: store, managed: try managed()))
        let good = ["host": "127.0.0.1:9", "cookie": "apphome_settings=S", "origin": "http://127.0.0.1:9"]
        let opened = router.handle(HTTPRequest(method: "GET", path: "/api/socket", headers: good))
        #expect(opened.isWebSocket)
        for (name, value) in [("origin", "http://evil.example"), ("cookie", "apphome_settings=X"), ("host", "evil:9")] {
            let refused = router.handle(HTTPRequest(method: "GET", path: "/api/socket", headers: good.merging([name: value]) { _, b in b }))
            #expect(!refused.isWebSocket && (refused.status == 403 || refused.status == 421), "\(name)")
        }
        var noOrigin = good
        noOrigin["origin"] = nil
        #expect(!router.handle(HTTPRequest(method: "GET", path: "/api/socket", headers: noOrigin)).isWebSocket)
        // A message that is not a change is answered, with its id when it has one.
        #expect(router.socketMessage(Array("x".utf8)).answer.text == #"{"id":0,"status":400,"error":"the message is not a JSON object"}"#)
        #expect(router.socketMessage(Array(#"{"app":"a"}"#.utf8)).answer.text == #"{"id":0,"status":400,"error":"the message has no id"}"#)
        let missing = router.socketMessage(Array(#"{"id":7,"app":"com.example.none","key":"k","value":1}"#.utf8))
        #expect(missing.status == 404 && missing.answer.text == #"{"id":7,"status":404,"error":"Not found"}"#)
    }
}

/// The row kinds and keys ScaryBugs' bundle does not have, on a bundle made here.
@Suite struct PageDocumentKindsTests {
    @Test func titleValuesSecureFieldsShortTitlesAndSliderImagesAreDrawn() throws {
        let scratch = ScratchDirectory.make("settings-kinds")
        defer { ScratchDirectory.remove(scratch) }
        let bundlePath = scratch + "/Kinds.app/Settings.bundle"
        try FileSystem.makeDirectories(bundlePath)
        let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0]
        try FileSystem.writeAtomically(png, to: bundlePath + "/quiet.png")
        let rows: [PlistValue] = [
            .dictionary(["Type": .string("PSTitleValueSpecifier"), "Title": .string("Edition"), "Key": .string("edition"),
                         "DefaultValue": .string("pro"), "Values": .array([.string("free"), .string("pro")]),
                         "Titles": .array([.string("Free"), .string("Professional")])]),
            .dictionary(["Type": .string("PSTextFieldSpecifier"), "Title": .string("Password"), "Key": .string("password"),
                         "IsSecure": .bool(true), "KeyboardType": .string("NumberPad")]),
            .dictionary(["Type": .string("PSMultiValueSpecifier"), "Title": .string("Size"), "Key": .string("size"), "DefaultValue": .integer(1),
                         "Values": .array([.integer(1), .integer(2)]), "Titles": .array([.string("Small"), .string("Large")]),
                         "ShortTitles": .array([.string("S"), .string("L")]), "DisplaySortedByTitle": .bool(true)]),
            .dictionary(["Type": .string("PSSliderSpecifier"), "Key": .string("level"), "DefaultValue": .real(1), "MinimumValue": .integer(0),
                         "MaximumValue": .integer(5), "MinimumValueImage": .string("quiet.png"), "MaximumValueImage": .string("../../etc/passwd")]),
        ]
        try FileSystem.writeAtomically(try PlistCodec.encode(.dictionary(["PreferenceSpecifiers": .array(rows)]), format: .xml),
                                       to: bundlePath + "/Root.plist")
        let bundle = try SettingsBundle(path: bundlePath)
        let app = InstalledApp(id: "com.example.kinds", name: "Kinds", version: "1", appPath: scratch + "/Kinds.app", settingsBundle: bundle, groups: [])
        let text = PageDocument(app: app, bundle: bundle, stored: [:], forced: [:], languages: []).json().text
        #expect(text.contains(#"{"key":"edition","title":"Edition","kind":"title","titles":["Free","Professional"],"values":["free","pro"],"text":"pro"}"#))
        #expect(text.contains(#""kind":"text","secure":true,"keyboard":"NumberPad""#))
        #expect(text.contains(#""shortTitles":["S","L"],"values":[1,2],"sorted":true"#))
        // A slider image is a plain file of the bundle; a path that climbs out is not served.
        #expect(text.contains(#""min":0.0,"max":5.0,"minImage":"quiet.png","maxImage":null"#))
        #expect(text.contains(#""values":{"edition":"pro","level":1.0,"password":null,"size":1}"#))
    }

    @Test func theIconIsTheLargestPNGTheInfoPlistNames() throws {
        let scratch = ScratchDirectory.make("settings-icon")
        defer { ScratchDirectory.remove(scratch) }
        let appPath = scratch + "/Icon.app"
        try FileSystem.makeDirectories(appPath)
        try FileSystem.writeAtomically(try PlistCodec.encode(.dictionary(["CFBundleIconFile": .string("AppIcon"),
                                                                          "CFBundleIconFiles": .array([.string("../secret")])]), format: .xml),
                                       to: appPath + "/Info.plist")
        try FileSystem.writeAtomically([UInt8](repeating: 1, count: 10), to: appPath + "/AppIcon.png")
        try FileSystem.writeAtomically([UInt8](repeating: 1, count: 40), to: appPath + "/AppIcon@2x.png")
        let app = InstalledApp(id: "com.example.icon", name: "Icon", version: "1", appPath: appPath, settingsBundle: nil, groups: [])
        #expect(app.iconPath == appPath + "/AppIcon@2x.png")
        let none = InstalledApp(id: "com.example.none", name: "None", version: "1", appPath: scratch, settingsBundle: nil, groups: [])
        #expect(none.iconPath == nil)
    }
}
