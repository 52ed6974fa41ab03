import AppHomeSystem
import Foundation
import Testing

/// Every name or value another machine, an archive or a snapshot controls is
/// shown escaped in messages (`FileNames.escaped`, the one helper), so that it
/// can neither send a terminal an escape sequence nor fake a line. This scan
/// of the sources fails when one of those names is interpolated raw again in
/// the code that prints it.
@Suite struct EscapedNameScanTests {
    /// File → the names it holds from elsewhere, which it may interpolate only
    /// through `FileNames.escaped` (or, in KeyedArchive, `Self.shown`).
    static let hostileNames: [String: (names: [String], from: String)] = [
        "Sources/SyncedPreferences/KeyValueSync+Pass.swift": (["name", "copy.name"], "file names in the sync folder"),
        "Sources/SyncedPreferences/ChangeLog.swift": (["s", "s.prefix(80)", "k"], "stores and keys of another machine's log"),
        "Sources/SyncedPreferences/KeyValueStoreLimits.swift": (["key.string", "key.string.prefix(80)"], "keys of another machine's log"),
        "Sources/AppHomeCommand/SyncVerbs.swift": (["log.name", "log.summary", "name"], "sync folder names and what their logs say"),
        "Sources/KeyedArchive/KeyedArchiveError.swift": (["name", "detail", "what", "version"], "an archive's $archiver, class names and keys"),
        "Sources/Backups/Restore.swift": (["e.path", "bundleName", "label)\\(e.path"], "paths in a backup's manifest"),
        "Sources/Backups/ResticBackup.swift": (["detail", "manifest.bundleIdentifier.rawValue"], "restic's output and a snapshot's manifest"),
        "Sources/Backups/Restic.swift": (["detail", "found"], "restic's output"),
    ]

    @Test func namesFromElsewhereAreNeverInterpolatedRaw() throws {
        var raw: [String] = []
        for (file, entry) in Self.hostileNames.sorted(by: { $0.key < $1.key }) {
            let text = try String(contentsOf: NameMapScanTests.packageRoot.appendingPathComponent(file), encoding: .utf8)
            for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                guard !line.drop(while: { $0 == " " }).hasPrefix("//") else { continue }
                for name in entry.names where line.contains("\\(\(name))") {
                    raw.append("\(file):\(number + 1): \\(\(name)) (\(entry.from)) is shown raw: use FileNames.escaped")
                }
            }
        }
        #expect(raw.isEmpty, "\(raw.joined(separator: "\n"))")
    }

    @Test func theHelperEscapesWhatATerminalWouldObey() {
        let hostile = Array("a\u{1B}[2J\u{07}\u{00}\r\u{7F}\u{9B}\\".utf8) + [0xFF]
        #expect(FileNames.escaped(hostile) == "a\\x1B[2J\\x07\\x00\\x0D\\x7F\\xC2\\x9B\\\\\\xFF")
        #expect(FileNames.escaped(hostile, notation: .terminal) == "a\\u001b[2J\\u0007\\u0000\\u000d\\u007f\\u009b\\\\xFF")
        #expect(FileNames.escaped("plain é") == "plain é")
    }
}
