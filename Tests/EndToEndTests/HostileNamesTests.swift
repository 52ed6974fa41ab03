import Foundation
import Testing

/// Names are bytes wherever a name decides trust or identity (issue 23,
/// findings 1 and 8): with the built `apphome`, a file added after
/// signing under a canonically equivalent name, or under a name that is
/// not UTF-8, never verifies nor installs. Each forgery is tried with the
/// two names created in both orders, so that whatever order the file
/// system lists them in is covered.
@Suite("hostile names")
struct HostileNamesTests {
    let t: TempRoot
    init() throws { t = try TempRoot() }

    func apphome(_ arguments: [String]) throws -> CommandResult {
        try Subprocess.run(try TestDaemon.binary("apphome"), ["--root", t.root.path] + arguments,
                           environment: t.environment(["APPHOME_KEYCHAIN_KEY_STORE": "file"]), ioDirectory: t.io)
    }

    /// Creates the file `name` (bytes) in `directory` holding `contents`.
    func create(_ directory: String, _ name: [UInt8], _ contents: String) throws {
        let path = Array(directory.utf8) + [0x2F] + name + [0]
        let fd = path.withUnsafeBufferPointer { p in
            p.baseAddress!.withMemoryRebound(to: CChar.self, capacity: p.count) { open($0, O_WRONLY | O_CREAT | O_EXCL, 0o644) }
        }
        try #require(fd >= 0, "cannot create \(name) in \(directory)")
        _ = contents.utf8CString.withUnsafeBufferPointer { write(fd, $0.baseAddress, $0.count - 1) }
        close(fd)
    }

    func bundleDirectory(_ dir: String) throws -> String {
        let path = t.workFile(dir).appendingPathComponent("Bugs.app").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        try Data("{ CFBundleIdentifier = com.example.Bugs; CFBundleVersion = 1; }\n".utf8).write(to: URL(fileURLWithPath: path + "/Info.plist"))
        return path
    }

    /// A bundle holding the signed file `signed` ("sealed"), signed, and
    /// then a copy of it whose directory holds `signed` and `forged`
    /// ("unsealed") created in the order given, with the same signature.
    func forgedBundle(_ dir: String, signed: [UInt8], forged: [UInt8], forgedFirst: Bool) throws -> String {
        let key = t.workFile(dir + ".key").path
        #expect(try apphome(["keygen", key]).status == 0)
        let original = try bundleDirectory(dir + "-original")
        try create(original, signed, "sealed")
        let signedResult = try apphome(["sign", original, "--key", key])
        try #require(signedResult.status == 0, "\(signedResult)")
        let copy = try bundleDirectory(dir)
        try FileManager.default.createDirectory(atPath: copy + "/_CodeSignature", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: original + "/_CodeSignature/CodeResources", toPath: copy + "/_CodeSignature/CodeResources")
        if forgedFirst { try create(copy, forged, "unsealed") }
        try create(copy, signed, "sealed")
        if !forgedFirst { try create(copy, forged, "unsealed") }
        return copy
    }

    static let composed = Array("x1\u{E9}".utf8)          // é as one scalar
    static let decomposed = Array("x1e\u{301}".utf8)      // e + COMBINING ACUTE ACCENT
    static let replacement = Array("\u{FFFD}x".utf8)      // what a lossy decoding makes of 0xFF
    static let invalid: [UInt8] = [0xFF, 0x78]            // "\xFFx"

    @Test(arguments: [false, true])
    func aCanonicallyEquivalentNameAddedAfterSigningIsAFileAdded(forgedFirst: Bool) throws {
        for (i, (signed, forged)) in [(Self.composed, Self.decomposed), (Self.decomposed, Self.composed)].enumerated() {
            let bundle = try forgedBundle("eq\(i)-\(forgedFirst)", signed: signed, forged: forged, forgedFirst: forgedFirst)
            let verified = try apphome(["verify", bundle])
            #expect(verified.status == 1, "\(verified)")
            #expect(verified.stderr == "apphome: \(bundle) failed signature verification: file added: \(String(decoding: forged, as: UTF8.self))\n", "\(verified)")
            let installed = try apphome(["install", bundle])
            #expect(installed.status == 1 && installed.stderr.contains("file added"), "\(installed)")
            #expect(!(try apphome(["list"]).stdout.contains("com.example.Bugs")))
        }
    }

