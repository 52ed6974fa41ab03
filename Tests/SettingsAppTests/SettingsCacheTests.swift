import AppHomeSystem
import Preferences
import PropertyList
@testable import SettingsApp
import SettingsBundle
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The server's readings kept between requests: used while their files keep
/// their identity, read again as soon as one changes (never stale).
@Suite struct SettingsCacheTests {
    let scratch = ScratchDirectory.make("settings-cache")
    var bundlePath: String { scratch + "/Cache.app/Settings.bundle" }

    func writeRoot(_ keys: [String]) throws {
        let rows: [PlistValue] = keys.map {
            .dictionary(["Type": .string("PSToggleSwitchSpecifier"), "Title": .string("Title " + $0), "Key": .string($0), "DefaultValue": .bool(true)])
        }
        try FileSystem.makeDirectories(bundlePath + "/en.lproj")
        try FileSystem.writeAtomically(try PlistCodec.encode(.dictionary(["PreferenceSpecifiers": .array(rows)]), format: .xml),
                                       to: bundlePath + "/Root.plist")
    }

    /// Dates every file of the bundle an hour back: a reading of them is kept
    /// (a file as new as its reading may have changed while it was read, and is not).
    func age() {
        let old = timespec(tv_sec: time(nil) - 3600, tv_nsec: 0)
        for path in [bundlePath + "/Root.plist", bundlePath + "/en.lproj/Root.strings", bundlePath + "/en.lproj", bundlePath] {
            var times = [old, old]
            _ = utimensat(AT_FDCWD, path, &times, 0)
        }
        // Setting the times made the change times new: let them age past the racy window.
        usleep(100_000)
    }

    /// A Root page declaring `alpha`, aged past the racy window, and a cache
    /// that has read it once.
    func agedBundleSeenOnce() throws -> (SettingsCache, SettingsBundle) {
        try writeRoot(["alpha"])
        age()
        let cache = SettingsCache()
        let bundle = try SettingsBundle(path: bundlePath)
        #expect(cache.schema(bundle, idiom: .phone).editable.keys.sorted() == ["alpha"])
        return (cache, bundle)
    }

    @Test func aPageIsReadOnceAndAgainWhenItChanges() throws {
        defer { ScratchDirectory.remove(scratch) }
        let (cache, bundle) = try agedBundleSeenOnce()
        #expect(cache.state.withLock { $0.schemas.count } == 1)
        // Replaced (a new inode, as writers rename): read again.
        try writeRoot(["beta"])
        #expect(cache.schema(bundle, idiom: .phone).editable.keys.sorted() == ["beta"])
        #expect(cache.schema(bundle, idiom: .phone).validator.declarations.keys.sorted() == ["beta"])
        // Rewritten in place to the same size with its old times put back:
        // the change time still tells.
        age()
        _ = cache.schema(bundle, idiom: .phone)
        let before = try #require(try FileSystem.readFileIfPresent(bundlePath + "/Root.plist"))
        var after = before
        let beta = Array("beta".utf8)
        for i in 0...(after.count - beta.count) where Array(after[i..<(i + beta.count)]) == beta {
            after.replaceSubrange(i..<(i + beta.count), with: Array("gamm".utf8))
        }
        #expect(after.count == before.count)
        let fd = open(bundlePath + "/Root.plist", O_WRONLY)
        #expect(after.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) } == after.count)
        close(fd)
        let old = timespec(tv_sec: time(nil) - 3600, tv_nsec: 0)
        var times = [old, old]
        _ = utimensat(AT_FDCWD, bundlePath + "/Root.plist", &times, 0)
        #expect(cache.schema(bundle, idiom: .phone).editable.keys.sorted() == ["gamm"])
    }

    @Test func aRequestTakesEachSchemaFromTheCacheOnce() throws {
        defer { ScratchDirectory.remove(scratch) }
        let (cache, bundle) = try agedBundleSeenOnce()
        let request = RequestSchemas(cache: cache)
        #expect(request.schema(bundle, idiom: .phone).editable.keys.sorted() == ["alpha"])
        // Changed during the request: the request keeps the schema it began
        // with (its files are not looked at again, for the row, the domain or
        // the write policy alike); the next request sees the change.
        try writeRoot(["beta"])
        #expect(request.schema(bundle, idiom: .phone).editable.keys.sorted() == ["alpha"])
        #expect(request.validators(bundle, .phone)?.declarations.keys.sorted() == ["alpha"])
        #expect(RequestSchemas(cache: cache).schema(bundle, idiom: .phone).editable.keys.sorted() == ["beta"])
    }

    @Test func aPageAddedForTheIdiomIsSeen() throws {
        defer { ScratchDirectory.remove(scratch) }
        let (cache, bundle) = try agedBundleSeenOnce()
        let rows: PlistValue = .array([.dictionary(["Type": .string("PSTextFieldSpecifier"), "Key": .string("phoneOnly")])])
        try FileSystem.writeAtomically(try PlistCodec.encode(.dictionary(["PreferenceSpecifiers": rows]), format: .xml),
                                       to: bundlePath + "/Root~iphone.plist")
        #expect(cache.schema(bundle, idiom: .phone).editable.keys.sorted() == ["phoneOnly"])
    }

