import Testing
@testable import Keychain
import Containers
import Backups
import PropertyList

/// The backup password and iOS's restore matrix: ThisDeviceOnly items
/// restore on the same device only; migratable items restore on another
/// device only with the backup password; a wrong password refuses the
/// whole restore before anything changes.
@Suite struct BackupPasswordTests {
    static let app = "com.example.A"
    static let skipped = "keychain: 2 item(s) of access group com.example.A for com.example.A not restored: the backup was made on another device, and keychain items stay on the device that made them"
    static let restoredBoth = "keychain: restored 2 item(s) of access group com.example.A"
    static let refused = ContainersError.participantRefusedRestore(name: "keychain", identifier: app, reason: "the backup password is wrong")

    enum Device: String { case same, other }
    enum Given { case none, right, wrong }

    struct Row: CustomTestStringConvertible, Sendable {
        var device: Device
        var backupPassword: Bool
        var restorePassword: Given
        /// Accounts of the backed-up items present after the restore (besides "theirs"), or nil when refused.
        var restored: [String]?
        var notes: [String]
        var testDescription: String { "\(device.rawValue) device, backup \(backupPassword ? "with" : "without") password, restore with \(restorePassword)" }
    }

    static let rows: [Row] = [
        Row(device: .same, backupPassword: false, restorePassword: .none, restored: ["mig", "tdo"], notes: [restoredBoth]),
        Row(device: .same, backupPassword: false, restorePassword: .right, restored: ["mig", "tdo"],
            notes: ["keychain: the backup was made without a backup password; the password given was not needed", restoredBoth]),
        Row(device: .same, backupPassword: true, restorePassword: .none, restored: ["mig", "tdo"], notes: [restoredBoth]),
        Row(device: .same, backupPassword: true, restorePassword: .right, restored: ["mig", "tdo"], notes: [restoredBoth]),
        Row(device: .same, backupPassword: true, restorePassword: .wrong, restored: nil, notes: []),
        Row(device: .other, backupPassword: false, restorePassword: .none, restored: [], notes: [skipped]),
        Row(device: .other, backupPassword: false, restorePassword: .right, restored: [],
            notes: ["keychain: the backup was made without a backup password; the password given was not needed", skipped]),
        Row(device: .other, backupPassword: true, restorePassword: .none, restored: [],
            notes: [skipped + "; give the backup password to restore its migratable items"]),
        Row(device: .other, backupPassword: true, restorePassword: .right, restored: ["mig"],
            notes: ["keychain: restored 1 item(s) of access group com.example.A with the backup password; 1 ThisDeviceOnly item(s) not restored: they never leave the device that made them"]),
        Row(device: .other, backupPassword: true, restorePassword: .wrong, restored: nil, notes: []),
    ]

    struct Side {
        let scratch = KeychainScratch()
        let manager: ContainerManager
        let bundle: String
        var keychain: Keychain { scratch.keychain() }

        init() throws {
            let participant = KeychainParticipant(root: scratch.root, policy: .fileOnly, now: testClock, weakKDFForTesting: true)
            manager = ContainerManager(root: scratch.root, now: testClock, participants: [participant])
            bundle = try scratch.makeBundle("A", id: BackupPasswordTests.app)
            _ = try manager.install(AppBundle(path: bundle))
        }

        func context() throws -> KeychainContext {
            try KeychainContext(installed: try manager.entry(for: try BundleIdentifier(BackupPasswordTests.app)))
        }

        func secrets() throws -> [String: String] {
            let all = try keychain.copyMatching(query(limit: .all, attributes: true), context: try context())
            return Dictionary(uniqueKeysWithValues: all.map { ($0.attributes!.account, text($0.data)!) })
        }
    }

