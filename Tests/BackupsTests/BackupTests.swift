import AppHomeSystem
import Foundation
import Testing
@testable import Containers
@testable import Backups
import ContainersTestSupport
import PropertyList
import Preferences

/// A participant that hands out a fixed payload and records restores.
final class RecordingParticipant: AppDataParticipant, @unchecked Sendable {
    let name: String
    private let lock = NSLock()
    private var _restored: [([UInt8], String)] = []
    private var _documentsAtRestore: [[String]] = []
    /// The root, to look at the app's restored Documents when its payload comes.
    var root: String?
    let payload: [UInt8]?
    let failBackup: Bool
    let failRestore: Bool

    init(name: String = "keychain", payload: [UInt8]? = Array("secret items".utf8), failBackup: Bool = false, failRestore: Bool = false) {
        self.name = name
        self.payload = payload
        self.failBackup = failBackup
        self.failRestore = failRestore
    }

    struct Failure: Error, CustomStringConvertible { var description: String { "vault locked" } }

    var restored: [([UInt8], String)] { lock.withLock { _restored } }
    /// What the app's Documents held when each payload was restored.
    var documentsAtRestore: [[String]] { lock.withLock { _documentsAtRestore } }

    func appUninstalled(_ entry: RegistryEntry, remaining: [RegistryEntry]) throws {}

    func backupPayload(for entry: RegistryEntry, secrets: BackupSecrets) throws -> [UInt8]? {
        if failBackup { throw Failure() }
        return payload
    }

    func restore(_ payload: [UInt8], for entry: RegistryEntry, secrets: BackupSecrets) throws -> [String] {
        if failRestore { throw Failure() }
        let documents = root.map { ContainerLayout(root: $0).home(uuid: entry.homeUUID, bundleName: entry.bundleName).documents }
        let seen = documents.flatMap { try? FileManager.default.contentsOfDirectory(atPath: $0).sorted() } ?? []
        lock.withLock { _restored.append((payload, entry.bundleIdentifier.rawValue)); _documentsAtRestore.append(seen) }
        return ["1 item skipped: it belongs to another device"]
    }
}

/// An installed Sample app with user data in every backed-up directory.
struct BackupFixture {
    let s = Scratch()
    let manager: ContainerManager
    let bundle: AppBundle
    var home: ApplicationHome { try! manager.home(for: bundle.identifier) }
    var store: BackupStore { BackupStore(directory: manager.defaultBackupDirectory) }

    static let userData = ["Documents/bug1.txt": "a scary bug", "Documents/Inbox/mail.txt": "attachment",
                           "Library/Preferences/com.example.Sample.plist": "prefs",
                           "Library/Application Support/db.sqlite": "database", "Library/Custom/state.bin": "state"]

    init(participants: [any AppDataParticipant] = [], clock: @escaping @Sendable () -> PlistDate = fixedClock) throws {
        manager = ContainerManager(root: s.root, now: clock, participants: participants)
        bundle = try AppBundle(path: s.makeBundle("v1", info: Scratch.info(), resource: "one"))
        let home = try manager.install(bundle).home
        for (file, text) in Self.userData { try s.write(text, to: home.path + "/" + file) }
        try s.write("cache", to: home.caches + "/thumb")
        try s.write("scratch", to: home.tmp + "/t")
        try FileManager.default.createSymbolicLink(atPath: home.documents + "/latest", withDestinationPath: "bug1.txt")
    }

    /// Every path under the root except the backup store, with contents
    /// (files), link targets or `<dir>`: what "nothing changed" compares.
    func snapshot() -> [String: String] {
        var result: [String: String] = [:]
        let root = s.root
        for sub in (try? FileManager.default.subpathsOfDirectory(atPath: root)) ?? [] where !sub.hasPrefix("Backups") {
            let path = root + "/" + sub
            if let target = try? FileManager.default.destinationOfSymbolicLink(atPath: path) {
                result[sub] = "-> " + target
            } else if FileSystem_isDirectory(path) {
                result[sub] = "<dir>"
            } else {
                result[sub] = s.read(path) ?? "<unreadable>"
            }
        }
        return result
    }
}

