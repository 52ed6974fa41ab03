import Foundation
import Preferences
import PrefsProtocol
import PropertyList
import Testing

/// prefsd applies the domains' settings schemas itself: a client that
/// speaks the protocol straight to the socket (no `defaults` in between)
/// cannot store what an installed app's Settings.bundle forbids, and
/// `force` is an explicit request field.
@Suite("prefsd write policy")
struct PrefsdWritePolicyTests {
    static let id = SettingsBundleEndToEndTests.id

    /// A root with ScaryBugs v1 installed and a prefsd serving it.
    func installed() throws -> (TempRoot, TestDaemon) {
        let root = try TempRoot()
        let install = try CrashAndDoctorTests.apphome(root, ["install", SettingsBundleEndToEndTests.v1])
        #expect(install.status == 0, "\(install)")
        return (root, try TestDaemon(root))
    }

    /// Every file under the root but the compiled-schema cache (which a
    /// validation may fill) and empty lock files.
    func data(_ root: TempRoot) -> [String: Data] {
        root.snapshot().filter { path, bytes in
            !path.contains("/Library/Caches/SettingsSchemas/") && !(path.hasSuffix(".lock") && bytes.isEmpty)
        }
    }

    @Test(arguments: [
        (Request.write(DomainAddress(.named(id), scope: .anyHost), set: ["sortOrder": .string("size")]), "SB701"),
        (Request.batch(DomainAddress(.named(id), scope: .anyHost), ChangeSet(set: ["thumbnailSize": .integer(500)], expected: ["thumbnailSize": PlistValue?.none])), "SB702"),
        (Request.write(DomainAddress(.named(id), scope: .anyHost), set: ["showRatings": .string("yes")]), "SB703"),
    ])
    func aSchemaBreakingWriteSentStraightToTheSocketIsRefused(request: Request, rule: String) throws {
        let (root, daemon) = try installed()
        let before = data(root)
        let raw = try RawConnection(daemon.socket)
        raw.send(try raw.request(.hello(root: root.root.path), id: 1))
        #expect(raw.reply()?.errorCode == nil)
        raw.send(try raw.request(request, id: 2))
        guard case .response(let id, .failure(let error))? = raw.reply() else {
            Issue.record("prefsd accepted a value the schema forbids")
            return
        }
        #expect(id == 2)
        #expect(error.code == ErrorCode.policyViolation.rawValue)
        #expect(error.message.contains("[\(rule)]\nDefaults have not been changed (use --force to write anyway)."))
        #expect(data(root) == before, "a refused raw write changed a file")
        // The same message `defaults` gives on the files.
        let direct = try root.run(["write", Self.id, "sortOrder", "-string", "size"], env: ["APPHOME_PREFSD": "off"])
        if rule == "SB701" { #expect(direct.stderr == "defaults: " + error.message + "\n") }
        _ = try daemon.stop()
    }

    @Test func forceIsAnExplicitRequestFieldAndItsNoteComesBack() throws {
        let (root, daemon) = try installed()
        let address = DomainAddress(.named(Self.id), scope: .anyHost)
        let raw = try RawConnection(daemon.socket)
        raw.send(try raw.request(.hello(root: root.root.path), id: 1))
        _ = raw.reply()
        raw.send(try raw.request(.write(address, set: ["sortOrder": .string("size")], options: WriteOptions(force: true)), id: 2))
        guard case .response(2, .success(let result))? = raw.reply() else {
            Issue.record("a forced write was refused")
            return
        }
        guard case .array(let notes)? = result["notes"], case .dictionary(let note)? = notes.first else {
            Issue.record("no note for a forced write: \(result)")
            return
        }
        #expect(note["rule"] == .string("SB701"))
        #expect(note["forced"] == .bool(true))
        let read = try root.run(["read", Self.id, "sortOrder"], env: daemon.environment)
        #expect(read.stdout == "size\n")
        // A wrongly typed `force` is a malformed request, not a forced write.
        raw.send(Frame.encode(try PlistCodec.encode(.dictionary([
            "op": .integer(Int128(Operation.write.rawValue)), "id": .integer(3), "domain": .string(Self.id),
            "set": .dictionary(["sortOrder": .string("weird")]), "force": .string("yes"),
        ]), format: .binary)))
        #expect(raw.reply()?.errorCode == ErrorCode.malformedRequest.rawValue)
        #expect(try root.run(["read", Self.id, "sortOrder"], env: daemon.environment).stdout == "size\n")
        _ = try daemon.stop()
    }

    /// prefsd keeps the registry it read while the file is unchanged: an
    /// install and an uninstall made by another process (prefsd not asked)
    /// still govern the very next write.
    @Test func anInstallAndAnUninstallMadeWithoutPrefsdGovernTheNextWrite() throws {
        let root = try TempRoot()
        let daemon = try TestDaemon(root)
        let address = DomainAddress(.named(Self.id), scope: .anyHost)
        let raw = try RawConnection(daemon.socket)
        raw.send(try raw.request(.hello(root: root.root.path), id: 1))
        _ = raw.reply()
        func write(_ id: Int) -> Reply? {
            raw.send(try! raw.request(.write(address, set: ["sortOrder": .string("size")]), id: id))
            return raw.reply()
        }
        // No app, no schema: stored.
        for id in 2...3 { #expect(write(id)?.errorCode == nil) }
        let off = ["APPHOME_PREFSD": "off"]
        let install = try CrashAndDoctorTests.apphome(root, ["install", SettingsBundleEndToEndTests.v1], env: off)
        try #require(install.status == 0, "\(install)")
        for id in 4...5 { #expect(write(id)?.errorCode == ErrorCode.policyViolation.rawValue) }
        let uninstall = try CrashAndDoctorTests.apphome(root, ["uninstall", Self.id], env: off)
        try #require(uninstall.status == 0, "\(uninstall)")
        for id in 6...7 { #expect(write(id)?.errorCode == nil) }
        _ = try daemon.stop()
    }

    @Test func defaultsThroughPrefsdAndOnTheFilesGiveTheSameAnswers() throws {
        let (root, daemon) = try installed()
        let args = ["write", Self.id, "thumbnailSize", "-int", "500"]
        let viaDaemon = try root.run(args, env: daemon.environment)
        let direct = try root.run(args, env: ["APPHOME_PREFSD": "off"])
        #expect(viaDaemon.status == 1)
        #expect(viaDaemon.stderr == direct.stderr)
        #expect(viaDaemon.status == direct.status)
        let forced = try root.run(["write", "--force"] + args.dropFirst(), env: daemon.environment)
        #expect(forced.status == 0)
        #expect(forced.stderr.hasPrefix("defaults: warning: ") && forced.stderr.hasSuffix("[SB702] (written anyway: --force)\n"))
        _ = try daemon.stop()
    }
}
