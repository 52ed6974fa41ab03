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
    /// files that a preference writer killed mid-write left.
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
                guard let file = Self.domainFileOfTemporaryFile(name) else { continue }
                let path = directory + "/" + name
                let lockPath = directory + "/." + file + ".lock"
                let held: FileLock?
                do { held = try FileLock.exclusiveIfFree(path: lockPath) } catch {
                    report.findings.append(DoctorFinding(problem: "temporary file \(path) left by an interrupted preference write",
                                                         repair: "cannot check its lock: \(error)", outcome: .notRepaired))
                    continue
                }
                guard let held else { continue }  // a writer is at work on that domain
                defer { held.unlock() }
                let problem = "temporary file \(path) left by an interrupted preference write"
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

    /// Reports (and unless `dryRun` removes) the spares a prefsd that is
    /// gone left beside its domains (``ReplacementSpares``): they hold an
    /// earlier state of the domain, values the app removed included. Under
    /// the domain's lock (taken without waiting: a writer at work is left
    /// alone), a `.spare.prev` is always a dead replacement's, and a
    /// `.spare` is stale when its own `flock` is free (a live prefsd holds
    /// its spares locked from before it lets go of the domain's lock).
    func checkStaleSpares(dryRun: Bool, into report: inout DoctorReport) {
        for directory in preferenceDirectories() where DirectoryTree.isDirectoryNotLink(directory) {
            let names = ((try? FileSystem.directoryEntries(directory)) ?? []).sorted()
            for name in names {
                guard let file = Self.domainFileOfSpare(name) else { continue }
                let path = directory + "/" + name
                let problem = "prefsd's spare \(path) left by a prefsd that is gone"
                guard let held = try? FileLock.exclusiveIfFree(path: directory + "/." + file + ".lock") else { continue }
                defer { held.unlock() }
                guard name.hasSuffix(ReplacementSpares.previousSuffix) || ReplacementSpares.isStale(path) else { continue }
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

    /// `X.plist` for a spare's name, `.X.plist.spare` or `.X.plist.spare.prev`, else `nil`.
    static func domainFileOfSpare(_ name: String) -> String? {
        let spare = ReplacementSpares.spareSuffix, previous = spare + ReplacementSpares.previousSuffix
        guard name.hasPrefix(".") else { return nil }
        let stem = name.hasSuffix(previous) ? name.dropLast(previous.count) : name.hasSuffix(spare) ? name.dropLast(spare.count) : nil
        guard let file = stem?.dropFirst(), file.hasSuffix(".plist"), file.count > 6 else { return nil }
        return String(file)
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