@Suite struct BackupTests {
    @Test func contentHashIsBlake2b256() {
        #expect(ContentHash(of: []).hex == "0e5751c026e543b2e8ab2eb06099daa1d1e5df47778f7787faab45cdf12fe3a8")
        #expect(ContentHash(of: Array("abc".utf8)).hex == "bddd813c634239723171ef3fee98579b94964e3bb1cb3e427262c8c068d52319")
        let hasher = ContentHasher()
        hasher.update(Array("a".utf8))
        hasher.update(Array("bc".utf8))
        #expect(hasher.finish() == ContentHash(of: Array("abc".utf8)))
        #expect(ContentHash(bytes: [1, 2, 3]) == nil)
    }

    @Test func manifestNamesSortByTimeThenSequence() {
        #expect(BackupStore.stamp(fixedClock()) == "20270115T080000Z")
        #expect(BackupStore.stamp(PlistDate(secondsSince1970: 0.999)) == "19700101T000000Z")
        let names = ["20270115T080000Z-10.plist", "20270115T080001Z.plist", "20270115T080000Z-2.plist", "20270115T080000Z.plist"]
        #expect(names.sorted { BackupStore.nameOrder($0) < BackupStore.nameOrder($1) }
                == ["20270115T080000Z.plist", "20270115T080000Z-2.plist", "20270115T080000Z-10.plist", "20270115T080001Z.plist"])
    }

    @Test func backupRecordsTheHomeMinusBundleCachesAndTmp() throws {
        let f = try BackupFixture()
        let report = try f.manager.backup(f.bundle.identifier)
        let paths = report.manifest.entries.map(\.path)
        #expect(paths == ["Documents", "Documents/Inbox", "Documents/Inbox/mail.txt", "Documents/bug1.txt", "Documents/latest",
                          "Library", "Library/Application Support", "Library/Application Support/db.sqlite",
                          "Library/Custom", "Library/Custom/state.bin", "Library/Preferences",
                          "Library/Preferences/com.example.Sample.plist"])
        #expect(report.manifest.entries.first { $0.path == "Documents/latest" }?.kind == .symlink(target: "bug1.txt"))
        #expect(report.manifest.fileCount == 5)
        #expect(report.filesRead == 5)
        #expect(report.bytesStored == report.manifest.totalBytes)
        #expect(report.objectsStored == 5)
        #expect(report.manifestPath == f.s.root + "/Backups/com.example.Sample/20270115T080000Z.plist")
        #expect(report.manifest.version == "1" && report.manifest.shortVersion == "1.0")
        #expect(report.manifest.bundleName == "Sample.app")
        #expect(report.manifest.creationTime == fixedClock())
        #expect(report.manifest.deviceIdentifier == (try HostIdentifier_load(f.s.root)))
        // Objects are named by their hash and hold the file's bytes.
        let bug = report.manifest.entries.first { $0.path == "Documents/bug1.txt" }!
        guard case .file(let hash, let size) = bug.kind else { Issue.record("not a file"); return }
        #expect(hash == ContentHash(of: Array("a scary bug".utf8)) && size == 11)
        #expect(f.s.read(f.store.objectPath(hash)) == "a scary bug")
        #expect(mode(f.store.objectPath(hash)) & 0o777 == 0o600)
        // The manifest reads back equal.
        #expect(try f.store.readManifest(report.manifestPath) == report.manifest)
    }

    @Test func aSecondBackupOfAnUnchangedAppReadsAndStoresNothing() throws {
        let f = try BackupFixture()
        let first = try f.manager.backup(f.bundle.identifier)
        let second = try f.manager.backup(f.bundle.identifier)
        #expect(second.filesRead == 0 && second.bytesStored == 0 && second.objectsStored == 0)
        #expect(second.manifest.entries == first.manifest.entries)
        #expect(second.manifestPath.hasSuffix("/20270115T080000Z-2.plist"))
        #expect(try f.store.manifests(of: f.bundle.identifier).map { FileSystem_lastComponent($0) }
                == ["20270115T080000Z.plist", "20270115T080000Z-2.plist"])
    }

    @Test func changedAndRetouchedFilesAreReadAgainAndOnlyNewContentsStored() throws {
        let f = try BackupFixture()
        _ = try f.manager.backup(f.bundle.identifier)
        let bug = f.home.documents + "/bug1.txt"
        // Same size, modification time put back: the change time still differs.
        var st = stat()
        lstat(bug, &st)
        try f.s.write("a scary BUG", to: bug)
        var times = [st.st_atim, st.st_mtim]
        utimensat(AT_FDCWD, bug, &times, 0)
        // A new file whose contents the store already has.
        try f.s.write("database", to: f.home.documents + "/copy.sqlite")
        let report = try f.manager.backup(f.bundle.identifier)
        #expect(report.filesRead == 2)
        #expect(report.bytesStored == 11)
        #expect(report.objectsStored == 1)
        #expect(report.bytesRead == 11 + 8)
    }

    @Test func anUpdateMovesFilesWithoutMakingTheNextBackupReadThem() throws {
        let f = try BackupFixture()
        _ = try f.manager.backup(f.bundle.identifier)
        let v2 = try AppBundle(path: f.s.makeBundle("v2", info: Scratch.info(version: "2", short: "2.0"), resource: "two"))
        _ = try f.manager.update(v2)
        let report = try f.manager.backup(f.bundle.identifier)
        #expect(report.filesRead == 0 && report.bytesStored == 0)
        #expect(report.manifest.version == "2")
    }

    @Test func filesModifiedAfterThePreviousBackupStartedAreNotTrusted() throws {
        // A clock in the past: every file looks modified after the backup began.
        let f = try BackupFixture(clock: { PlistDate(secondsSince1970: 1_000) })
        _ = try f.manager.backup(f.bundle.identifier)
        let report = try f.manager.backup(f.bundle.identifier)
        #expect(report.filesRead == 5)
        #expect(report.bytesStored == 0, "read again, but the store already has every object")
    }

    @Test func aLargeFileIsHashedThenCopiedInChunks() throws {
        let f = try BackupFixture()
        var big = [UInt8](repeating: 0, count: BackupStore.inMemoryLimit + 12_345)
        for i in stride(from: 0, to: big.count, by: 4096) { big[i] = UInt8(truncatingIfNeeded: i / 4096) }
        try Data(big).write(to: URL(fileURLWithPath: f.home.documents + "/big.bin"))
        let report = try f.manager.backup(f.bundle.identifier)
        let entry = report.manifest.entries.first { $0.path == "Documents/big.bin" }!
        #expect(entry.kind == .file(hash: ContentHash(of: big), size: big.count))
        guard case .file(let hash, _) = entry.kind else { return }
        #expect(FileManager.default.contents(atPath: f.store.objectPath(hash)) == Data(big))
        #expect(f.s.entries(f.store.incomingDirectory).isEmpty)
    }

    @Test func aCrashMidBackupLeavesEarlierBackupsValidAndIsCleanedUpNextTime() throws {
        let f = try BackupFixture()
        let first = try f.manager.backup(f.bundle.identifier)
        // What a backup killed before its manifest leaves: a half-written
        // temp file and a complete object no manifest names.
        try f.s.write("half", to: f.store.incomingDirectory + "/0123456789abcdef01234567")
        try f.s.write("orphan", to: f.store.objectPath(ContentHash(of: Array("orphan".utf8))))
        #expect(try f.store.readManifest(first.manifestPath) == first.manifest)
        let restored = try f.manager.restore(from: first.manifestPath)
        #expect(f.s.read(restored.home.documents + "/bug1.txt") == "a scary bug")
        _ = try f.manager.backup(f.bundle.identifier)
        #expect(f.s.entries(f.store.incomingDirectory).isEmpty)
    }

    @Test func aBackupFailingPartWayWritesNoManifestAndLeavesEarlierBackupsValid() throws {
        let f = try BackupFixture()
        let first = try f.manager.backup(f.bundle.identifier)
        // A new file whose object directory cannot be created: the backup
        // fails after storing other objects, before its manifest.
        try f.s.write("new bug", to: f.home.documents + "/bug2.txt")
        let blocked = FileSystem_parent(f.store.objectPath(ContentHash(of: Array("new bug".utf8))))
        try? FileManager.default.removeItem(atPath: blocked)
        try f.s.write("not a directory", to: blocked)
        #expect(throws: ContainersError.system(SystemError_("mkdir", path: blocked, errno: EEXIST))) {
            try f.manager.backup(f.bundle.identifier)
        }
        #expect(try f.store.manifests(of: f.bundle.identifier) == [first.manifestPath])
        #expect(f.s.entries(f.store.incomingDirectory).isEmpty)
        #expect(try f.store.readManifest(first.manifestPath) == first.manifest)
        unlink(blocked)
        let second = try f.manager.backup(f.bundle.identifier)
        #expect(second.filesRead == 1 && second.bytesStored == 7)
        #expect(f.s.entries(f.store.incomingDirectory).isEmpty)
        let restored = try f.manager.restore(from: first.manifestPath)
        #expect(!FileSystem_exists(restored.home.documents + "/bug2.txt"))
        #expect(f.s.read(restored.home.documents + "/bug1.txt") == "a scary bug")
    }

    @Test func aBackupFromAnotherDeviceRestoresAndSaysSo() throws {
        let f = try BackupFixture()
        let backup = try f.manager.backup(f.bundle.identifier)
        try f.s.write("00000000-0000-4000-8000-000000000000\n", to: f.s.root + "/Library/Preferences/ByHost/.HostIdentifier")
        let report = try f.manager.restore(from: backup.manifestPath)
        #expect(report.fromAnotherDevice)
        #expect(f.s.read(report.home.documents + "/bug1.txt") == "a scary bug")
    }

    @Test func aDamagedPreviousManifestOnlyCostsRereading() throws {
        let f = try BackupFixture()
        let first = try f.manager.backup(f.bundle.identifier)
        try Data("garbage".utf8).write(to: URL(fileURLWithPath: first.manifestPath))
        let second = try f.manager.backup(f.bundle.identifier)
        #expect(second.filesRead == 5 && second.bytesStored == 0)
    }

    @Test func backupAllTakesOneBackupPerAppIntoTheGivenDirectory() throws {
        let f = try BackupFixture()
        let other = try AppBundle(path: f.s.makeBundle("o", name: "Other.app", info: Scratch.info(id: "com.example.Other")))
        _ = try f.manager.install(other)
        let reports = try f.manager.backupAll(to: f.s.path + "/external/")
        #expect(reports.map(\.manifest.bundleIdentifier.rawValue) == ["com.example.Other", "com.example.Sample"])
        #expect(reports.allSatisfy { $0.manifestPath.hasPrefix(f.s.path + "/external/com.example.") })
        #expect(mode(f.s.path + "/external") & 0o777 == 0o700)
        #expect(try f.manager.latestBackup(of: other.identifier, in: f.s.path + "/external") == reports[0].manifestPath)
        #expect(throws: ContainersError.noBackup(identifier: "com.example.Other", directory: f.s.root + "/Backups")) {
            try f.manager.latestBackup(of: other.identifier)
        }
    }

    @Test func itemsMarkedExcludedFromBackupAreLeftOut() throws {
        let f = try BackupFixture()
        let downloads = f.home.applicationSupport + "/downloads"
        try f.s.write("re-downloadable", to: downloads + "/big.bin")
        try ContainerManager.setExcludedFromBackup(downloads, true)
        try ContainerManager.setExcludedFromBackup(f.home.documents + "/bug1.txt", true)
        try ContainerManager.setExcludedFromBackup(f.home.documents + "/Inbox", true)
        try ContainerManager.setExcludedFromBackup(f.home.documents + "/Inbox", false)
        let report = try f.manager.backup(f.bundle.identifier)
        #expect(report.excluded == ["Documents/bug1.txt", "Library/Application Support/downloads"])
        #expect(!report.manifest.entries.contains { $0.path.contains("downloads") || $0.path == "Documents/bug1.txt" })
        #expect(report.manifest.fileCount == 4)
    }

    /// prefsd's spares beside a domain file (`.<domain>.plist.spare`,
    /// `….spare.prev`) hold an earlier state of the domain, values the app
    /// removed included: never backed up. Names that only look alike are
    /// the app's files and are.
    @Test func prefsdsSparesAreLeftOutAndLookAlikesAreKept() throws {
        let f = try BackupFixture()
        let preferences = f.home.path + "/Library/Preferences"
        try f.s.write("removed-password", to: preferences + "/.com.example.Sample.plist.spare")
        try f.s.write("removed-password", to: preferences + "/.com.example.Sample.plist.spare.prev")
        let kept = ["Documents/.notes.plist.spare", "Library/Preferences/.plist.spare", "Library/Preferences/Sub/.a.plist.spare",
                    "Library/Preferences/.com.example.Sample.plist.spare.old", "Library/Preferences/com.example.Sample.plist.spare"]
        for path in kept { try f.s.write("mine", to: f.home.path + "/" + path) }
        let report = try f.manager.backup(f.bundle.identifier)
        let paths = report.manifest.entries.map(\.path)
        #expect(!paths.contains { $0.hasSuffix(".com.example.Sample.plist.spare") || $0.hasSuffix(".com.example.Sample.plist.spare.prev") }, "\(paths)")
        for path in kept { #expect(paths.contains(path), "\(path)") }
        #expect(report.manifest.fileCount == 5 + kept.count)
        #expect(report.skipped.isEmpty && report.excluded.isEmpty)
        // The same in an app group's container (its suites' domains).
        #expect(BackupManifest.isExcludedFromGroup("Library/Preferences/.group.com.example.plist.spare"))
        #expect(!BackupManifest.isExcludedFromGroup("Library/Preferences/group.com.example.plist"))
    }

    @Test func fifosAndNamesThatAreNotUTF8AreReportedNotBackedUp() throws {
        let f = try BackupFixture()
        mkfifo(f.home.documents + "/pipe", 0o600)
        let bad: [CChar] = Array((f.home.documents + "/bad-").utf8CString.dropLast()) + [CChar(bitPattern: 0xFF), 0]
        let fd = open(bad, O_WRONLY | O_CREAT, 0o600)
        try #require(fd >= 0)
        close(fd)
        let report = try f.manager.backup(f.bundle.identifier)
        // The name's bytes, escaped: never repaired into U+FFFD (another name).
        #expect(report.skipped == ["Documents/bad-\\xFF", "Documents/pipe"])
        #expect(report.manifest.fileCount == 5)
    }

    @Test func backupOfAnAppThatIsNotInstalledFails() throws {
        let f = try BackupFixture()
        #expect(throws: ContainersError.notInstalled("com.example.None")) { try f.manager.backup(try BundleIdentifier("com.example.None")) }
    }

    // MARK: Participants

    @Test func participantsPayloadsAreBackedUpAndRestoredAfterTheFiles() throws {
        let keychain = RecordingParticipant()
        let f = try BackupFixture(participants: [keychain])
        keychain.root = f.s.root
        let backup = try f.manager.backup(f.bundle.identifier)
        #expect(backup.manifest.participants == ["keychain": Array("secret items".utf8)])
        _ = try f.manager.uninstall(f.bundle.identifier)
        let report = try f.manager.restore(from: backup.manifestPath, bundle: f.bundle)
        #expect(keychain.restored.map(\.0) == [Array("secret items".utf8)])
        #expect(keychain.restored.map(\.1) == ["com.example.Sample"])
        // The payload comes once the files are in the (registered) new home.
        #expect(keychain.documentsAtRestore == [["Inbox", "bug1.txt", "latest"]])
        #expect(report.notes == ["1 item skipped: it belongs to another device"])
        #expect(report.participantFailures.isEmpty)
        #expect(!report.fromAnotherDevice)
    }

    @Test func aParticipantThatCannotBackUpFailsTheBackupAndWritesNoManifest() throws {
        let f = try BackupFixture(participants: [RecordingParticipant(failBackup: true)])
        #expect(throws: ContainersError.participantFailed(name: "keychain", identifier: "com.example.Sample", reason: "vault locked")) {
            try f.manager.backup(f.bundle.identifier)
        }
        #expect(try f.store.manifests(of: f.bundle.identifier).isEmpty)
        #expect(ContainersError.participantFailed(name: "keychain", identifier: "a.b", reason: "x").description
                == "keychain could not back up a.b: x")
    }

    @Test func payloadsThatCannotBeRestoredAreReportedAfterTheFilesAreRestored() throws {
        let f = try BackupFixture(participants: [RecordingParticipant()])
        let backup = try f.manager.backup(f.bundle.identifier)
        let failing = ContainerManager(root: f.s.root, participants: [RecordingParticipant(failRestore: true)])
        let report = try failing.restore(from: backup.manifestPath)
        #expect(report.participantFailures == ["keychain restore for com.example.Sample failed: vault locked"])
        #expect(f.s.read(report.home.documents + "/bug1.txt") == "a scary bug")
        let without = ContainerManager(root: f.s.root)
        #expect(try without.restore(from: backup.manifestPath).participantFailures
                == ["the backup holds keychain data, but no keychain is available here; it was not restored"])
    }
}

func FileSystem_parent(_ path: String) -> String { (path as NSString).deletingLastPathComponent }

func SystemError_(_ operation: String, path: String, errno: Int32) -> AppHomeSystem.SystemError {
    AppHomeSystem.SystemError(operation, path: path, errno: errno)
}

func HostIdentifier_load(_ root: String) throws -> String {
    try String(contentsOfFile: root + "/Library/Preferences/ByHost/.HostIdentifier", encoding: .utf8)
        .trimmingCharacters(in: .whitespacesAndNewlines)
}
