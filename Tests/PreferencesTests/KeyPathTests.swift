import Testing
import PropertyList
@testable import Preferences

@Suite struct KeyPathTests {
    @Test(arguments: [
        ("a", ["a"]), (":a:b", ["a", "b"]), ("a:0:c", ["a", "0", "c"]), (#"a\:b:c"#, ["a:b", "c"]), (#"x\\y"#, [#"x\y"#]),
    ])
    func parsesPlistBuddySyntax(text: String, components: [String]) throws {
        #expect(try KeyPath(parsing: text).components == components)
    }

    @Test(arguments: ["", ":", "a::b", "a:", #"a\"#])
    func rejectsMalformedPaths(text: String) {
        #expect(throws: PreferencesError.self) { try KeyPath(parsing: text) }
    }

    @Test func readsSetsAndRemovesNestedValues() throws {
        var root: [PlistKey: PlistValue] = ["list": .array([.dictionary(["x": .integer(1)])])]
        let path = try KeyPath(parsing: "list:0:x")
        #expect(path.value(in: root) == .integer(1))
        try path.set(.integer(2), in: &root)
        #expect(path.value(in: root) == .integer(2))
        try KeyPath(parsing: "list:1").set(.string("appended"), in: &root)
        #expect(root["list"]?.arrayValue?.count == 2)
        try KeyPath(parsing: "new:deep:key").set(.bool(true), in: &root)
        #expect(root["new"] == .dictionary(["deep": .dictionary(["key": .bool(true)])]))
        #expect(try path.remove(from: &root))
        #expect(path.value(in: root) == nil)
        #expect(try KeyPath(parsing: "missing:x").remove(from: &root) == false)
    }

    @Test func refusesToStepIntoScalarsOrPastArrays() throws {
        var root: [PlistKey: PlistValue] = ["s": .string("x"), "a": .array([])]
        #expect(throws: PreferencesError.self) { try KeyPath(parsing: "s:k").set(.integer(1), in: &root) }
        #expect(throws: PreferencesError.self) { try KeyPath(parsing: "a:5").set(.integer(1), in: &root) }
        #expect(throws: PreferencesError.self) { try KeyPath(parsing: "a:name").set(.integer(1), in: &root) }
        #expect(root == ["s": .string("x"), "a": .array([])])
    }
}