    @Test func aStringsTableIsReadAgainWhenItChanges() throws {
        defer { ScratchDirectory.remove(scratch) }
        try writeRoot(["alpha"])
        try FileSystem.writeAtomically(Array("\"Title alpha\" = \"One\";\n".utf8), to: bundlePath + "/en.lproj/Root.strings")
        age()
        let cache = SettingsCache()
        let bundle = try SettingsBundle(path: bundlePath)
        #expect(cache.strings(bundle, lproj: "en.lproj", table: "Root", idiom: .phone) == ["Title alpha": "One"])
        #expect(cache.state.withLock { $0.strings.count } == 1)
        try FileSystem.writeAtomically(Array("\"Title alpha\" = \"Two\";\n".utf8), to: bundlePath + "/en.lproj/Root.strings")
        #expect(cache.strings(bundle, lproj: "en.lproj", table: "Root", idiom: .phone) == ["Title alpha": "Two"])
        let app = InstalledApp(id: "com.example.cache", name: "Cache", version: "1", appPath: scratch + "/Cache.app", settingsBundle: bundle, groups: [])
        let text = PageDocument(app: app, bundle: bundle, stored: [:], forced: [:], languages: ["en"], cache: cache).json().text
        #expect(text.contains(#""title":"Two""#))
    }

    @Test func aFreshFileIsNotKept() throws {
        defer { ScratchDirectory.remove(scratch) }
        try writeRoot(["alpha"])
        let cache = SettingsCache()
        #expect(cache.schema(try SettingsBundle(path: bundlePath), idiom: .phone).editable.keys.sorted() == ["alpha"])
        #expect(cache.state.withLock { $0.schemas.count } == 0)
    }

    @Test func theWritePolicyChecksWithTheCachedPagesNeverStaleOnes() throws {
        defer { ScratchDirectory.remove(scratch) }
        func writeSlider(max: Int) throws {
            let rows: PlistValue = .array([.dictionary(["Type": .string("PSSliderSpecifier"), "Key": .string("level"), "DefaultValue": .real(1),
                                                        "MinimumValue": .integer(0), "MaximumValue": .integer(Int128(max))])])
            try FileSystem.makeDirectories(bundlePath)
            try FileSystem.writeAtomically(try PlistCodec.encode(.dictionary(["PreferenceSpecifiers": rows]), format: .xml), to: bundlePath + "/Root.plist")
        }
        try writeSlider(max: 5)
        age()
        let cache = SettingsCache()
        let policy = SettingsWritePolicy(root: scratch, explicitBundle: bundlePath, validators: cache.validators)
        let options = WriteOptions(force: false, idiom: "phone", checkedKeys: ["level"])
        #expect(throws: PreferencesError.self) {
            try policy.check(.named("com.example.cache"), old: [:], new: ["level": .real(7)], options: options)
        }
        // The pages the server keeps, not the compiled form on disk.
        #expect(!FileSystem.exists(SettingsSchemaLookup.compiledSchemaDirectory(root: scratch)))
        #expect(cache.state.withLock { $0.schemas.count } == 1)
        try writeSlider(max: 10)
        _ = try policy.check(.named("com.example.cache"), old: [:], new: ["level": .real(7)], options: options)
    }

    @Test func aChangeEventCarriesTheKeysAsThePageShowsThem() throws {
        defer { ScratchDirectory.remove(scratch) }
        try writeRoot(["alpha", "beta", "locked"])
        let directory = scratch + "/managed"
        try FileSystem.makeDirectories(directory)
        chmod(directory, 0o755)
        let file = directory + "/com.example.cache.plist"
        try FileSystem.writeAtomically(try PlistCodec.encode(.dictionary(["locked": .bool(false)]), format: .xml), to: file)
        chmod(file, 0o644)
        let bundle = try SettingsBundle(path: bundlePath)
        let app = InstalledApp(id: "com.example.cache", name: "Cache", version: "1", appPath: scratch + "/Cache.app", settingsBundle: bundle, groups: [])
        let event = PageDocument.changeEvent(app, set: ["alpha": .bool(false), "locked": .bool(true), "other": .integer(3)], removed: ["beta"],
                                             managed: ManagedPreferences(directory: directory), cache: SettingsCache()).text
        // A removed key shows its registered default, a forced one its forced value; `other` is no row's.
        #expect(event.contains(#""values":{"alpha":false,"beta":true,"locked":false}"#))
        #expect(event.contains(#"{"key":"other","type":"integer","text":"3","value":3,"declared":false}"#))
        #expect(event.contains(#""removed":["beta"],"managed":["locked"]"#))
    }
}
