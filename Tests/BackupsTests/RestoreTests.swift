import AppHomeSystem
import Foundation
import Testing
@testable import Containers
@testable import Backups
import ContainersTestSupport
import PropertyList

@Suite struct RestoreTests {
    @Test func restoreOverAnInstalledAppReplacesItsDataAndEmptiesCachesAndTmp() throws {
        // A clock that moves, so that keeping the install time shows.
        let ticks = PruneTests.Counter()
        let f = try BackupFixture(clock: { PlistDate(secondsSince1970: 1_800_000_000 + Double(ticks.next())) })
        let backup = try f.manager.backup(f.bundle.identifier)
        let old = f.home
        try f.s.write("changed later", to: old.documents + "/bug1.txt")
        try f.s.write("new later", to: old.documents + "/later.txt")
        let report = try f.manager.restore(from: backup.manifestPath)
        #expect(report.home.path != old.path)
        #expect(!FileSystem_exists(old.path), "the old home is removed")
        #expect(try f.manager.home(for: f.bundle.identifier) == report.home)
        for (file, text) in BackupFixture.userData { #expect(f.s.read(report.home.path + "/" + file) == text) }
        #expect(!FileSystem_exists(report.home.documents + "/later.txt"))
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: report.home.documents + "/latest") == "bug1.txt")
        #expect(f.s.entries(report.home.caches).isEmpty && f.s.entries(report.home.tmp).isEmpty)
        #expect(f.s.read(report.home.app + "/Resources/data.txt") == "one", "the installed bundle is kept")
        #expect(report.previous?.homeUUID == FileSystem_lastComponent(old.path))
        #expect(report.entry.installTime == report.previous?.installTime)
        #expect(report.entry.installTime.secondsSince1970 == 1_800_000_001, "the first tick: the install's")
        #expect(report.filesRestored == 5 && report.bytesRestored == backup.manifest.totalBytes)
        #expect(f.s.homes == [report.entry.homeUUID])
    }

    /// "é.txt" (U+00E9) and "e" + U+0301 + ".txt" are two files on Linux;
    /// backup, the second (incremental) backup and restore keep both, each
    /// with its own contents (paths compare by scalars, not as `String`s).
    @Test func canonicallyEquivalentFileNamesAreTwoFilesThroughBackupAndRestore() throws {
        let f = try BackupFixture()
        let composed = f.home.documents + "/\u{E9}.txt", decomposed = f.home.documents + "/e\u{301}.txt"
        try AppHomeSystem.FileSystem.writeAtomically(Array("composed".utf8), to: composed)
        try AppHomeSystem.FileSystem.writeAtomically(Array("decompos".utf8), to: decomposed)
        #expect(try AppHomeSystem.FileSystem.directoryEntries(f.home.documents).filter { $0.hasSuffix(".txt") && $0.utf8.count < 8 }.count == 2)
        let first = try f.manager.backup(f.bundle.identifier)
        let second = try f.manager.backup(f.bundle.identifier)
        for backup in [first, second] {
            let report = try f.manager.restore(from: backup.manifestPath)
            let docs = report.home.documents
            #expect(try AppHomeSystem.FileSystem.readFileIfPresent(docs + "/\u{E9}.txt") == Array("composed".utf8))
            #expect(try AppHomeSystem.FileSystem.readFileIfPresent(docs + "/e\u{301}.txt") == Array("decompos".utf8))
        }
    }

    /// A backup taken before spares were left out may hold one: a restore
    /// does not write it back (an earlier state of the domain, with values
    /// the app had removed).
    @Test func aSpareInAnOlderBackupIsNotRestored() throws {
        let f = try BackupFixture()
        try f.s.write("removed-password", to: f.home.path + "/Library/Preferences/spare-to-be")
        let backup = try f.manager.backup(f.bundle.identifier)
        let spare = "Library/Preferences/.com.example.Sample.plist.spare"
        try Self.forge(backup.manifestPath) { body in
            var items = body["Entries"]!.arrayValue!.map { item -> PlistValue in
                var entry = item.dictionaryValue!
                if entry["Path"] == .string("Library/Preferences/spare-to-be") { entry["Path"] = .string(spare) }
                return .dictionary(entry)
            }
            items.sort { a, b in
                guard case .string(let x)? = a.dictionaryValue?["Path"], case .string(let y)? = b.dictionaryValue?["Path"] else { return false }
                return x.utf8.lexicographicallyPrecedes(y.utf8)
            }
            body["Entries"] = .array(items)
        }
        #expect(try f.manager.verifyBackup(at: backup.manifestPath).entries.contains { $0.path == spare })
        let report = try f.manager.restore(from: backup.manifestPath)
        #expect(!FileSystem_exists(report.home.path + "/" + spare))
        #expect(f.s.read(report.home.path + "/Library/Preferences/com.example.Sample.plist") == "prefs")
        #expect(report.filesRestored == 5)
    }

    @Test func verifyReadsEveryObjectOfAGoodBackup() throws {
        let f = try BackupFixture()
        let backup = try f.manager.backup(f.bundle.identifier)
        #expect(try f.manager.verifyBackup(at: backup.manifestPath) == backup.manifest)
    }

    @Test func restoredFilesKeepTheirModeAndModificationTime() throws {
        let f = try BackupFixture()
        let file = f.home.documents + "/bug1.txt"
        chmod(file, 0o640)
        var times = [timespec(tv_sec: 1_600_000_000, tv_nsec: 123_456_789), timespec(tv_sec: 1_600_000_000, tv_nsec: 123_456_789)]
        utimensat(AT_FDCWD, file, &times, 0)
        let backup = try f.manager.backup(f.bundle.identifier)
        let home = try f.manager.restore(from: backup.manifestPath).home
        var st = stat()
        lstat(home.documents + "/bug1.txt", &st)
        #expect(st.st_mode & 0o777 == 0o640)
        #expect(st.st_mtim.tv_sec == 1_600_000_000 && st.st_mtim.tv_nsec == 123_456_789)
        #expect(mode(home.documents + "/Inbox") & 0o777 == 0o700)
    }

    @Test func restoreOfAnUninstalledAppNeedsItsBundle() throws {
        let f = try BackupFixture()
        let backup = try f.manager.backup(f.bundle.identifier)
        _ = try f.manager.uninstall(f.bundle.identifier)
        #expect(throws: ContainersError.restoreNeedsBundle("com.example.Sample")) { try f.manager.restore(from: backup.manifestPath) }
        #expect(f.s.homes.isEmpty)
        #expect(ContainersError.restoreNeedsBundle("a.b").description
                == "a.b is not installed: install it with 'apphome install <Name.app>' first, or pass --app <Name.app> to restore")
        let report = try f.manager.restore(from: backup.manifestPath, bundle: f.bundle)
        #expect(report.previous == nil)
        #expect(report.entry.installTime == fixedClock())
        for (file, text) in BackupFixture.userData { #expect(f.s.read(report.home.path + "/" + file) == text) }
    }

    @Test func restoreWithANewerBundleInstallsItAndKeepsTheBackupsData() throws {
        let f = try BackupFixture()
        let backup = try f.manager.backup(f.bundle.identifier)
        let v2 = try AppBundle(path: f.s.makeBundle("v2", info: Scratch.info(version: "2", short: "2.0"), resource: "two"))
        let report = try f.manager.restore(from: backup.manifestPath, bundle: v2)
        #expect(report.entry.version == "2" && report.manifest.version == "1")
        #expect(f.s.read(report.home.app + "/Resources/data.txt") == "two")
        #expect(f.s.read(report.home.documents + "/bug1.txt") == "a scary bug")
        #expect(f.s.homes == [report.entry.homeUUID])
    }

    // MARK: Damaged and tampered backups

    enum Tamper: String, CaseIterable, Sendable {
        case flippedByteInObject, truncatedObject, missingObject, editedManifest, unknownManifestVersion,
             manifestOfAnotherApp, bundleOfAnotherApp, notAManifest, missingManifest, pathOutsideTheHome,
             fileThroughASymlink, entryInCaches
    }

    /// Re-encodes a manifest with a valid checksum around `body`, as an
    /// attacker who knows the format would, to reach the structural checks.
    static func forge(_ path: String, _ edit: (inout [PlistKey: PlistValue]) -> Void) throws {
        let envelope = try PlistCodec.decode(Array(try Data(contentsOf: URL(fileURLWithPath: path)))).dictionaryValue!
        guard case .data(let inner)? = envelope["Manifest"] else { throw CocoaError(.fileReadCorruptFile) }
        var body = try PlistCodec.decode(inner).dictionaryValue!
        edit(&body)
        let bytes = try PlistCodec.encode(.dictionary(body), format: .binary)
        let out: PlistValue = .dictionary(["FormatVersion": .integer(1), "Manifest": .data(bytes), "Checksum": .data(ContentHash(of: bytes).bytes)])
        try Data(try PlistCodec.encode(out, format: .binary)).write(to: URL(fileURLWithPath: path))
    }

    static func appendEntries(_ extra: [[PlistKey: PlistValue]]) -> @Sendable (inout [PlistKey: PlistValue]) -> Void {
        { body in
            var items = body["Entries"]!.arrayValue!
            items += extra.map { PlistValue.dictionary($0) }
            body["Entries"] = .array(items)
        }
    }

    @Test(arguments: Tamper.allCases)
    func aDamagedBackupIsRefusedAndNothingChanges(_ tamper: Tamper) throws {
        let f = try BackupFixture()
        let backup = try f.manager.backup(f.bundle.identifier)
        var manifestPath = backup.manifestPath
        let bug = backup.manifest.entries.first { $0.path == "Documents/bug1.txt" }!
        guard case .file(let hash, _) = bug.kind else { Issue.record("not a file"); return }
        let object = f.store.objectPath(hash)
        var bundle: AppBundle?
        let expected: ContainersError
        func damaged(_ reason: String) -> ContainersError { .backupDamaged(path: manifestPath, reason: reason) }
        switch tamper {
        case .flippedByteInObject:
            var bytes = Array(try Data(contentsOf: URL(fileURLWithPath: object)))
            bytes[3] ^= 0x01
            try Data(bytes).write(to: URL(fileURLWithPath: object))
            expected = damaged("Documents/bug1.txt does not match its checksum")
        case .truncatedObject:
            truncate(object, 4)
            expected = damaged("Documents/bug1.txt does not match its checksum")
        case .missingObject:
            unlink(object)
            expected = damaged("the stored copy of Documents/bug1.txt is missing")
        case .editedManifest:
            var bytes = Array(try Data(contentsOf: URL(fileURLWithPath: manifestPath)))
            let at = bytes.count / 2
            bytes[at] ^= 0x20
            try Data(bytes).write(to: URL(fileURLWithPath: manifestPath))
            expected = damaged("the manifest does not match its checksum")
        case .unknownManifestVersion:
            let out: PlistValue = .dictionary(["FormatVersion": .integer(5), "Manifest": .data([]), "Checksum": .data([])])
            try Data(try PlistCodec.encode(out, format: .binary)).write(to: URL(fileURLWithPath: manifestPath))
            expected = .backupVersionTooNew(path: manifestPath, found: 5, supported: 4)
        case .manifestOfAnotherApp:
            let dir = f.s.root + "/Backups/com.example.Other"
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            manifestPath = dir + "/20270115T080000Z.plist"
            try FileManager.default.copyItem(atPath: backup.manifestPath, toPath: manifestPath)
            expected = .backupOfAnotherApp(path: manifestPath, found: "com.example.Sample", expected: "com.example.Other")
        case .bundleOfAnotherApp:
            bundle = try AppBundle(path: f.s.makeBundle("o", name: "Other.app", info: Scratch.info(id: "com.example.Other")))
            expected = .backupOfAnotherApp(path: manifestPath, found: "com.example.Sample", expected: "com.example.Other")
        case .notAManifest:
            try Data("just text".utf8).write(to: URL(fileURLWithPath: manifestPath))
            expected = damaged("the manifest is not a property list dictionary")
        case .missingManifest:
            manifestPath = f.s.root + "/Backups/com.example.Sample/nothing.plist"
            expected = .backupMissing(path: manifestPath)
        case .pathOutsideTheHome:
            try Self.forge(manifestPath, Self.appendEntries([["Path": .string("Documents/../../escape"), "Type": .string("directory"), "Mode": .integer(0o700)]]))
            expected = damaged("entry 'Documents/../../escape' is not a relative path inside the home")
        case .fileThroughASymlink:
            try Self.forge(manifestPath, Self.appendEntries([["Path": .string("Documents/latest/x"), "Type": .string("symlink"),
                                                              "Target": .string("/etc/passwd"), "Mode": .integer(0o777)]]))
            expected = damaged("entry 'Documents/latest/x' is not inside a directory listed before it")
        case .entryInCaches:
            try Self.forge(manifestPath, Self.appendEntries([["Path": .string("Library/Caches"), "Type": .string("directory"), "Mode": .integer(0o700)]]))
            expected = damaged("entry 'Library/Caches' is in a directory that is never backed up")
        }
        let before = f.snapshot()
        if bundle == nil {
            #expect(throws: expected) { try f.manager.verifyBackup(at: manifestPath) }
        }
        #expect(throws: expected) { try f.manager.restore(from: manifestPath, bundle: bundle) }
        #expect(f.snapshot() == before, "nothing under the root changed")
        // Not installed, with the bundle: still refused, still nothing installed.
        if tamper != .bundleOfAnotherApp && tamper != .manifestOfAnotherApp {
            _ = try f.manager.uninstall(f.bundle.identifier)
            let empty = f.snapshot()
            #expect(throws: expected) { try f.manager.restore(from: manifestPath, bundle: f.bundle) }
            #expect(f.snapshot() == empty)
            #expect(try f.manager.registry.read().entries.isEmpty)
        }
    }

    @Test func errorMessagesAreFixed() {
        #expect(ContainersError.backupDamaged(path: "/b/m.plist", reason: "x does not match its checksum").description
                == "backup /b/m.plist is damaged: x does not match its checksum")
        #expect(ContainersError.backupVersionTooNew(path: "/b/m.plist", found: 2, supported: 1).description
                == "backup /b/m.plist has format version 2, but this AppHome reads only up to version 1; use a newer apphome")
        #expect(ContainersError.backupOfAnotherApp(path: "/b/m.plist", found: "a.b", expected: "c.d").description
                == "backup /b/m.plist is of a.b, not c.d")
        #expect(ContainersError.noBackup(identifier: "a.b", directory: "/r/Backups").description == "no backup of a.b in /r/Backups")
        #expect(ContainersError.backupMissing(path: "/x").description == "no backup at /x")
    }

    /// Named mutations of one good manifest body, each with its message.
    static let manifestMutations: [(String, @Sendable (inout [PlistKey: PlistValue]) -> Void, String)] = [
        ("no entries", { $0["Entries"] = nil }, "Entries is missing"),
        ("no device", { $0["DeviceIdentifier"] = nil }, "DeviceIdentifier is missing"),
        ("other hash", { $0["HashAlgorithm"] = .string("MD5") }, "HashAlgorithm is not BLAKE2b-256"),
        ("bad id", { $0["BundleIdentifier"] = .string("../x") }, "'../x' is not a valid bundle identifier"),
        ("bad bundle name", { $0["BundleName"] = .string("../x.app") }, "BundleName '../x.app' is not valid"),
        ("payload not data", { $0["Participants"] = .dictionary(["keychain": .string("x")]) }, "the payload of keychain is not data"),
        ("absolute path", appendEntries([["Path": .string("/etc"), "Type": .string("directory"), "Mode": .integer(0o700)]]),
         "entry '/etc' is not a relative path inside the home"),
        ("tmp", appendEntries([["Path": .string("tmp"), "Type": .string("directory"), "Mode": .integer(0o700)]]),
         "entry 'tmp' is in a directory that is never backed up"),
        ("bundle", appendEntries([["Path": .string("Sample.app"), "Type": .string("directory"), "Mode": .integer(0o700)]]),
         "entry 'Sample.app' is in a directory that is never backed up"),
        ("twice", appendEntries([["Path": .string("Documents"), "Type": .string("directory"), "Mode": .integer(0o700)]]),
         "entry 'Documents' appears twice"),
        ("bad type", appendEntries([["Path": .string("Documents/p"), "Type": .string("fifo"), "Mode": .integer(0o600)]]),
         "Documents/p: Type is not directory, file or symlink"),
        ("short hash", appendEntries([["Path": .string("Documents/h"), "Type": .string("file"), "Mode": .integer(0o600),
                                       "Hash": .data([1, 2]), "Size": .integer(1)]]), "Documents/h: Hash is missing"),
        ("negative size", appendEntries([["Path": .string("Documents/h"), "Type": .string("file"), "Mode": .integer(0o600),
                                          "Hash": .data([UInt8](repeating: 0, count: 32)), "Size": .integer(-1)]]),
         "Documents/h: Size is missing or out of range"),
    ]

    @Test(arguments: 0..<manifestMutations.count)
    func aManifestBreakingARuleIsDamaged(_ index: Int) throws {
        let (_, edit, reason) = Self.manifestMutations[index]
        let f = try BackupFixture()
        let path = try f.manager.backup(f.bundle.identifier).manifestPath
        try Self.forge(path, edit)
        #expect(throws: ContainersError.backupDamaged(path: path, reason: reason)) { try f.store.readManifest(path) }
    }
}
