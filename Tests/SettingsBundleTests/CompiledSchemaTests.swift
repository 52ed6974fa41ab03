import Foundation
import PropertyList
import Testing
@testable import SettingsBundle

/// The compiled form of a bundle: used while fresh, rebuilt when anything it
/// was read from changes, and giving the same answers as walking the bundle.
@Suite struct CompiledSchemaTests {
    static func page(values: [PlistValue]) -> PlistValue {
        Rows.page([Rows.group(),
                   .dictionary(["Type": "PSMultiValueSpecifier", "Title": "S", "Key": "sort", "DefaultValue": values[0],
                                "Values": .array(values), "Titles": .array(values.map { _ in "T" })]),
                   Rows.toggle("padOnly", ["SupportedUserInterfaceIdioms": ["Pad"]]),
                   Rows.child("Child")])
    }

    static func files(_ bundle: BundleDirectory) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: bundle.base + "/cache")) ?? []).sorted()
    }

    func check(_ v: WriteValidator, _ key: String, _ value: PlistValue) -> String? {
        v.declarations[key] == nil ? v.undeclared(domain: "d", key: key).rule : v.check(domain: "d", key: key, value: value)?.rule
    }

    @Test func aFreshCompiledFileIsUsedAndAnEditedPageRebuildsIt() throws {
        let dir = BundleDirectory(["Root.plist": Self.page(values: ["a", "b"]), "Child.plist": Rows.page([Rows.group(), Rows.toggle("deep")])])
        let cache = CompiledSchemaCache(directory: dir.base + "/cache")
        let keys = ["sort", "padOnly", "deep", "private"]
        let first = cache.validator(for: dir.bundle, idiom: .phone, keys: keys)
        #expect(Self.files(dir).count == 1)
        let second = cache.validator(for: dir.bundle, idiom: .phone, keys: keys)
        #expect(second.pageFiles.isEmpty)  // read from the compiled file, not walked
        for v in [first, second] {
            #expect(check(v, "sort", "a") == nil)
            #expect(check(v, "sort", "z") == "SB701")
            #expect(check(v, "deep", 1) == "SB703")
            #expect(check(v, "padOnly", true) == "SB708")
            #expect(check(v, "private", 1) == "SB704")
        }
        // Editing a page (new size and time) makes the compiled file stale.
        dir.write("Root.plist", try PlistCodec.encode(Self.page(values: ["a", "b", "z"]), format: .xml))
        let third = cache.validator(for: dir.bundle, idiom: .phone, keys: keys)
        #expect(!third.pageFiles.isEmpty)
        #expect(check(third, "sort", "z") == nil)
        #expect(check(cache.validator(for: dir.bundle, idiom: .phone, keys: keys), "sort", "z") == nil)
    }

    @Test func aNewDeviceVariantOrAnEditedChildIsNoticed() throws {
        let dir = BundleDirectory(["Root.plist": Self.page(values: ["a", "b"]), "Child.plist": Rows.page([Rows.group(), Rows.toggle("deep")])])
        let cache = CompiledSchemaCache(directory: dir.base + "/cache")
        _ = cache.validator(for: dir.bundle, idiom: .phone, keys: ["sort"])
        dir.write("Root~iphone.plist", try PlistCodec.encode(Self.page(values: ["x"]), format: .binary))
        #expect(check(cache.validator(for: dir.bundle, idiom: .phone, keys: ["sort"]), "sort", "x") == nil)
        dir.write("Child.plist", try PlistCodec.encode(Rows.page([Rows.group()]), format: .xml))
        #expect(check(cache.validator(for: dir.bundle, idiom: .phone, keys: ["deep"]), "deep", 1) == "SB704")
    }

    @Test func aBrokenPageFixedInPlaceMakesTheCompiledFileStale() throws {
        let dir = BundleDirectory(["Root.plist": Self.page(values: ["a", "b"]), "Child.plist": Rows.page([Rows.group(), Rows.toggle("deep")])])
        let cache = CompiledSchemaCache(directory: dir.base + "/cache")
        let child = dir.path + "/Child.plist"
        // The child page is broken when the bundle is compiled: "deep" is unknown.
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: child))
        try handle.truncate(atOffset: 0)
        try handle.write(contentsOf: Data("not a plist".utf8))
        try handle.close()
        #expect(check(cache.validator(for: dir.bundle, idiom: .phone, keys: ["deep"]), "deep", 1) == "SB704")
        // Fixed in place (same inode, so the directory does not change): compiled again.
        let fixed = try FileHandle(forWritingTo: URL(fileURLWithPath: child))
        try fixed.truncate(atOffset: 0)
        try fixed.write(contentsOf: Data(try PlistCodec.encode(Rows.page([Rows.group(), Rows.toggle("deep")]), format: .xml)))
        try fixed.close()
        #expect(check(cache.validator(for: dir.bundle, idiom: .phone, keys: ["deep"]), "deep", 1) == "SB703")
    }

    @Test func eachIdiomAndBundleHasItsOwnFileAndDamageMeansRebuild() throws {
        let dir = BundleDirectory(["Root.plist": Self.page(values: ["a"]), "Child.plist": Rows.page([Rows.group()])])
        let cache = CompiledSchemaCache(directory: dir.base + "/cache")
        #expect(check(cache.validator(for: dir.bundle, idiom: .pad, keys: ["padOnly"]), "padOnly", 1) == "SB703")
        #expect(check(cache.validator(for: dir.bundle, idiom: .phone, keys: ["padOnly"]), "padOnly", 1) == "SB708")
        #expect(Self.files(dir).count == 2)
        // Damage: a bucket cut short, then a record that is not hexadecimal.
        for name in Self.files(dir) {
            let path = dir.base + "/cache/" + name
            let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
            try bytes.prefix(bytes.count - 5).write(to: URL(fileURLWithPath: path))
        }
        let cut = cache.validator(for: dir.bundle, idiom: .pad, keys: ["sort"])
        #expect(!cut.pageFiles.isEmpty)  // walked again
        #expect(check(cut, "sort", "q") == "SB701")
        #expect(cache.validator(for: dir.bundle, idiom: .pad, keys: ["sort"]).pageFiles.isEmpty)  // and recompiled
        for name in Self.files(dir) {
            let path = dir.base + "/cache/" + name
            var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
            let record = Array("\"sort\"\t".utf8)
            let at = (0...(bytes.count - record.count)).first { bytes[$0..<($0 + record.count)].elementsEqual(record) }!
            bytes[at + record.count + 2] = UInt8(ascii: "z")
            try Data(bytes).write(to: URL(fileURLWithPath: path))
        }
        let garbled = cache.validator(for: dir.bundle, idiom: .pad, keys: ["sort"])
        #expect(!garbled.pageFiles.isEmpty)
        #expect(check(garbled, "sort", "a") == nil)
    }

    @Test func anUnwritableCacheDirectoryOnlyCostsTheWalk() {
        let dir = BundleDirectory(["Root.plist": Self.page(values: ["a"]), "Child.plist": Rows.page([Rows.group()])])
        dir.write("blocker", [1])
        let cache = CompiledSchemaCache(directory: dir.path + "/blocker/cache")
        #expect(check(cache.validator(for: dir.bundle, idiom: .phone, keys: ["sort"]), "sort", "q") == "SB701")
    }

    @Test func keysNeedingJSONEscapesAreFound() {
        let dir = BundleDirectory(["Root.plist": Rows.page([Rows.group(), Rows.toggle("tab\there \"quoted\"\nline")])])
        let cache = CompiledSchemaCache(directory: dir.base + "/cache")
        for _ in 0..<2 {
            let v = cache.validator(for: dir.bundle, idiom: .phone, keys: ["tab\there \"quoted\"\nline"])
            #expect(check(v, "tab\there \"quoted\"\nline", "no") == "SB703")
        }
    }

    /// The sources' stamps are formatted by hand (every validated write
    /// checks them): the same text as the interpolation they replaced,
    /// whatever the numbers' sizes and signs.
    @Test func stampsAreSizeTimesAndInodeInDecimal() throws {
        let dir = BundleDirectory(["Root.plist": Rows.page([Rows.group()])])
        var st = stat()
        try #require(stat(dir.bundle.path + "/Root.plist", &st) == 0)
        #expect(CompiledSchemaCache.stamp(dir.bundle.path + "/Root.plist")
                == "\(st.st_size) \(st.st_mtim.tv_sec) \(st.st_mtim.tv_nsec) \(st.st_ino)")
        #expect(CompiledSchemaCache.stamp(dir.bundle.path + "/none") == nil)
        for n: Int64 in [0, 7, 10, 99, 100, 1_700_000_000, -1, -120, .max, .min] {
            var out: [UInt8] = []
            CompiledSchemaCache.appendDecimal(n, to: &out)
            #expect(String(decoding: out, as: UTF8.self) == "\(n)")
        }
        var big: [UInt8] = []
        CompiledSchemaCache.appendDecimal(UInt64.max, negative: false, to: &big)
        #expect(String(decoding: big, as: UTF8.self) == "\(UInt64.max)")
    }

    /// Integers compare with reals by value, also beyond Int64 (the fast
    /// path for Int64 leaves larger ones to the general conversion).
    @Test func integersBeyondInt64StillCompareAsNumbers() {
        #expect(ValueText.number(.integer(42)) == 42)
        #expect(ValueText.number(.integer(-3)) == -3)
        #expect(ValueText.number(.integer(Int128(Int64.max) + 1)) == 9_223_372_036_854_775_808.0)
        #expect(ValueText.number(.integer(Int128(Int64.min) - 1)) == -9_223_372_036_854_775_808.0)
        #expect(ValueText.same(.integer(Int128(1) << 70), .real(1_180_591_620_717_411_303_424.0)))
    }
}
