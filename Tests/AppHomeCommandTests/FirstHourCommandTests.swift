import AppHomeCommand
import AppHomeSystem
import CommandSupport
import Containers
import Foundation
import Keychain
import PropertyList
import Testing

/// `apphome uninstall --dry-run`, sizes people type and read, and `keygen`
/// naming a missing directory.
@Suite struct FirstHourCommandTests {
    static let id = "com.example.ScaryBugs"

    /// Every file under `path` with its bytes, for "nothing changed".
    func snapshot(_ path: String) -> [String: Data] {
        var files: [String: Data] = [:]
        for sub in FileManager.default.subpaths(atPath: path) ?? [] {
            var directory: ObjCBool = false
            if FileManager.default.fileExists(atPath: path + "/" + sub, isDirectory: &directory), !directory.boolValue {
                files[sub] = FileManager.default.contents(atPath: path + "/" + sub) ?? Data()
            }
        }
        return files
    }

    @Test func uninstallDryRunListsWhatWouldGoAndChangesNothing() throws {
        let w = World()
        #expect(w.apphome("install", w.v1).status == 0)
        let home = String(w.apphome("container", Self.id, "data").out.dropLast())
        try Data(count: 3000).write(to: URL(fileURLWithPath: home + "/Documents/bugs.db"))
        // Two items in the app's keychain (a key file holds the device key here).
        let entry = try ContainerManager(root: w.root).entry(for: BundleIdentifier(Self.id))
        let keychain = Keychain(root: w.root, policy: DeviceKeyPolicy(configuration: Configuration(variable: { ["APPHOME_KEYCHAIN_KEY_STORE": "file"][$0] })),
                                now: { PlistDate(secondsSinceReferenceDate: 0) })
        for account in ["a", "b"] {
            var item = ItemAttributes(itemClass: .genericPassword)
            item.service = "api"
            item.account = account
            try keychain.add(item, data: SecureBytes(utf8: "pw"), context: try KeychainContext(installed: entry))
        }
        let before = snapshot(w.root)
        let r = w.apphome("uninstall", "--dry-run", Self.id)
        #expect(r.status == 0 && r.err.isEmpty, "\(r)")
        let lines = r.out.split(separator: "\n").map(String.init)
        #expect(lines.first == "would uninstall \(Self.id) 1.0 (1):", "\(r.out)")
        let homeLine = try #require(lines.first { $0.hasPrefix("  home \(home): ") }, "\(r.out)")
        let (files, bytes) = try AppHomeCommandMeasure.count(home)
        #expect(homeLine == "  home \(home): \(files) files, \(ByteCount.human(bytes))", "\(homeLine)")
        #expect(lines.contains("  keychain access group \(Self.id): 2 items (shredded)"), "\(r.out)")
        #expect(lines.last == "in total \(files) files (\(ByteCount.human(bytes))) and 2 keychain items; nothing changed (dry run)", "\(r.out)")
        #expect(snapshot(w.root) == before, "a dry run changes nothing")
        // The real uninstall then removes what the dry run listed.
        #expect(w.apphome("uninstall", Self.id).status == 0)
        #expect(!FileManager.default.fileExists(atPath: home))
        #expect(try keychain.storedGroups().isEmpty)
    }

    /// `--root` after the verb, as before it; after run's bundle id it is the program's.
    @Test func theRootMayFollowTheVerb() {
        let w = World()
        #expect(w.apphome("install", w.v1).status == 0)
        for args in [["list", "--root", w.root], ["list", "--root=" + w.root], ["info", "--root", w.root, Self.id]] {
            let console = CapturingConsole()
            let status = AppHomeCommand.run(args, environment: AppHomeEnvironment(configuration: Configuration(variable: { _ in nil })), console: console)
            #expect(status == 0 && console.standardOutput.contains(Self.id), "\(args): \(console.standardError)")
        }
        let passed = w.apphome("run", Self.id, "--", "/bin/sh", "-c", "test \"$1 $2\" = \"--root x\"", "sh", "--root", "x")
        #expect(passed.status == 0, "run's program gets its --root: \(passed)")
        let missing = w.apphome("list", "--root")
        #expect(missing.status == 255 && missing.err == "apphome: option --root needs a directory\nRun 'apphome help list' for its usage.\n")
    }

