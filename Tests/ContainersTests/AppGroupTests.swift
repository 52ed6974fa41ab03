import AppHomeSystem
import Foundation
import Testing
@testable import Containers
import ContainersTestSupport
import Preferences
import PropertyList

/// App groups: declared in Info.plist, shared containers under the root,
/// recorded in the registry, removed with their last member.
@Suite struct AppGroupTests {
    static let key = AppGroupIdentifier.infoPlistKey

    static func info(_ id: String, groups: [String], version: String = "1") -> [PlistKey: PlistValue] {
        Scratch.info(id, groups: groups, version: version)
    }

    @Test(arguments: [
        ("com.example.Shared", "invalid app group identifier 'com.example.Shared': it must start with 'group.'"),
        ("group.Shared", "invalid app group identifier 'group.Shared': after 'group.', it must be reverse-DNS with at least two components, like com.example.App"),
        ("group.com..x", "invalid app group identifier 'group.com..x': after 'group.', it must not contain an empty component ('..')"),
        ("group.com.ex/../x", "invalid app group identifier 'group.com.ex/../x': after 'group.', only letters A-Z and a-z, digits, '-' and '.' are allowed"),
    ])
    func invalidGroupIdentifiersAreRefused(_ text: String, _ message: String) {
        #expect(throws: ContainersError.self) { try AppGroupIdentifier(text) }
        do { _ = try AppGroupIdentifier(text) } catch { #expect(error.description == message) }
    }

    @Test(arguments: [
        (PlistValue.string("group.com.example.A"), "cannot use bundle {b}: com.apple.security.application-groups in Info.plist must be an array, not string"),
        (.array([.integer(1)]), "cannot use bundle {b}: com.apple.security.application-groups in Info.plist must be an array of strings"),
        (.array([.string("nogroup.x.y")]), "invalid app group identifier 'nogroup.x.y': it must start with 'group.'"),
    ])
    func badGroupDeclarationsInstallNothing(_ value: PlistValue, _ message: String) throws {
        let s = Scratch()
        var info = Scratch.info()
        info[Self.key] = value
        let path = try s.makeBundle(info: info)
        do {
            _ = try AppBundle(path: path)
            Issue.record("loaded")
        } catch {
            #expect(error.description == message.replacingOccurrences(of: "{b}", with: path))
        }
    }

    @Test func groupsAreParsedSortedWithoutDuplicates() throws {
        let s = Scratch()
        let bundle = try AppBundle(path: s.makeBundle(info: Self.info("com.example.A", groups: ["group.z.z", "group.a.a", "group.z.z"])))
        #expect(bundle.groups.map(\.rawValue) == ["group.a.a", "group.z.z"])
    }

    @Test func aGroupIsCreatedWithItsFirstMemberSharedAndRemovedWithItsLast() throws {
        let s = Scratch()
        let manager = ContainerManager(root: s.root)
        let shared = try AppGroupIdentifier("group.com.example.Shared")
        let a = try manager.install(try AppBundle(path: s.makeBundle("a", name: "A.app", info: Self.info("com.example.A", groups: [shared.rawValue]))))
        let uuid = try #require(try manager.registry.read().groups[shared])
        let container = manager.layout.groupContainer(uuid: uuid)
        #expect(container.path == s.root + "/Shared/AppGroup/" + uuid)
        for dir in [container.library, container.preferences, container.caches] {
            #expect(FileSystem_isDirectory(dir))
            #expect(mode(dir) & 0o777 == 0o700)
        }
        try s.write("shared", to: container.preferences + "/group.com.example.Shared.plist")
        _ = try manager.install(try AppBundle(path: s.makeBundle("b", name: "B.app", info: Self.info("com.example.B", groups: [shared.rawValue]))))
        #expect(try manager.registry.read().groups == [shared: uuid], "the second member joins the same container")
        #expect(try manager.registry.read().members(of: shared).map(\.rawValue) == ["com.example.A", "com.example.B"])
        #expect(try manager.registry.groupContainers(of: a.entry.bundleIdentifier).map(\.1) == [container])
        let first = try manager.uninstall(try BundleIdentifier("com.example.A"))
        #expect(first.removedGroups == [])
        #expect(s.read(container.preferences + "/group.com.example.Shared.plist") == "shared")
        let last = try manager.uninstall(try BundleIdentifier("com.example.B"))
        #expect(last.removedGroups == [shared])
        #expect(!FileSystem_exists(container.path))
        #expect(try manager.registry.read().groups.isEmpty)
    }

    @Test func anUpdateKeepsItsGroupsAndCreatesNewOnes() throws {
        let s = Scratch()
        let manager = ContainerManager(root: s.root)
        _ = try manager.install(try AppBundle(path: s.makeBundle("v1", info: Self.info("com.example.A", groups: ["group.x.one"]))))
        let before = try manager.registry.read().groups
        let report = try manager.update(try AppBundle(path: s.makeBundle("v2", info: Self.info("com.example.A", groups: ["group.x.one", "group.x.two"], version: "2"))))
        let after = try manager.registry.read().groups
        #expect(after[try AppGroupIdentifier("group.x.one")] == before[try AppGroupIdentifier("group.x.one")])
        #expect(after.count == 2)
        #expect(report.entry.groups.map(\.rawValue) == ["group.x.one", "group.x.two"])
    }

    @Test func defaultsRoutesAGroupSuiteToItsContainer() throws {
        let s = Scratch()
        let manager = ContainerManager(root: s.root)
        _ = try manager.install(try AppBundle(path: s.makeBundle(info: Self.info("com.example.A", groups: ["group.x.one"]))))
        let uuid = try #require(try manager.registry.read().groups[try AppGroupIdentifier("group.x.one")])
        let table = ContainerRegistry.preferencesDirectories(root: s.root)
        #expect(table["group.x.one"] == s.root + "/Shared/AppGroup/" + uuid + "/Library/Preferences")
        #expect(table["group.x.other"] == nil)
    }

    @Test func aVersion1RegistryIsReadAndRewrittenAsVersion3() throws {
        let s = Scratch()
        try FileManager.default.createDirectory(atPath: s.root + "/Applications", withIntermediateDirectories: true)
        let v1: PlistValue = .dictionary(["FormatVersion": .integer(1), "Applications": .dictionary([
            "com.example.Old": .dictionary(["HomeUUID": .string(RegistryTests.uuid), "BundleName": .string("Old.app"),
                                            "CFBundleVersion": .string("1"), "InstallTime": .date(fixedClock())])])])
        try Data(PlistCodec.encode(v1, format: .xml)).write(to: URL(fileURLWithPath: s.root + "/Applications/registry.plist"))
        let manager = ContainerManager(root: s.root)
        #expect(try manager.registry.read().entries.keys.map(\.rawValue) == ["com.example.Old"])
        _ = try manager.install(try AppBundle(path: s.makeBundle(info: Self.info("com.example.A", groups: ["group.x.one"]))))
        let written = try PlistCodec.decode(Array(try Data(contentsOf: URL(fileURLWithPath: s.root + "/Applications/registry.plist"))))
        #expect(written.dictionaryValue?["FormatVersion"] == .integer(3))
        #expect(try manager.registry.read().entries.count == 2)
    }
}
