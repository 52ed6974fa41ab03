import AppHomeSystem
import Foundation
import TestSupport
import Testing
@testable import Keychain
import Containers
import Preferences
import PropertyList

/// A temporary AppHome root for one test, removed afterwards.
final class KeychainScratch: @unchecked Sendable {
    let path: String
    var root: String { path + "/root" }
    var keychains: String { root + "/Keychains" }

    init() {
        path = ScratchDirectory.make("keychain-test")
    }

    deinit { ScratchDirectory.remove(path) }

    func keychain(clock: @escaping @Sendable () -> PlistDate = testClock) -> Keychain {
        Keychain(root: root, policy: .fileOnly, now: clock)
    }

    /// Makes `<path>/<dir>/<name>.app` whose Info.plist has `id` and
    /// `groups`, signed with `key` (by default with ``testKey`` when it
    /// claims a group, since only a signed app may).
    func makeBundle(_ dir: String, id: String, version: String = "1", groups: [String] = [], appGroups: [String] = [],
                    key: SigningKey? = nil, unsigned: Bool = false) throws -> String {
        let bundle = path + "/" + dir + "/App.app"
        try FileManager.default.createDirectory(atPath: bundle, withIntermediateDirectories: true)
        try? FileManager.default.removeItem(atPath: bundle + "/_CodeSignature")   // a bundle made again is signed again, or not
        var info: [PlistKey: PlistValue] = ["CFBundleIdentifier": .string(id), "CFBundleVersion": .string(version)]
        if !groups.isEmpty { info["keychain-access-groups"] = .array(groups.map { .string($0) }) }
        if !appGroups.isEmpty { info["com.apple.security.application-groups"] = .array(appGroups.map { .string($0) }) }
        try Data(PlistCodec.encode(.dictionary(info), format: .xml)).write(to: URL(fileURLWithPath: bundle + "/Info.plist"))
        if !unsigned, let key = key ?? (groups.isEmpty && appGroups.isEmpty ? nil : testKey) {
            try CodeSigning.sign(bundleAt: bundle, key: key)
        }
        return bundle
    }

    func bytes(_ file: String) -> [UInt8]? { FileManager.default.contents(atPath: file).map { Array($0) } }
    func write(_ bytes: [UInt8], _ file: String) throws { try Data(bytes).write(to: URL(fileURLWithPath: file)) }
    func files() -> [String] { ((try? FileManager.default.contentsOfDirectory(atPath: keychains)) ?? []).sorted() }
}

/// The publisher key of the tests' signed bundles, and its team's group prefix.
let testKey = SigningKey.generate()
let team = testKey.team.rawValue

let testClock: @Sendable () -> PlistDate = { PlistDate(secondsSince1970: 1_800_000_000) }

func context(_ id: String, _ groups: [String] = []) throws -> KeychainContext {
    try KeychainContext(bundleIdentifier: id, additionalGroups: groups)
}

func group(_ name: String) throws -> AccessGroup { try AccessGroup(name) }

func secret(_ text: String) -> SecureBytes { SecureBytes(utf8: text) }

func text(_ s: SecureBytes?) -> String? {
    s.map { String(decoding: $0.exposedCopy(), as: UTF8.self) }
}

func generic(_ account: String, _ service: String, group: AccessGroup? = nil, sync: Bool = false, label: String? = nil,
             generic: String? = nil, accessibility: Accessibility = .whenUnlocked) -> ItemAttributes {
    var a = ItemAttributes(itemClass: .genericPassword, accessGroup: group)
    a.account = account; a.service = service; a.synchronizable = sync; a.label = label
    a.generic = generic.map { Array($0.utf8) }; a.accessibility = accessibility
    return a
}

func internet(_ account: String, _ server: String, protocol p: String = "htps", port: Int = 443, path: String = "") -> ItemAttributes {
    var a = ItemAttributes(itemClass: .internetPassword)
    a.account = account; a.server = server; a.protocol = p; a.port = port; a.path = path; a.authenticationType = "dflt"
    return a
}

func query(_ cls: ItemClass = .genericPassword, account: String? = nil, service: String? = nil, limit: ItemQuery.MatchLimit = .one,
           data: Bool = true, attributes: Bool = false, sync: ItemQuery.Synchronizable = .no, group: AccessGroup? = nil) -> ItemQuery {
    var q = ItemQuery(itemClass: cls)
    q.account = account; q.service = service; q.matchLimit = limit; q.returnData = data; q.returnAttributes = attributes
    q.synchronizable = sync; q.accessGroup = group
    return q
}

/// The status of a keychain call, 0 when it succeeds (as `OSStatus`).
func status(_ body: () throws(KeychainError) -> Void) -> Int32 {
    do { try body(); return 0 } catch { return error.status }
}

/// A field of a keychain file's property list; device.plist's body is read
/// past its sealed header (format 3) or as it is (formats 1 and 2).
func recordField(_ s: KeychainScratch, _ name: String, _ key: PlistKey) throws -> PlistValue? {
    var bytes = try #require(s.bytes(s.keychains + "/" + name))
    if bytes.starts(with: Array("AHKDEV".utf8)) { bytes = Array(bytes[72...]) }
    return try PlistCodec.decode(bytes).dictionaryValue?[key]
}