    @Test(arguments: [false, true])
    func aNameThatIsNotUTF8AddedAfterSigningIsAFileAddedShownEscaped(forgedFirst: Bool) throws {
        let bundle = try forgedBundle("bad-\(forgedFirst)", signed: Self.replacement, forged: Self.invalid, forgedFirst: forgedFirst)
        let verified = try apphome(["verify", bundle])
        #expect(verified.status == 1, "\(verified)")
        #expect(verified.stderr == "apphome: \(bundle) failed signature verification: file added: \\xFFx (a name that is not valid UTF-8, shown with its bytes escaped)\n", "\(verified)")
        let installed = try apphome(["install", bundle])
        #expect(installed.status == 1 && installed.stderr.contains("file added: \\xFFx"), "\(installed)")
        #expect(!(try apphome(["list"]).stdout.contains("com.example.Bugs")))
    }

    @Test func renamingASignedFileToItsOtherFormDoesNotVerify() throws {
        let key = t.workFile("rename.key").path
        #expect(try apphome(["keygen", key]).status == 0)
        let bundle = try bundleDirectory("rename")
        try create(bundle, Self.composed, "sealed")
        #expect(try apphome(["sign", bundle, "--key", key]).status == 0)
        #expect(try apphome(["verify", bundle]).status == 0)
        #expect(rename(bundle + "/x1\u{E9}", bundle + "/x1e\u{301}") == 0)
        let verified = try apphome(["verify", bundle])
        #expect(verified.status == 1 && verified.stderr.contains("file added: x1e\u{301}"), "\(verified)")
    }

    @Test func signAndInstallRefuseANameThatIsNotUTF8ShowingItEscaped() throws {
        let key = t.workFile("refuse.key").path
        #expect(try apphome(["keygen", key]).status == 0)
        let bundle = try bundleDirectory("refuse")
        try create(bundle, Self.invalid, "x")
        let signed = try apphome(["sign", bundle, "--key", key])
        #expect(signed.status == 1, "\(signed)")
        #expect(signed.stderr == "apphome: the file name \\xFFx is not valid UTF-8 (shown with its bytes escaped): AppHome refuses a name it cannot read as text\n", "\(signed)")
        #expect(!FileManager.default.fileExists(atPath: bundle + "/_CodeSignature"))
        // Unsigned, the install copy refuses it the same way, and installs nothing.
        let installed = try apphome(["install", bundle])
        #expect(installed.status == 1 && installed.stderr.contains("\\xFFx") && installed.stderr.contains("not valid UTF-8"), "\(installed)")
        #expect(!installed.stderr.contains("\u{FFFD}"))
        #expect(!(try apphome(["list"]).stdout.contains("com.example.Bugs")))
    }
}

/// Versions only go up (issue 23, finding 3): with the built `apphome`,
/// an older signed version of the same team is not taken as an update,
/// and an older backup is not restored over a newer install, unless
/// `--allow-downgrade` says so.
@Suite("versions only go up")
struct DowngradeTests {
    let t: TempRoot
    init() throws { t = try TempRoot() }

    func apphome(_ arguments: [String]) throws -> CommandResult {
        try Subprocess.run(try TestDaemon.binary("apphome"), ["--root", t.root.path] + arguments,
                           environment: t.environment(["APPHOME_KEYCHAIN_KEY_STORE": "file"]), ioDirectory: t.io)
    }

