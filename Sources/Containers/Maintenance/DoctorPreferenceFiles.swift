import AppHomeSystem
import Preferences

extension Doctor {
    /// Every directory that holds domain files: the root's
    /// `Library/Preferences`, each home's and each group container's, and
    /// their `ByHost/`.
    func preferenceDirectories() -> [String] {
        var directories = [layout.root + "/Library/Preferences"]
        for uuid in allUUIDs(in: layout.applicationsDirectory) {
            directories.append(layout.applicationsDirectory + "/" + uuid + "/Library/Preferences")
        }
        for uuid in allUUIDs(in: layout.groupsDirectory) {
            directories.append(layout.groupContainer(uuid: uuid).preferences)
        }
        return directories.flatMap { [$0, $0 + "/ByHost"] }
    }

    /// Reports (and unless `dryRun` removes) the `.<file>.<random>.tmp`
    /// files that a preference writer killed mid-write left, and the spares
    /// a prefsd that is gone left beside its domains (``ReplacementSpares``:
    /// `.<file>.spare`, `.<file>.spare.prev`), which hold an earlier state of
    /// the domain, values the app removed included.
    ///
    /// A writer creates its temporary file while it holds the domain's lock
    /// (`.<file>.lock`), so a temporary file whose lock is free belongs to a
    /// dead writer; one whose lock is held is a live write and is left
    /// alone. The lock is held (without waiting) while the file is removed.
    func checkPreferenceTemporaryFiles(dryRun: Bool, into report: inout DoctorReport) {
        // A `defaults apply` that died while replacing its domains: finished
        // from its journal (``DomainTransaction/recover(journalDirectory:)``).
        let journals = layout.root + "/Library/Preferences"
        let interrupted = ((try? FileNames.entries(journals)) ?? []).filter { $0.hasPrefix(".apply-") && $0.hasSuffix(".journal") }.sorted()
        if dryRun {
            for name in interrupted {
                report.findings.append(DoctorFinding(problem: "interrupted defaults apply \(journals)/\(name)",
                                                     repair: "would finish it", outcome: .wouldRepair))
            }
        } else if !interrupted.isEmpty {
            for line in DomainTransaction.recover(journalDirectory: journals) {
                report.findings.append(DoctorFinding(problem: "interrupted defaults apply", repair: line, outcome: .repaired))
            }
        }
        for directory in preferenceDirectories() where DirectoryTree.isDirectoryNotLink(directory) {
            let names = ((try? FileSystem.directoryEntries(directory)) ?? []).sorted()
            for name in names {
                let path = directory + "/" + name
                let file: String, problem: String, isSpare: Bool
                if let f = Self.domainFileOfTemporaryFile(name) {
                    (file, problem, isSpare) = (f, "temporary file \(path) left by an interrupted preference write", false)
                } else if let f = FilePreferenceStore.domainFile(ofSpare: name) {
                    (file, problem, isSpare) = (f, "prefsd's spare \(path) left by a prefsd that is gone", true)
                } else {
                    continue
                }
                let held: FileLock?
                do { held = try FileLock.exclusiveIfFree(path: directory + "/." + file + ".lock") } catch {
                    report.findings.append(DoctorFinding(problem: problem, repair: "cannot check its lock: \(error)", outcome: .notRepaired))
                    continue
                }
                guard let held else { continue }  // a writer is at work on that domain
                defer { held.unlock() }
                // A `.spare.prev` lives only inside a replacement, under the domain's lock
                // held now; a `.spare` is a live prefsd's while its own `flock` is held.
                if isSpare && !name.hasSuffix(ReplacementSpares.previousSuffix) && !ReplacementSpares.isStale(path) { continue }
                if dryRun {
                    report.findings.append(DoctorFinding(problem: problem, repair: "would remove it", outcome: .wouldRepair))
                    continue
                }
                do {
                    try FileSystem.removeFile(path)
                    report.findings.append(DoctorFinding(problem: problem, repair: "removed it", outcome: .repaired))
                } catch {
                    report.findings.append(DoctorFinding(problem: problem, repair: "repair failed: \(error)", outcome: .notRepaired))
                }
            }
        }
    }

    /// `X.plist` for a name `.X.plist.<random>.tmp`, else `nil`.
    static func domainFileOfTemporaryFile(_ name: String) -> String? {
        guard name.hasPrefix("."), name.hasSuffix(".tmp") else { return nil }
        let middle = name.dropFirst().dropLast(4)
        guard let dot = middle.lastIndex(of: ".") else { return nil }
        let file = middle[..<dot]
        let random = middle[middle.index(after: dot)...]
        guard file.hasSuffix(".plist"), file.count > 6, !random.isEmpty,
              random.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) else { return nil }
        return String(file)
    }
}
