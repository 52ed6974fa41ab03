import Testing
@testable import Containers
import ContainersTestSupport

@Suite struct BundleIdentifierTests {
    @Test(arguments: ["com.example.App", "a.b", "org.example-site.My-App2", "COM.Example.app"])
    func acceptsReverseDNS(_ text: String) throws {
        #expect(try BundleIdentifier(text).rawValue == text)
    }

    @Test(arguments: [
        ("", "it is empty"),
        ("noDots", "it must be reverse-DNS with at least two components, like com.example.App"),
        ("a..b", "it must not contain an empty component ('..')"),
        ("../evil", "it must not start or end with '.'"),
        ("com.example/../../x", "only letters A-Z and a-z, digits, '-' and '.' are allowed"),
        (".com.example", "it must not start or end with '.'"),
        ("com.example.", "it must not start or end with '.'"),
        ("com.exa mple", "only letters A-Z and a-z, digits, '-' and '.' are allowed"),
        ("com.exämple", "only letters A-Z and a-z, digits, '-' and '.' are allowed"),
        ("com.ex_ample", "only letters A-Z and a-z, digits, '-' and '.' are allowed"),
        ("com." + String(repeating: "a", count: 252), "it is longer than 255 bytes"),
    ])
    func rejectsInvalidIdentifiers(_ text: String, _ reason: String) {
        #expect(throws: ContainersError.invalidBundleIdentifier(text, reason: reason)) { try BundleIdentifier(text) }
    }

    @Test func comparesCaseSensitively() throws {
        #expect(try BundleIdentifier("com.Example.App") != BundleIdentifier("com.example.app"))
    }

    @Test func errorMessageNamesTheIdentifier() {
        #expect(ContainersError.invalidBundleIdentifier("noDots", reason: "r").description == "invalid bundle identifier 'noDots': r")
    }
}
