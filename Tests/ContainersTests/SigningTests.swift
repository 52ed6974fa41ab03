import Foundation
import Testing
@testable import Containers
import Backups
import ContainersTestSupport
import PropertyList

/// Publisher keys, team identifiers, `CodeResources`, and what verification
/// names for each kind of tampering.
@Suite struct SigningTests {
    static let key = SigningKey.generate()
    static let otherKey = SigningKey.generate()

    func signedBundle(_ s: Scratch, dir: String = "v1", info: [PlistKey: PlistValue] = Scratch.info(),
                      key: SigningKey = SigningTests.key) throws -> String {
        let bundle = try s.makeBundle(dir, info: info, signed: false)
        try CodeSigning.sign(bundleAt: bundle, key: key)
        return bundle
    }

    func verifyFailure(_ bundle: String) -> String? {
        do { _ = try AppBundle(path: bundle); return nil } catch { return error.description }
    }

    @Test func theTeamIsTheFirstFiftyBitsOfTheBlake2bOfThePublicKeyInBase32() {
        // Computed independently with Python's hashlib.blake2b and base64.b32encode.
        #expect(TeamIdentifier(publicKey: Array(0..<32)).rawValue == "ZMXVCYH4D5")
        let demo: [UInt8] = [0xfc, 0x05, 0xf9, 0x10, 0x49, 0x40, 0x67, 0x66, 0xd8, 0x06, 0x5c, 0x1a, 0xf0, 0x11, 0x4b, 0xe0,
                             0xe9, 0xf3, 0xb0, 0x00, 0x56, 0xc3, 0x32, 0xd4, 0xb4, 0xd4, 0xcb, 0x4e, 0xeb, 0xb2, 0x5c, 0x7f]
        #expect(TeamIdentifier(publicKey: demo).rawValue == "IOFOCQ24NE")
        #expect(TeamIdentifier("IOFOCQ24NE") != nil)
        for bad in ["IOFOCQ24N", "IOFOCQ24NE1", "iofocq24ne", "IOFOCQ24N1", "IOFOCQ24N8"] { #expect(TeamIdentifier(bad) == nil) }
    }

    @Test func keygenWritesTheSecretKey0600AndThePublicKeyBesideItAndNeverReplacesEither() throws {
        let s = Scratch()
        let file = s.path + "/publisher.key"
        let key = SigningKey.generate()
        try key.write(to: file)
        #expect(mode(file) & 0o777 == 0o600)
        #expect(mode(file + ".pub") & 0o777 == 0o644)
        #expect(try SigningKey.read(from: file).team == key.team)
        #expect(try SigningKey.readPublicKey(from: file + ".pub") == key.publicKey)
        #expect(s.read(file + ".pub")!.hasSuffix("team \(key.team)\n"))
        let before = s.read(file)
        #expect(throws: ContainersError.signingKey(path: file, reason: "it already exists; AppHome never replaces a key file")) {
            try SigningKey.generate().write(to: file)
        }
        #expect(s.read(file) == before)
        chmod(file, 0o644)
        #expect(throws: ContainersError.signingKey(path: file, reason: "it is readable by others (mode 644); make it 0600")) {
            _ = try SigningKey.read(from: file)
        }
    }

    @Test func aSignedBundleVerifiesWithItsTeamAndExpandedEntitlements() throws {
        let s = Scratch()
        var info = Scratch.info()
        info["keychain-access-groups"] = .array([.string("$(AppIdentifierPrefix)shared"), .string("$(TeamIdentifierPrefix)two")])
        info[AppGroupIdentifier.infoPlistKey] = .array([.string("group.com.example.G")])
        let bundle = try signedBundle(s, info: info)
        let signature = try #require(try AppBundle(path: bundle).signature)
        let team = Self.key.team.rawValue
        #expect(signature.team == Self.key.team)
        #expect(signature.entitlements.keychainAccessGroups == [team + ".shared", team + ".two"])
        #expect(signature.entitlements.applicationGroups.map(\.rawValue) == ["group.com.example.G"])
        // Signing again replaces the file.
        try CodeSigning.sign(bundleAt: bundle, key: Self.otherKey)
        #expect(try AppBundle(path: bundle).signature?.team == Self.otherKey.team)
    }

    @Test func anUnsignedBundleLoadsWithoutASignatureAndVerifySaysItIsNotSigned() throws {
        let s = Scratch()
        let bundle = try s.makeBundle(info: Scratch.info())
        #expect(try AppBundle(path: bundle).signature == nil)
        #expect(throws: ContainersError.notSigned(path: bundle)) { _ = try CodeSigning.verify(bundleAt: bundle, declared: Entitlements()) }
    }

    @Test func aKeyValueStoreIsSignedInVersionTwoAndMustBeTheTeams() throws {
        let s = Scratch()
        var info = Scratch.info()
        info["com.apple.developer.ubiquity-kvstore-identifier"] = .string("$(TeamIdentifierPrefix)com.example.notes")
        let bundle = try s.makeBundle("kv", info: info, signed: false)
        try CodeSigning.sign(bundleAt: bundle, key: Self.key)
        let signature = try #require(try AppBundle(path: bundle).signature)
        #expect(signature.entitlements.ubiquityKeyValueStore == Self.key.team.rawValue + ".com.example.notes")
        let top = try PlistCodec.decode(Array(FileManager.default.contents(atPath: bundle + "/_CodeSignature/CodeResources")!)).dictionaryValue!
        #expect(top["FormatVersion"] == .integer(2))
        // Without the claim a signature stays version 1, as before.
        let plain = try s.makeBundle("plain", info: Scratch.info(), signed: false)
        try CodeSigning.sign(bundleAt: plain, key: Self.key)
        let plainTop = try PlistCodec.decode(Array(FileManager.default.contents(atPath: plain + "/_CodeSignature/CodeResources")!)).dictionaryValue!
        #expect(plainTop["FormatVersion"] == .integer(1))
        // Another team's store cannot be named.
        var stolen = Scratch.info()
        stolen["com.apple.developer.ubiquity-kvstore-identifier"] = .string(Self.otherKey.team.rawValue + ".com.example.notes")
        let other = try s.makeBundle("stolen", info: stolen, signed: false)
        #expect(throws: ContainersError.self) { try CodeSigning.sign(bundleAt: other, key: Self.key) }
    }

    @Test func signingRefusesAKeychainGroupOfAnotherTeam() throws {
        let s = Scratch()
        var info = Scratch.info()
        info["keychain-access-groups"] = .array([.string(Self.otherKey.team.rawValue + ".shared")])
        let bundle = try s.makeBundle(info: info, signed: false)
        #expect(throws: ContainersError.self) { try CodeSigning.sign(bundleAt: bundle, key: Self.key) }
        #expect(!FileManager.default.fileExists(atPath: bundle + "/_CodeSignature"))
    }

    /// Named mutations of one good signed bundle, and the first problem each is reported as.
    @Test(arguments: [
        ("a file added", "file added: extra.txt"),
        ("a file removed", "file removed: Resources/data.txt"),
        ("a file changed", "file changed: Resources/data.txt"),
        ("a claim added to Info.plist", "file changed: Info.plist"),
        ("a directory added", "directory added: More"),
        ("a link retargeted", "symlink changed: link.txt"),
        ("a file replaced by a link", "Resources/data.txt was a file when signed and is now a symlink"),
        ("a file added in _CodeSignature", "file added: _CodeSignature/extra"),
        ("a byte of the signature flipped", "the signature does not match: CodeResources was altered after signing"),
        ("the team replaced", "the team identifier"),
        ("a newer format", "CodeResources has format version 3, but this AppHome reads only up to version 2; use a newer apphome"),
        ("a FIFO added", "fifo is not a regular file, directory or symbolic link"),
    ])
    func everyTamperingIsFoundAndNamed(mutation: String, expected: String) throws {
        let s = Scratch()
        let bundle = try signedBundle(s)
        let resources = bundle + "/_CodeSignature/CodeResources"
        func editResources(_ edit: (inout [PlistKey: PlistValue]) -> Void) throws {
            var top = try PlistCodec.decode(Array(FileManager.default.contents(atPath: resources)!)).dictionaryValue!
            edit(&top)
            try Data(PlistCodec.encode(.dictionary(top), format: .binary)).write(to: URL(fileURLWithPath: resources))
        }
        switch mutation {
        case "a file added": try s.write("x", to: bundle + "/extra.txt")
        case "a file removed": try FileManager.default.removeItem(atPath: bundle + "/Resources/data.txt")
        case "a file changed": try s.write("two", to: bundle + "/Resources/data.txt")
        case "a claim added to Info.plist":
            var info = Scratch.info()
            info["keychain-access-groups"] = .array([.string(Self.key.team.rawValue + ".stolen")])
            try Data(PlistCodec.encode(.dictionary(info), format: .xml)).write(to: URL(fileURLWithPath: bundle + "/Info.plist"))
        case "a directory added": try FileManager.default.createDirectory(atPath: bundle + "/More", withIntermediateDirectories: false)
        case "a link retargeted":
            try FileManager.default.removeItem(atPath: bundle + "/link.txt")
            try FileManager.default.createSymbolicLink(atPath: bundle + "/link.txt", withDestinationPath: "/etc/passwd")
        case "a file replaced by a link":
            try FileManager.default.removeItem(atPath: bundle + "/Resources/data.txt")
            try FileManager.default.createSymbolicLink(atPath: bundle + "/Resources/data.txt", withDestinationPath: "../Sample")
        case "a file added in _CodeSignature": try s.write("x", to: bundle + "/_CodeSignature/extra")
        case "a byte of the signature flipped":
            try editResources { top in
                guard case .data(var sig)? = top["Signature"] else { return }
                sig[0] ^= 1
                top["Signature"] = .data(sig)
            }
        case "the team replaced": try editResources { $0["TeamIdentifier"] = .string(Self.otherKey.team.rawValue) }
        case "a newer format": try editResources { $0["FormatVersion"] = .integer(3) }
        case "a FIFO added": #expect(mkfifo(bundle + "/fifo", 0o600) == 0)
        default: Issue.record("unknown mutation \(mutation)")
        }
        let message = try #require(verifyFailure(bundle))
        #expect(message.hasPrefix("\(bundle) failed signature verification: "))
        #expect(message.contains(expected), "\(mutation): \(message)")
    }

    @Test func aLinkIsSealedAsItsTargetStringAndNeverFollowed() throws {
        let s = Scratch()
        try s.write("outside", to: s.path + "/outside.txt")
        let bundle = try s.makeBundle(info: Scratch.info())
        try FileManager.default.createSymbolicLink(atPath: bundle + "/out", withDestinationPath: s.path + "/outside.txt")
        try CodeSigning.sign(bundleAt: bundle, key: Self.key)
        try s.write("changed outside the bundle", to: s.path + "/outside.txt")
        #expect(try AppBundle(path: bundle).signature?.team == Self.key.team)
    }
}

