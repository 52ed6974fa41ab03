import Foundation
import Synchronization
import Testing
@testable import Containers
import ContainersTestSupport
import PropertyList

@Suite struct RegistryTests {
    static let uuid = "0A1B2C3D-0000-4000-8000-00000000ABCD"

    static func entry(_ id: String = "com.example.Sample") throws -> RegistryEntry {
        RegistryEntry(bundleIdentifier: try BundleIdentifier(id), homeUUID: uuid, bundleName: "Sample.app", version: "3",
                      shortVersion: "1.2", displayName: "Sample", installTime: fixedClock())
    }

    static func file(_ top: [PlistKey: PlistValue]) throws -> [UInt8] { try PlistCodec.encode(.dictionary(top), format: .xml) }

    @Test func aRegistryCacheReadsAgainOnlyWhenAnotherProcessChangedTheFile() throws {
        let s = Scratch()
        let cache = RegistryCache(root: s.root)
        #expect(cache.current().entries.isEmpty)
        #expect(cache.current().entries.isEmpty)
        #expect(cache.reads.load(ordering: .relaxed) == 1)
        // An install by another process (the registry written beside the cache).
        try FileManager.default.createDirectory(atPath: s.root + "/Applications", withIntermediateDirectories: true)
        let file = RegistryFile(layout: ContainerLayout(root: s.root))
        let sample = try BundleIdentifier("com.example.Sample"), other = try BundleIdentifier("com.example.Other")
        try file.write(Registry(entries: [sample: try Self.entry()]))
        #expect(cache.current().entries.keys.sorted { $0.rawValue < $1.rawValue } == [sample])
        #expect(cache.current().entries.keys.sorted { $0.rawValue < $1.rawValue } == [sample])
        #expect(cache.reads.load(ordering: .relaxed) == 2)
        // A second install, then an uninstall of everything.
        try file.write(Registry(entries: [sample: try Self.entry(), other: try Self.entry("com.example.Other")]))
        #expect(cache.current().entries.count == 2)
        try FileManager.default.removeItem(atPath: s.root + "/Applications/registry.plist")
        #expect(cache.current().entries.isEmpty)
        #expect(cache.current().entries.isEmpty)
        #expect(cache.reads.load(ordering: .relaxed) == 4)
    }

    @Test func roundTripsThroughTheBinaryFormat() throws {
        let registry = Registry(entries: [try BundleIdentifier("com.example.Sample"): try Self.entry()])
        let bytes = try registry.encoded()
        #expect(bytes.starts(with: Array("bplist00".utf8)))
        #expect(try Registry(decoding: bytes, path: "r") == registry)
    }

    @Test func refusesANewerFormatVersion() throws {
        let bytes = try Self.file(["FormatVersion": .integer(4), "Applications": .dictionary([:]), "Groups": .dictionary([:])])
        #expect(throws: ContainersError.registryVersionTooNew(path: "r", found: 4, supported: 3)) { try Registry(decoding: bytes, path: "r") }
        #expect(ContainersError.registryVersionTooNew(path: "r", found: 4, supported: 3).description
            == "registry r has format version 4, but this AppHome reads only up to version 3; use a newer apphome")
    }

    @Test(arguments: [
        ("not a dictionary", PlistValue.array([])),
        ("no version", .dictionary(["Applications": .dictionary([:])])),
        ("version 0", .dictionary(["FormatVersion": .integer(0), "Applications": .dictionary([:])])),
        ("bad bundle id", .dictionary(["FormatVersion": .integer(1), "Applications": .dictionary(["../evil": .dictionary([:])])])),
        ("uuid leading outside", .dictionary(["FormatVersion": .integer(1), "Applications": .dictionary([
            "a.b": .dictionary(["HomeUUID": .string("../../etc"), "BundleName": .string("A.app"),
                                "CFBundleVersion": .string("1"), "InstallTime": .date(fixedClock())])])])),
        ("bundle name leading outside", .dictionary(["FormatVersion": .integer(1), "Applications": .dictionary([
            "a.b": .dictionary(["HomeUUID": .string(uuid), "BundleName": .string("../x.app"),
                                "CFBundleVersion": .string("1"), "InstallTime": .date(fixedClock())])])])),
    ] as [(String, PlistValue)])
    func refusesDamagedRegistries(_ label: String, _ value: PlistValue) throws {
        let bytes = try PlistCodec.encode(value, format: .xml)
        #expect(throws: ContainersError.self, "\(label)") { try Registry(decoding: bytes, path: "r") }
        do { _ = try Registry(decoding: bytes, path: "r") } catch {
            guard case .registryCorrupt = error else { Issue.record("\(label): \(error)"); return }
        }
    }

    @Test func managerRefusesToWorkOnANewerRegistry() throws {
        let s = Scratch()
        try FileManager.default.createDirectory(atPath: s.root + "/Applications", withIntermediateDirectories: true)
        try Data(Self.file(["FormatVersion": .integer(9), "Applications": .dictionary([:])]))
            .write(to: URL(fileURLWithPath: s.root + "/Applications/registry.plist"))
        let manager = ContainerManager(root: s.root)
        #expect(throws: ContainersError.registryVersionTooNew(path: s.root + "/Applications/registry.plist", found: 9, supported: 3)) {
            try manager.install(try AppBundle(path: s.makeBundle(info: Scratch.info())))
        }
        #expect(s.homes.isEmpty)
    }

    @Test func registryFileIsPrivate() throws {
        let s = Scratch()
        _ = try ContainerManager(root: s.root).install(try AppBundle(path: s.makeBundle(info: Scratch.info())))
        #expect(mode(s.root + "/Applications/registry.plist") & 0o777 == 0o600)
        #expect(mode(s.root + "/Applications") & 0o777 == 0o700)
    }

    @Test func preferencesLookupFindsInstalledAppsOnly() throws {
        let s = Scratch()
        let home = try ContainerManager(root: s.root).install(try AppBundle(path: s.makeBundle(info: Scratch.info()))).home
        let lookup = ContainerRegistry.preferencesDirectoryLookup(root: s.root)
        #expect(lookup("com.example.Sample") == home.preferences)
        #expect(lookup("com.example.Other") == nil)
        #expect(ContainerRegistry.preferencesDirectoryLookup(root: s.path + "/none")("com.example.Sample") == nil)
    }
}
