import Foundation
import Testing

/// Names are bytes (docs/ARCHITECTURE.md, "keys are their exact scalars"):
/// a map or set keyed by Swift `String` merges canonically equivalent text
/// ("é" and "e" + U+0301 are one `String`), so one over names that came
/// from a file system or a user must be keyed by `PlistKey`. This scan of
/// the sources fails when a new `String`-keyed map or set appears in the
/// code that handles such names; each one that remains is listed below
/// with why it is safe (count per file: one more fails the test).
@Suite struct NameMapScanTests {
    /// The directories (and files) whose maps may hold names from a file system or a user.
    static let scanned = [
        "Sources/Containers", "Sources/Backups", "Sources/GitCredential", "Sources/Keychain", "Sources/KeychainClient",
        "Sources/Preferences", "Sources/DefaultsCommand", "Sources/PrefsService", "Sources/PrefsProtocol",
        "Sources/SecurityCommand", "Sources/AppHomeCommand",
    ]

    /// File → how many `String`-keyed maps or sets it may hold, and why each is safe.
    static let allowed: [String: (count: Int, why: String)] = [
        "Sources/Backups/Backup.swift": (1, "participant name → payload: the names are the participants' own ASCII constants"),
        "Sources/Backups/BackupManifest.swift": (3, "participant name → payload, as above"),
        "Sources/Backups/Prune.swift": (3, "paths of manifests and of objects this code named (hex digests, bundle ids, timestamps: ASCII)"),
        "Sources/Containers/ContainerManager.swift": (5, "environment variables passed through to hooks and `run` (the process environment, not names)"),
        "Sources/Containers/Layout/SearchPaths.swift": (1, "the process environment"),
        "Sources/Containers/Lifecycle/Run.swift": (3, "the process environment"),
        "Sources/PrefsService/Requests/PeerConfinement.swift": (2, "bundle and app-group ids from the registry, compared by exact bytes as the registry keys them"),
        "Sources/Containers/Lifecycle/Sandbox.swift": (5, "the process environment, its names, and library directories (paths, not names)"),
        "Sources/Containers/Lifecycle/Uninstall.swift": (2, "the process environment"),
        "Sources/Containers/Lifecycle/UninstallHooks.swift": (1, "the process environment"),
        "Sources/Containers/Maintenance/Doctor.swift": (7, "the process environment; home and group UUIDs (validated ASCII); the fixed ASCII names doctor skips"),
        "Sources/Containers/Registry/RegistryFile.swift": (3, "bundle id → directory: bundle ids are validated ASCII (BundleIdentifier)"),
        "Sources/DefaultsCommand/ValueArguments.swift": (2, "the fixed ASCII flags of `defaults write` (-string, -int, …)"),
        "Sources/DefaultsCommand/WarningsOnce.swift": (1, "warning texts this code wrote, shown once"),
        "Sources/Keychain/KeychainLocking.swift": (1, "Secret Service attributes this code sets (ASCII names, hex device ids)"),
        "Sources/Keychain/Storage/ClassKeys.swift": (4, "protection-class name → check box: the class names are ASCII constants"),
        "Sources/Keychain/Storage/DeviceKey.swift": (5, "class name → check, and Secret Service attributes, as above"),
        "Sources/Keychain/Storage/KeyTable.swift": (2, "protection-class name → wrapped key, as above"),
        "Sources/Keychain/Storage/SecretStore.swift": (18, "Secret Service attributes this code sets (ASCII names, hex device ids, the root path it was given)"),
        "Sources/Preferences/DomainResolver.swift": (1, "bundle id → directory: bundle ids are validated ASCII"),
        "Sources/AppHomeCommand/BackupVerbs.swift": (4, "option name → value, and the flags given: the options are ASCII constants with no K, ';' or '`' (the only ASCII characters another text is canonically equivalent to)"),
        "Sources/AppHomeCommand/SigningVerbs.swift": (1, "the fixed ASCII verb names, as above"),
        "Sources/AppHomeCommand/AppHomeMain.swift": (1, "the fixed ASCII verb names the static apphome runs itself, as above"),
        "Sources/SecurityCommand/SecurityCommand.swift": (2, "verb and option names: ASCII constants, as above"),
        "Sources/PrefsProtocol/HookEnvironment.swift": (3, "the hooks' environment variables (an allow-list of ASCII names)"),
        "Sources/PrefsProtocol/Messages.swift": (1, "the hooks' environment on the wire, as above"),
        "Sources/AppHomeCommand/ResticVerbs.swift": (1, "option name → value, and the flags given: ASCII constants, as in BackupVerbs"),
        "Sources/Backups/Restic.swift": (1, "restic's argv and environment (the process environment, not names)"),
        "Sources/Backups/ResticBackup.swift": (1, "object paths this code named (hex digests under the store)"),
        "Sources/Keychain/Model/SecretServiceMapping.swift": (2, "Secret Service schema names: ASCII constants compared with a client's xdg:schema"),
        "Sources/Keychain/Storage/Keybag.swift": (1, "device id → open keys: device ids are random hex this code made"),
        "Sources/SecurityCommand/CredentialVerbs.swift": (1, "the fixed ASCII verb names"),
    ]

    static let pattern = try! NSRegularExpression(pattern: #"\[String ?: |Set<String>|Dictionary<String|Set<\[String\]>"#)

    static var packageRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }

    /// File → the lines that declare a `String`-keyed map or set (comments left out).
    static func found() throws -> [String: [String]] {
        var out: [String: [String]] = [:]
        let fm = FileManager.default
        for dir in scanned {
            let base = packageRoot.appendingPathComponent(dir)
            guard let walker = fm.enumerator(atPath: base.path) else { continue }
            for case let relative as String in walker where relative.hasSuffix(".swift") {
                let text = try String(contentsOf: base.appendingPathComponent(relative), encoding: .utf8)
                let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init).filter { line in
                    let trimmed = line.drop { $0 == " " }
                    guard !trimmed.hasPrefix("//") else { return false }
                    return pattern.firstMatch(in: line, range: NSRange(line.startIndex..., in: line)) != nil
                }
                if !lines.isEmpty { out[dir + "/" + relative] = lines }
            }
        }
        return out
    }

    @Test func noNewStringKeyedMapOverNames() throws {
        let found = try Self.found()
        #expect(!found.isEmpty, "the scan found no source at \(Self.packageRoot.path)")
        for (file, lines) in found.sorted(by: { $0.key < $1.key }) {
            let allowed = Self.allowed[file]?.count ?? 0
            #expect(lines.count <= allowed, """
                \(file) has \(lines.count) String-keyed map(s) or set(s), \(allowed) allowed: key names from a file system or \
                a user by PlistKey (docs/ARCHITECTURE.md), or add the new one to NameMapScanTests.allowed saying why it is safe:
                \(lines.joined(separator: "\n"))
                """)
        }
        // An allowance no longer needed is removed, so the list stays the truth.
        for (file, entry) in Self.allowed.sorted(by: { $0.key < $1.key }) {
            #expect(found[file]?.count == entry.count, "\(file): \(found[file]?.count ?? 0) found, \(entry.count) allowed; update the allow-list")
        }
    }
}
