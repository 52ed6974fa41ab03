import Foundation
import TestSupport
import Testing
import Containers
import PropertyList

/// A temporary directory for one test, removed when the value goes away.
public final class Scratch: @unchecked Sendable {
    public let path: String
    public var root: String { path + "/root" }

    public init() {
        path = ScratchDirectory.make("containers-test")
    }

    deinit { ScratchDirectory.remove(path) }

    /// Makes `<path>/<dir>/<name>` with an Info.plist built from `info`
    /// (XML unless told), an executable, a resource and a symlink. A bundle
    /// whose `info` claims groups is signed with ``testSigningKey`` (only a
    /// signed app may claim them), unless `signed` says otherwise.
    @discardableResult
    public func makeBundle(_ dir: String = "v1", name: String = "Sample.app", info: [PlistKey: PlistValue]?,
                    format: PlistFormat = .xml, resource: String = "one", signed: Bool? = nil) throws -> String {
        let bundle = path + "/" + dir + "/" + name
        try FileManager.default.createDirectory(atPath: bundle + "/Resources", withIntermediateDirectories: true)
        if let info {
            try Data(PlistCodec.encode(.dictionary(info), format: format)).write(to: URL(fileURLWithPath: bundle + "/Info.plist"))
        }
        try Data(resource.utf8).write(to: URL(fileURLWithPath: bundle + "/Resources/data.txt"))
        try Data("#!/bin/sh\necho hi\n".utf8).write(to: URL(fileURLWithPath: bundle + "/Sample"))
        chmod(bundle + "/Sample", 0o755)
        try FileManager.default.createSymbolicLink(atPath: bundle + "/link.txt", withDestinationPath: "Resources/data.txt")
        let claims = info.map { $0["keychain-access-groups"] != nil || $0[AppGroupIdentifier.infoPlistKey] != nil } ?? false
        if signed ?? claims {
            // A bundle whose Info.plist does not load cannot be signed; the test wants that load error.
            if (try? AppBundle(path: bundle, checkSignature: false)) != nil { try CodeSigning.sign(bundleAt: bundle, key: testSigningKey) }
        }
        return bundle
    }

    public static func info(id: String = "com.example.Sample", version: String = "1", short: String? = "1.0") -> [PlistKey: PlistValue] {
        var d: [PlistKey: PlistValue] = ["CFBundleIdentifier": .string(id), "CFBundleVersion": .string(version)]
        if let short { d["CFBundleShortVersionString"] = .string(short) }
        return d
    }

    /// The Info.plist of an app that claims `groups`.
    public static func info(_ id: String, groups: [String], version: String = "1") -> [PlistKey: PlistValue] {
        var d = info(id: id, version: version)
        d[AppGroupIdentifier.infoPlistKey] = .array(groups.map { .string($0) })
        return d
    }

    public func write(_ text: String, to file: String) throws {
        try FileManager.default.createDirectory(atPath: (file as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try Data(text.utf8).write(to: URL(fileURLWithPath: file))
    }

    public func read(_ file: String) -> String? {
        FileManager.default.contents(atPath: file).map { String(decoding: $0, as: UTF8.self) }
    }

    public func entries(_ dir: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []).sorted()
    }

    /// The home directories (UUID-named) under the root.
    public var homes: [String] { entries(root + "/Applications").filter { ContainerLayout.isValidUUID($0) } }
}

/// The publisher key of the tests' signed bundles.
public let testSigningKey = SigningKey.generate()

public func fixedClock() -> PlistDate { PlistDate(secondsSince1970: 1_800_000_000) }

public func mode(_ path: String) -> mode_t {
    var st = stat()
    lstat(path, &st)
    return st.st_mode
}

public func inode(_ path: String) -> UInt64 {
    var st = stat()
    lstat(path, &st)
    return UInt64(st.st_ino)
}

public func FileSystem_exists(_ path: String) -> Bool { var st = stat(); return lstat(path, &st) == 0 }
public func FileSystem_isDirectory(_ path: String) -> Bool { mode(path) & S_IFMT == S_IFDIR && FileSystem_exists(path) }
public func FileSystem_lastComponent(_ path: String) -> String { (path as NSString).lastPathComponent }