    func bundle(_ dir: String, version: String, short: String, key: String) throws -> String {
        let path = t.workFile(dir).appendingPathComponent("Bugs.app").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        try Data("{ CFBundleIdentifier = com.example.Bugs; CFBundleVersion = \"\(version)\"; CFBundleShortVersionString = \"\(short)\"; }\n".utf8)
            .write(to: URL(fileURLWithPath: path + "/Info.plist"))
        let signed = try apphome(["sign", path, "--key", key])
        try #require(signed.status == 0, "\(signed)")
        return path
    }

    @Test func anOlderSignedVersionIsRefusedUnlessAllowed() throws {
        let key = t.workFile("team.key").path
        #expect(try apphome(["keygen", key]).status == 0)
        let v1 = try bundle("v1", version: "1", short: "1.0", key: key)
        let v2 = try bundle("v2", version: "2", short: "2.0", key: key)
        #expect(try apphome(["install", v2]).status == 0)
        let registry = t.root.appendingPathComponent("Applications/registry.plist")
        let before = try Data(contentsOf: registry)
        let refused = try apphome(["update", v1])
        #expect(refused.status == 1 && refused.stdout.isEmpty, "\(refused)")
        #expect(refused.stderr == "apphome: the bundle 1.0 (1) of com.example.Bugs is a downgrade of the installed 2.0 (2): CFBundleVersion 1 is lower than 2; versions only go up (pass --allow-downgrade to replace it anyway)\n", "\(refused)")
        #expect(try Data(contentsOf: registry) == before)
        // Compared as integers, component by component: 1.10 is newer than 1.9, 2 is 2.0.
        let v19 = try bundle("v19", version: "1.9", short: "1.9", key: key)
        let v110 = try bundle("v110", version: "1.10", short: "1.10", key: key)
        let v20 = try bundle("v20", version: "2.0", short: "2.0", key: key)
        #expect(try apphome(["update", v20]).status == 0)
        #expect(try apphome(["update", v19]).status == 1)
        let allowed = try apphome(["update", v19, "--allow-downgrade"])
        #expect(allowed.status == 0 && allowed.stdout.hasPrefix("updated com.example.Bugs from 2.0 (2.0) to 1.9 (1.9)"), "\(allowed)")
        #expect(try apphome(["update", v110]).status == 0)
        // A version that is not integers cannot be ordered: refused, named.
        let odd = try bundle("odd", version: "3beta", short: "3", key: key)
        let unordered = try apphome(["update", odd])
        #expect(unordered.status == 1 && unordered.stderr.contains("AppHome cannot tell which is newer"), "\(unordered)")
    }

    @Test func restoringAnOlderBackupOverANewerInstallIsADowngrade() throws {
        let key = t.workFile("team.key").path
        #expect(try apphome(["keygen", key]).status == 0)
        let v1 = try bundle("v1", version: "1", short: "1.0", key: key)
        let v2 = try bundle("v2", version: "2", short: "2.0", key: key)
        #expect(try apphome(["install", v1]).status == 0)
        #expect(try apphome(["backup", "com.example.Bugs"]).status == 0)
        #expect(try apphome(["update", v2]).status == 0)
        let registry = t.root.appendingPathComponent("Applications/registry.plist")
        let before = try Data(contentsOf: registry)
        let refused = try apphome(["restore", "com.example.Bugs"])
        #expect(refused.status == 1, "\(refused)")
        #expect(refused.stderr == "apphome: the backup 1.0 (1) of com.example.Bugs is a downgrade of the installed 2.0 (2): CFBundleVersion 1 is lower than 2; versions only go up (pass --allow-downgrade to replace it anyway); nothing was changed\n", "\(refused)")
        #expect(try Data(contentsOf: registry) == before)
        let withOldBundle = try apphome(["restore", "com.example.Bugs", "--app", v1])
        #expect(withOldBundle.status == 1 && withOldBundle.stderr.contains("the bundle 1.0 (1) of com.example.Bugs is a downgrade"), "\(withOldBundle)")
        let allowed = try apphome(["restore", "com.example.Bugs", "--allow-downgrade"])
        #expect(allowed.status == 0 && allowed.stdout.hasPrefix("restored com.example.Bugs 2.0 (2)"), "\(allowed)")
    }
}