/// What install, update and restore accept from signed and unsigned
/// bundles: each forged claim refused with nothing changed.
@Suite struct EntitlementPolicyTests {
    let s = Scratch()
    var manager: ContainerManager { ContainerManager(root: s.root, now: fixedClock) }
    var team: String { SigningTests.key.team.rawValue }

    func bundle(_ dir: String, id: String, version: String = "1", keychain: [String] = [], appGroups: [String] = [],
                key: SigningKey? = SigningTests.key) throws -> AppBundle {
        var info = Scratch.info(id: id, version: version)
        if !keychain.isEmpty { info["keychain-access-groups"] = .array(keychain.map { .string($0) }) }
        if !appGroups.isEmpty { info[AppGroupIdentifier.infoPlistKey] = .array(appGroups.map { .string($0) }) }
        let path = try s.makeBundle(dir, info: info, signed: false)
        if let key { try CodeSigning.sign(bundleAt: path, key: key) }
        return try AppBundle(path: path)
    }

    func registryBytes() -> String? { s.read(s.root + "/Applications/registry.plist") }

    @Test func anInstallRecordsTheTeamAndTheSignedGroups() throws {
        let entry = try manager.install(bundle("a", id: "com.example.A", keychain: ["$(AppIdentifierPrefix)shared"],
                                               appGroups: ["group.com.example.G"])).entry
        #expect(entry.team == SigningTests.key.team)
        #expect(entry.keychainGroups == [team + ".shared"])
        #expect(entry.groups.map(\.rawValue) == ["group.com.example.G"])
        let registry = try manager.registry.read()
        #expect(registry.entries[entry.bundleIdentifier] == entry)
        #expect(registry.groupTeams[try AppGroupIdentifier("group.com.example.G")] == SigningTests.key.team)
    }

