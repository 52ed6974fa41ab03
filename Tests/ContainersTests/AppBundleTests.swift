import Foundation
import Testing
@testable import Containers
import ContainersTestSupport
import PropertyList

@Suite struct AppBundleTests {
    /// A bundle's directory name is one visible entry, judged by its bytes.
    @Test func bundleNamesAreJudgedByTheirBytes() {
        #expect(AppBundle.isValidBundleName("Sample.app"))
        #expect(AppBundle.isValidBundleName("Caf\u{e9}.app"))
        for name in ["Sample", ".app", ".Hidden.app", ".\u{301}Hidden.app", "a/\u{301}b.app", "a\u{0}.app", "x/\u{301}"] {
            #expect(!AppBundle.isValidBundleName(name), "\(name)")
        }
    }

    @Test(arguments: [PlistFormat.xml, .binary, .openStep])
    func loadsInfoPlistInEveryFormat(_ format: PlistFormat) throws {
        let s = Scratch()
        var info = Scratch.info()
        info["CFBundleDisplayName"] = .string("Sample Display")
        let path = try s.makeBundle(info: format == .openStep ? nil : info, format: format)
        if format == .openStep {
            try s.write("{ CFBundleIdentifier = com.example.Sample; CFBundleVersion = 1; CFBundleShortVersionString = \"1.0\"; CFBundleDisplayName = \"Sample Display\"; }", to: path + "/Info.plist")
        }
        let bundle = try AppBundle(path: path + "/")
        #expect(bundle.identifier.rawValue == "com.example.Sample")
        #expect(bundle.version == "1")
        #expect(bundle.shortVersion == "1.0")
        #expect(bundle.displayName == "Sample Display")
        #expect(bundle.name == "Sample.app")
        #expect(bundle.path == path)
    }

    /// Named mutations of one good bundle, each with the error it must give.
    @Test(arguments: [
        ("missing Info.plist", nil, "Sample.app", "Info.plist is missing"),
        ("missing CFBundleIdentifier", ["CFBundleVersion": PlistValue.string("1")], "Sample.app", "Info.plist has no CFBundleIdentifier"),
        ("missing CFBundleVersion", ["CFBundleIdentifier": PlistValue.string("com.example.Sample")], "Sample.app", "Info.plist has no CFBundleVersion"),
        ("version not a string", ["CFBundleIdentifier": .string("com.example.Sample"), "CFBundleVersion": .integer(1)], "Sample.app",
         "CFBundleVersion in Info.plist must be a string, not integer"),
        ("empty version", ["CFBundleIdentifier": .string("com.example.Sample"), "CFBundleVersion": .string("")], "Sample.app",
         "CFBundleVersion in Info.plist is empty"),
        ("name without .app", Scratch.info(), "Sample", "the directory name must end in '.app'"),
    ] as [(String, [PlistKey: PlistValue]?, String, String)])
    func rejectsInvalidBundles(_ label: String, _ info: [PlistKey: PlistValue]?, _ name: String, _ reason: String) throws {
        let s = Scratch()
        let path = try s.makeBundle(name: name, info: info)
        #expect(throws: ContainersError.invalidBundle(path: path, reason: reason), "\(label)") { try AppBundle(path: path) }
    }

    @Test(arguments: ["../evil", "noDots", "a..b"])
    func rejectsBadIdentifiersInInfoPlist(_ id: String) throws {
        let s = Scratch()
        let path = try s.makeBundle(info: Scratch.info(id: id))
        #expect(throws: ContainersError.self) { try AppBundle(path: path) }
        do { _ = try AppBundle(path: path) } catch {
            guard case .invalidBundleIdentifier(id, _) = error else { Issue.record("wrong error \(error)"); return }
        }
    }

    @Test func rejectsInfoPlistThatIsNotAPropertyList() throws {
        let s = Scratch()
        let path = try s.makeBundle(info: nil)
        try s.write("<plist><dict><key>x</key></plist>", to: path + "/Info.plist")
        #expect(throws: ContainersError.self) { try AppBundle(path: path) }
    }

    @Test func rejectsMissingDirectory() throws {
        let s = Scratch()
        #expect(throws: ContainersError.invalidBundle(path: s.path + "/Nope.app", reason: "it is not a directory")) {
            try AppBundle(path: s.path + "/Nope.app")
        }
    }

    /// The examples under `examples/` load, so they cannot go stale.
    @Test func examplesLoadAndShareOneIdentifier() throws {
        let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
        let v1 = try AppBundle(path: repo + "/examples/ScaryBugs-v1/ScaryBugs.app")
        let v2 = try AppBundle(path: repo + "/examples/ScaryBugs-v2/ScaryBugs.app")
        #expect(v1.identifier == v2.identifier)
        #expect(v1.identifier.rawValue == "com.example.ScaryBugs")
        #expect((v1.shortVersion, v1.version) == ("1.0", "1"))
        #expect((v2.shortVersion, v2.version) == ("2.0", "2"))
        #expect(v1.displayName == "Scary Bugs")
    }
}