    @Test func uninstallDryRunOfAnAppNotInstalledFails() {
        let w = World()
        let r = w.apphome("uninstall", "--dry-run", "com.example.Missing")
        #expect(r.status == 1 && r.out.isEmpty && r.err == "apphome: com.example.Missing is not installed\n", "\(r)")
    }

    @Test func keygenNamesTheMissingDirectoryAndMakesNothing() {
        let w = World()
        let missing = w.base + "/keys"
        let r = w.apphome("keygen", missing + "/acme.key")
        #expect(r.status == 1 && r.out.isEmpty)
        #expect(r.err == "apphome: cannot make \(missing)/acme.key: the directory \(missing) does not exist; make it first (mkdir -m 700 \(missing)); no key was made\n")
        #expect(!FileManager.default.fileExists(atPath: missing))
        _ = FileManager.default.createFile(atPath: w.base + "/file", contents: Data())
        let notDirectory = w.apphome("keygen", w.base + "/file/acme.key")
        #expect(notDirectory.status == 1 && notDirectory.err == "apphome: cannot make \(w.base)/file/acme.key: \(w.base)/file is not a directory; no key was made\n")
        try? FileManager.default.createDirectory(atPath: missing, withIntermediateDirectories: false)
        let made = w.apphome("keygen", missing + "/acme.key")
        #expect(made.status == 0 && FileManager.default.fileExists(atPath: missing + "/acme.key.pub"), "\(made)")
    }

    @Test func purgeCachesTakesASizeWithAUnit() throws {
        let w = World()
        #expect(w.apphome("install", w.v1).status == 0)
        let r = w.apphome("purge-caches", "--target-free", "500M", freeBytes: { _ throws(SystemError) in 600 << 20 })
        #expect(r.status == 0 && r.out == "0 bytes freed in total; 600 MiB free\n", "\(r)")
        let short = w.apphome("purge-caches", "--target-free=1.5G", freeBytes: { _ throws(SystemError) in 1 << 30 })
        #expect(short.status == 1 && short.err == "apphome: only 1 GiB free after purging every cache it could; the target was 1.5 GiB\n", "\(short)")
    }

    @Test(arguments: [
        ("0", 0), ("4096", 4096), ("1K", 1024), ("1k", 1024), ("500M", 500 << 20), ("500MB", 500 << 20), ("500MiB", 500 << 20),
        ("2G", 2 << 30), ("1.5G", 3 << 29), ("1T", 1 << 40), ("7B", 7),
    ] as [(String, UInt64)])
    func sizesParse(_ text: String, _ bytes: UInt64) {
        #expect(ByteCount.parse(text) == bytes)
    }

    @Test(arguments: ["", "M", "-5", "1.", ".5M", "1..5M", "5X", "5iB", "1e3", "18446744073709551615K", " 5M", "5 M", "٥M"])
    func notSizes(_ text: String) {
        #expect(ByteCount.parse(text) == nil, "\(text)")
    }

    @Test(arguments: [(0, "0 bytes"), (1, "1 byte"), (1023, "1023 bytes"), (1024, "1 KiB"), (1536, "1.5 KiB"), (10 << 20, "10 MiB"),
                      (5 << 30 + 1 << 29, "5.5 GiB"), (123 << 40, "123 TiB")] as [(UInt64, String)])
    func sizesPrintForPeople(_ bytes: UInt64, _ text: String) {
        #expect(ByteCount.human(bytes) == text)
    }
}

/// An independent count of a tree's files and bytes (FileManager, not the command's walk).
enum AppHomeCommandMeasure {
    static func count(_ path: String) throws -> (Int, UInt64) {
        var files = 0
        var bytes: UInt64 = 0
        for sub in FileManager.default.subpaths(atPath: path) ?? [] {
            let attributes = try FileManager.default.attributesOfItem(atPath: path + "/" + sub)
            guard attributes[.type] as? FileAttributeType != .typeDirectory else { continue }
            files += 1
            if attributes[.type] as? FileAttributeType == .typeRegular { bytes += (attributes[.size] as? UInt64) ?? 0 }
        }
        return (files, bytes)
    }
}