    @Test(arguments: [("keychain-access-groups", "com.example.ScaryBugs"), ("app groups", "group.com.example.G")])
    func anUnsignedBundleThatClaimsAGroupIsRefusedAndPointsAtSign(kind: String, claim: String) throws {
        let b = try bundle("e", id: "com.evil.App", keychain: kind == "app groups" ? [] : [claim],
                           appGroups: kind == "app groups" ? [claim] : [], key: nil)
        #expect(throws: ContainersError.entitlementRefused(identifier: "com.evil.App", claim: claim,
            reason: "the bundle is unsigned, and an unsigned app holds only its own group (com.evil.App); sign it with 'apphome sign Sample.app --key KEYFILE' to claim shared groups")) {
            _ = try manager.install(b)
        }
        #expect(s.homes.isEmpty)
        #expect(registryBytes() == nil)
    }

    @Test func anAppGroupOfAnotherTeamIsRefused() throws {
        _ = try manager.install(bundle("a", id: "com.example.A", appGroups: ["group.com.example.G"]))
        let before = registryBytes()
        let evil = try bundle("e", id: "com.evil.App", appGroups: ["group.com.example.G"], key: SigningTests.otherKey)
        #expect(throws: ContainersError.entitlementRefused(identifier: "com.evil.App", claim: "group.com.example.G",
            reason: "it belongs to team \(team), and this bundle is signed by team \(SigningTests.otherKey.team)")) {
            _ = try manager.install(evil)
        }
        #expect(registryBytes() == before)
        #expect(s.homes.count == 1)
        // The same team may join the group.
        _ = try manager.install(bundle("b", id: "com.example.B", appGroups: ["group.com.example.G"]))
    }

    @Test func aClaimOfAnotherAppsBundleIdIsRefusedEitherWay() throws {
        let victimID = team + ".victim"
        _ = try manager.install(bundle("v", id: "com.example.Victim"))
        // A bundle id that happens to have a team's form, installed first…
        let odd = try bundle("o", id: victimID, key: nil)
        _ = try manager.install(odd)
        let claim = try bundle("e", id: "com.evil.App", keychain: [victimID])
        #expect(throws: ContainersError.entitlementRefused(identifier: "com.evil.App", claim: victimID,
                                                         reason: "it is the bundle identifier of another installed app")) {
            _ = try manager.install(claim)
        }
        // …or installed after the app that holds its id as a group.
        _ = try manager.uninstall(try BundleIdentifier(victimID))
        _ = try manager.install(claim)
        #expect(throws: ContainersError.self) { _ = try manager.install(odd) }
    }

    @Test(arguments: ["another team", "unsigned"])
    func anUpdateOfASignedAppFromAnotherPublisherIsRefusedAndChangesNothing(offered: String) throws {
        let installed = try manager.install(bundle("a1", id: "com.example.A")).entry
        try s.write("mine", to: installed.homeUUID.isEmpty ? "" : s.root + "/Applications/" + installed.homeUUID + "/Documents/d.txt")
        let before = registryBytes()
        let next = try bundle("a2", id: "com.example.A", version: "2", key: offered == "unsigned" ? nil : SigningTests.otherKey)
        let offeredText = offered == "unsigned" ? "an unsigned bundle" : "team \(SigningTests.otherKey.team)"
        #expect(throws: ContainersError.differentPublisher(identifier: "com.example.A", installed: "team \(team)", offered: offeredText)) {
            _ = try manager.update(next)
        }
        #expect(registryBytes() == before)
        #expect(s.homes == [installed.homeUUID])
        #expect(s.read(s.root + "/Applications/" + installed.homeUUID + "/Documents/d.txt") == "mine")
        // The same team updates.
        #expect(try manager.update(bundle("a3", id: "com.example.A", version: "3")).entry.version == "3")
    }

    @Test func aRestoreIntoAnAppOfAnotherTeamIsRefused() throws {
        let id = try BundleIdentifier("com.example.A")
        _ = try manager.install(bundle("a1", id: "com.example.A"))
        let backup = try manager.backup(id, to: s.root + "/Backups")
        #expect(backup.manifest.team == SigningTests.key.team)
        _ = try manager.uninstall(id)
        let foreign = try bundle("a2", id: "com.example.A", key: SigningTests.otherKey)
        #expect(throws: ContainersError.differentPublisher(identifier: "com.example.A", installed: "team \(team) (the backup's)",
                                                         offered: "team \(SigningTests.otherKey.team)")) {
            _ = try manager.restore(from: backup.manifestPath, bundle: foreign)
        }
        #expect(try manager.registry.read().entries.isEmpty)
        _ = try manager.restore(from: backup.manifestPath, bundle: bundle("a3", id: "com.example.A"))
    }

    @Test func aGroupsTeamGoesWithItsLastMemberAndAnotherTeamMayThenCreateItAgain() throws {
        let group = try AppGroupIdentifier("group.com.example.G")
        _ = try manager.install(bundle("a", id: "com.example.A", appGroups: [group.rawValue]))
        _ = try manager.install(bundle("b", id: "com.example.B", appGroups: [group.rawValue]))
        _ = try manager.uninstall(try BundleIdentifier("com.example.A"))
        #expect(try manager.registry.read().groupTeams[group] == SigningTests.key.team)
        _ = try manager.uninstall(try BundleIdentifier("com.example.B"))
        #expect(try manager.registry.read().groupTeams[group] == nil)
        _ = try manager.install(bundle("c", id: "com.other.C", appGroups: [group.rawValue], key: SigningTests.otherKey))
        #expect(try manager.registry.read().groupTeams[group] == SigningTests.otherKey.team)
    }

    @Test func anEditedInstalledInfoPlistChangesNoRecordAndNoGroupRouting() throws {
        let entry = try manager.install(bundle("a", id: "com.example.A")).entry
        let home = manager.layout.home(uuid: entry.homeUUID, bundleName: entry.bundleName)
        chmod(home.app, 0o755)
        chmod(home.app + "/Info.plist", 0o644)
        var info = Scratch.info(id: "com.example.A")
        info[AppGroupIdentifier.infoPlistKey] = .array([.string("group.com.example.G")])
        try Data(PlistCodec.encode(.dictionary(info), format: .xml)).write(to: URL(fileURLWithPath: home.app + "/Info.plist"))
        #expect(try manager.entry(for: entry.bundleIdentifier) == entry)
        #expect(ContainerRegistry.preferencesDirectories(root: s.root).keys.sorted() == ["com.example.A"])
        #expect(try manager.registry.groupContainers(of: entry.bundleIdentifier).isEmpty)
    }

    @Test func aVersion2RegistryIsReadAsUnsignedAppsHoldingOnlyTheirOwnGroup() throws {
        let v2: PlistValue = .dictionary([
            "FormatVersion": .integer(2),
            "Applications": .dictionary(["com.example.A": .dictionary([
                "HomeUUID": .string("0A1B2C3D-0000-4000-8000-000000000001"), "BundleName": .string("A.app"),
                "CFBundleVersion": .string("1"), "InstallTime": .date(fixedClock()),
                "ApplicationGroups": .array([.string("group.com.example.G")]),
            ])]),
            "Groups": .dictionary(["group.com.example.G": .dictionary(["ContainerUUID": .string("0A1B2C3D-0000-4000-8000-000000000002")])]),
        ])
        let registry = try Registry(decoding: PlistCodec.encode(v2, format: .binary), path: "r")
        let entry = try #require(registry.entries[try BundleIdentifier("com.example.A")])
        #expect(entry.team == nil && entry.groups.isEmpty && entry.keychainGroups.isEmpty)
        #expect(registry.groups.count == 1 && registry.groupTeams.isEmpty)
        // Its container has no team: no app can claim it.
        let claim = try bundle("b", id: "com.example.B", appGroups: ["group.com.example.G"])
        #expect(throws: ContainersError.self) { try manager.checkEntitlements(claim, in: registry) }
        #expect(try Registry(decoding: registry.encoded(), path: "r") == registry)
    }
}
