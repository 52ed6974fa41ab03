import Foundation
import Testing

/// "é" as one scalar (U+00E9) and as "e" + U+0301 are canonically equivalent,
/// so Swift's `String ==` calls them equal; Core Foundation, plistlib and
/// libplist keep them apart, and so must every path of `defaults` (with the
/// files and through prefsd). Outputs are compared by their UTF-8 bytes here,
/// never with `String ==`.
@Suite("Canonically equivalent keys and domains stay distinct")
struct CanonicalKeysTests {
    static let d = "com.example.keys"
    static let composed = "\u{E9}"        // é
    static let decomposed = "e\u{301}"    // e + combining acute accent

    static func expectBytes(_ actual: String, _ expected: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(Array(actual.utf8) == Array(expected.utf8),
                "got \(Array(actual.unicodeScalars).map { String($0.value, radix: 16) }), expected \(Array(expected.unicodeScalars).map { String($0.value, radix: 16) })",
                sourceLocation: sourceLocation)
    }

    @Test func twoKeysWrittenByDefaultsAreTwoEntriesOnDisk() throws {
        let root = try TempRoot()
        try root.succeed(["write", Self.d, Self.composed, "-int", "1"])
        try root.succeed(["write", Self.d, Self.decomposed, "-int", "2"])
        try root.expectPlist(root.domainFile(Self.d), equals: "{'\\u00e9': 1, 'e\\u0301': 2}")
        Self.expectBytes(try root.succeed(["read", Self.d, Self.composed]).stdout, "1\n")
        Self.expectBytes(try root.succeed(["read", Self.d, Self.decomposed]).stdout, "2\n")
    }

    @Test func aFileWithBothKeysReadsAndPrintsBoth() throws {
        let root = try TempRoot()
        try root.writePlist("{'\\u00e9': 'one', 'e\\u0301': 'two', 'z': 3}", to: root.domainFile(Self.d))
        // Code point order ("e" + U+0301, "z", U+00E9), non-ASCII as macOS prints it.
        Self.expectBytes(try root.succeed(["read", Self.d]).stdout,
                         "{\n    \"e\\\\U0301\" = two;\n    z = 3;\n    \"\\\\U00e9\" = one;\n}\n")
        let json = try root.succeed(["--format", "json", "read", Self.d]).stdout
        #expect(json.utf8.count > 0)
        try root.pythonCheck("""
            import json
            d = json.loads(sys.argv[1])
            print('OK' if d == {'\\u00e9': 'one', 'e\\u0301': 'two', 'z': 3} and len(d) == 3 else repr(d))
            """, [json])
        let exported = root.workFile("export.plist")
        try root.succeed(["export", Self.d, exported.path])
        try root.expectPlist(exported, equals: "{'\\u00e9': 'one', 'e\\u0301': 'two', 'z': 3}")
    }

    @Test func deletingOrChangingOneLeavesTheOther() throws {
        let root = try TempRoot()
        try root.writePlist("{'\\u00e9': 1, 'e\\u0301': 2}", to: root.domainFile(Self.d))
        try root.succeed(["write", Self.d, Self.decomposed, "-int", "3"])
        try root.expectPlist(root.domainFile(Self.d), equals: "{'\\u00e9': 1, 'e\\u0301': 3}")
        try root.succeed(["delete", Self.d, Self.composed])
        try root.expectPlist(root.domainFile(Self.d), equals: "{'e\\u0301': 3}")
        try root.succeed(["rename", Self.d, Self.decomposed, Self.composed])
        try root.expectPlist(root.domainFile(Self.d), equals: "{'\\u00e9': 3}")
    }

    @Test func aStringValueChangedToItsEquivalentIsStored() throws {
        let root = try TempRoot()
        try root.succeed(["write", Self.d, "k", Self.composed])
        try root.succeed(["write", Self.d, "k", Self.decomposed])
        try root.expectPlist(root.domainFile(Self.d), equals: "{'k': 'e\\u0301'}")
    }

    @Test func keysInsideADictionaryValueStayDistinct() throws {
        let root = try TempRoot()
        try root.succeed(["write", Self.d, "outer", "-dict", Self.composed, "1", Self.decomposed, "2"])
        try root.expectPlist(root.domainFile(Self.d), equals: "{'outer': {'\\u00e9': '1', 'e\\u0301': '2'}}")
        try root.succeed(["write", Self.d, "outer", "-dict-add", Self.decomposed, "3"])
        try root.expectPlist(root.domainFile(Self.d), equals: "{'outer': {'\\u00e9': '1', 'e\\u0301': '3'}}")
        Self.expectBytes(try root.succeed(["--key-path", "read", Self.d, "outer:\(Self.composed)"]).stdout, "1\n")
    }

    @Test func equivalentDomainNamesAreTwoDomains() throws {
        let root = try TempRoot()
        let a = "com.example.caf" + Self.composed, b = "com.example.caf" + Self.decomposed
        try root.succeed(["write", a, "k", "-int", "1"])
        try root.succeed(["write", b, "k", "-int", "2"])
        Self.expectBytes(try root.succeed(["read", a, "k"]).stdout, "1\n")
        Self.expectBytes(try root.succeed(["read", b, "k"]).stdout, "2\n")
        try root.expectPlist(root.domainFile(a), equals: "{'k': 1}")
        try root.expectPlist(root.domainFile(b), equals: "{'k': 2}")
        let names = try root.succeed(["domains"]).stdout
        #expect(names.unicodeScalars.count == (a + ", " + b + "\n").unicodeScalars.count, "\(names)")
    }
}