    @Test(arguments: rows) func restoreMatrix(_ row: Row) throws {
        let here = try Side()
        try here.keychain.add(generic("mig", "svc", accessibility: .whenUnlocked), data: secret("m1"), context: try here.context())
        try here.keychain.add(generic("tdo", "svc", accessibility: .whenUnlockedThisDeviceOnly), data: secret("t1"), context: try here.context())
        let id = try BundleIdentifier(Self.app)
        let backup = try here.manager.backup(id, secrets: row.backupPassword ? BackupSecrets(password: secret("correct horse")) : .none)

        let target = row.device == .same ? here : try Side()
        if row.device == .same {
            try target.keychain.delete(query(limit: .all), context: try target.context())
        }
        try target.keychain.add(generic("theirs", "svc"), data: secret("x"), context: try target.context())
        let homeBefore = try target.manager.entry(for: id).homeUUID
        let given: BackupSecrets = switch row.restorePassword {
        case .none: .none
        case .right: BackupSecrets(password: secret("correct horse"))
        case .wrong: BackupSecrets(password: secret("correct horsf"))
        }
        guard let restored = row.restored else {
            #expect(throws: Self.refused) { try target.manager.restore(from: backup.manifestPath, bundle: AppBundle(path: target.bundle), secrets: given) }
            #expect(try target.manager.entry(for: id).homeUUID == homeBefore)
            #expect(try target.secrets() == ["theirs": "x"])
            return
        }
        let report = try target.manager.restore(from: backup.manifestPath, bundle: AppBundle(path: target.bundle), secrets: given)
        #expect(report.participantFailures == [])
        #expect(report.notes == row.notes)
        var expected = ["theirs": "x"]
        for account in restored { expected[account] = account == "mig" ? "m1" : "t1" }
        #expect(try target.secrets() == expected)
        if row.device == .other && restored.contains("mig") {
            // Sealed again under this device's keys: readable after a reload, without the password.
            let attributes = try #require(try target.keychain.copyMatching(query(account: "mig", attributes: true), context: try target.context()).first?.attributes)
            #expect(attributes.accessibility == .whenUnlocked)
        }
    }

    @Test func theBackupHoldsNoSecretInClearAndStoresTheParametersAtOrAboveTheFloor() throws {
        let s = try Side()
        try s.keychain.add(generic("mig", "svc"), data: secret("secret-m1"), context: try s.context())
        let real = KeychainParticipant(root: s.scratch.root, policy: .fileOnly, now: testClock)
        let entry = try s.manager.entry(for: try BundleIdentifier(Self.app))
        let payload = try #require(try real.backupPayload(for: entry, secrets: BackupSecrets(password: secret("pw"))))
        #expect(!String(decoding: payload, as: UTF8.self).contains("secret-m1"))
        let top = try #require(try PlistCodec.decode(payload).dictionaryValue)
        #expect(top["FormatVersion"] == .integer(2))
        let stored = try #require(top["Password"]?.dictionaryValue?["Parameters"])
        let parameters = try PassphraseParameters(plist: stored)
        #expect(parameters.opsLimit >= PassphraseParameters.floorOpsLimit && parameters.memLimit >= PassphraseParameters.floorMemLimit)
        #expect(parameters.salt.count == 16)
        // A payload with costs below the floor is refused by a real participant.
        let weak = KeychainParticipant(root: s.scratch.root, policy: .fileOnly, now: testClock, weakKDFForTesting: true)
        let cheap = try #require(try weak.backupPayload(for: entry, secrets: BackupSecrets(password: secret("pw"))))
        #expect(throws: KeychainError.invalidParameter("the passphrase parameters (opslimit 1, memlimit 0 MiB) are below the floor (opslimit 3, memlimit 64 MiB)")) {
            try real.checkRestore(cheap, secrets: BackupSecrets(password: secret("pw")))
        }
    }

    @Test func aVersion1PayloadStillRestores() throws {
        let s = try Side()
        try s.keychain.add(generic("mig", "svc"), data: secret("m1"), context: try s.context())
        let participant = KeychainParticipant(root: s.scratch.root, policy: .fileOnly, now: testClock)
        let entry = try s.manager.entry(for: try BundleIdentifier(Self.app))
        let payload = try #require(try participant.backupPayload(for: entry, secrets: .none))
        var top = try #require(try PlistCodec.decode(payload).dictionaryValue)
        top["FormatVersion"] = .integer(1)
        let v1 = try PlistCodec.encode(.dictionary(top), format: .binary)
        try s.keychain.delete(query(limit: .all), context: try s.context())
        #expect(try participant.restore(v1, for: entry, secrets: .none) == ["keychain: restored 1 item(s) of access group com.example.A"])
        #expect(try s.secrets() == ["mig": "m1"])
    }
}
