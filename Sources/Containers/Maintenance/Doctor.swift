#if canImport(Glibc)
import Glibc
#endif
import AppHomeSystem
import Preferences

/// One thing `doctor` found, and what it did (or would do) about it.
public struct DoctorFinding: Equatable, Sendable {
    /// What happened to the problem.
    public enum Outcome: Equatable, Sendable {
        /// Repaired as ``DoctorFinding/repair`` says.
        case repaired
        /// A dry run: ``DoctorFinding/repair`` says what a real run would do.
        case wouldRepair
        /// Left alone; ``DoctorFinding/repair`` says why and what to do.
        case notRepaired
    }

    /// The problem, in plain words.
    public var problem: String
    /// The repair done (past tense), the repair a real run would do, or why
    /// it cannot be repaired.
    public var repair: String
    /// What happened.
    public var outcome: Outcome

    public init(problem: String, repair: String, outcome: Outcome) {
        self.problem = problem
        self.repair = repair
        self.outcome = outcome
    }
}

/// What `doctor` found and did.
public struct DoctorReport: Equatable, Sendable {
    /// Every problem, in the order checked.
    public var findings: [DoctorFinding] = []
    /// Uninstall hooks run while finishing an interrupted uninstall.
    public var hooks: [HookResult] = []
    /// Participants that failed while finishing an interrupted uninstall.
    public var participantFailures: [String] = []

    public init() {}

    /// Whether something could not be repaired.
    public var hasUnrepairedProblems: Bool { findings.contains { $0.outcome == .notRepaired } }
}

/// Finds and repairs what a crash can leave under a root
/// (``checkAndRepair(dryRun:environment:hookTimeout:)``), and finishes or
/// undoes an interrupted install, update or uninstall.
public struct Doctor: ContainerOperation, Sendable {
    /// The root it checks.
    public let context: ContainerContext

    /// Finds and repairs what a crash can leave under the root.
    ///
    /// Under the registry lock, in order:
    /// 1. a pending journal: the interrupted install, update or uninstall is
    ///    finished when the registry already names its result, else undone
    ///    (an update's data is moved back into the old home);
    /// 2. a damaged registry: moved aside (`registry.plist.damaged`) and
    ///    rebuilt from the homes (one from a newer AppHome is not repaired,
    ///    and then nothing else is checked);
    /// 3. entries whose home is missing (the entry is removed), whose bundle
    ///    is missing (not repaired), or whose home lacks standard directories
    ///    (recreated);
    /// 4. homes no entry names that hold an intact bundle of an app the
    ///    registry lacks (a lost registry): registered again, with their
    ///    groups' containers found by their identity files;
    /// 5. recorded app groups whose container is missing (recreated) or
    ///    lacks its identity file (written);
    /// 6. orphaned homes and group containers, in no registry entry: removed
    ///    when they hold no user data, else moved to `<root>/Recovered/`;
    /// 7. temporary files of killed registry or journal writers, and run
    ///    lock files of homes that no longer exist;
    /// 8. temporary files of killed preference writers
    ///    (`.<domain>.plist.<random>.tmp`) wherever domains live, removed
    ///    only while no writer holds that domain's lock.
    ///
    /// - Parameters:
    ///   - dryRun: report only; change nothing.
    ///   - environment: the base environment for uninstall hooks.
    ///   - hookTimeout: seconds each hook may run.
    /// - Throws: ``ContainersError/system(_:)`` when the lock cannot be taken.
    public func checkAndRepair(dryRun: Bool = false, environment: [String: String] = [:],
                       hookTimeout: Double = 10) throws(ContainersError) -> DoctorReport {
        // A root where nothing was ever installed: nothing to check, and a
        // dry run must not even create the lock.
        var report = DoctorReport()
        if !FileSystem.exists(layout.applicationsDirectory) && !FileSystem.exists(layout.groupsDirectory) {
            checkPreferenceTemporaryFiles(dryRun: dryRun, into: &report)
            return report
        }
        let lock = try registry.lock()
        defer { lock.unlock() }
        let pending = checkJournal(dryRun: dryRun, environment: environment, hookTimeout: hookTimeout, into: &report)
        checkRegistryAndFiles(dryRun: dryRun, keeping: pending, into: &report)
        checkPreferenceTemporaryFiles(dryRun: dryRun, into: &report)
        return report
    }

    /// Finishes or undoes an interrupted install, update or uninstall, if
    /// its journal is pending: what the next install, update or uninstall
    /// does before it starts. Nothing else is checked.
    public func finishInterruptedOperation(environment: [String: String] = [:],
                                           hookTimeout: Double = 10) throws(ContainersError) -> DoctorReport {
        let lock = try registry.lock()
        defer { lock.unlock() }
        var report = DoctorReport()
        _ = checkJournal(dryRun: false, environment: environment, hookTimeout: hookTimeout, into: &report)
        return report
    }

    // MARK: The journal

    /// The homes and group containers (UUIDs) of a journal left pending,
    /// which the orphan checks must leave alone.
    struct Owned {
        var homes: Set<String> = []
        var groups: Set<String> = []
    }

    private func checkJournal(dryRun: Bool, environment: [String: String], hookTimeout: Double,
                              into report: inout DoctorReport) -> Owned {
        let journal: Journal
        do {
            guard let j = try pendingJournal() else { return Owned() }
            journal = j
        } catch .journalVersionTooNew(let path, let found, let supported) {
            let problem = "journal \(path) has format version \(found), newer than this AppHome (\(supported))"
            report.findings.append(DoctorFinding(problem: problem, repair: "left it alone; use a newer apphome", outcome: .notRepaired))
            return Owned(homes: Set(allUUIDs(in: layout.applicationsDirectory)), groups: Set(allUUIDs(in: layout.groupsDirectory)))
        } catch .journalDamaged(let path, let reason) {
            let problem = ContainersError.journalDamaged(path: path, reason: reason).description
            if dryRun {
                report.findings.append(DoctorFinding(problem: problem, repair: "would remove it and check the homes without it", outcome: .wouldRepair))
            } else {
                do {
                    try clearJournal()
                    report.findings.append(DoctorFinding(problem: problem, repair: "removed it; the homes are checked without it", outcome: .repaired))
                } catch {
                    report.findings.append(DoctorFinding(problem: problem, repair: "could not remove it: \(error)", outcome: .notRepaired))
                }
            }
            return Owned()
        } catch {
            report.findings.append(DoctorFinding(problem: "the journal cannot be read: \(error)",
                                                 repair: "left it and every home alone; fix the cause and run 'apphome doctor' again", outcome: .notRepaired))
            return Owned(homes: Set(allUUIDs(in: layout.applicationsDirectory)), groups: Set(allUUIDs(in: layout.groupsDirectory)))
        }
        var owned = Owned()
        owned.homes.insert(journal.entry.homeUUID)
        if let p = journal.previous { owned.homes.insert(p.homeUUID) }
        owned.groups.formUnion(journal.groups.values)
        let problem = "\(journal.summary) was interrupted after step \(journal.step)"
        func add(_ repair: String, _ outcome: DoctorFinding.Outcome) {
            report.findings.append(DoctorFinding(problem: problem, repair: repair, outcome: outcome))
        }
        let current: Registry
        do { current = try registry.read() } catch {
            add("cannot finish or undo it: \(error)", .notRepaired)
            return owned
        }
        let id = journal.entry.bundleIdentifier
        let named = current.entries[id]?.homeUUID
        let newHome = layout.home(uuid: journal.entry.homeUUID, bundleName: journal.entry.bundleName)
        // Groups the operation created that the registry does not record.
        let strayGroups = journal.groups.filter { current.groups[$0.key] != $0.value }
        do throws(ContainersError) {
            switch journal.operation {
            case .install where named == journal.entry.homeUUID:
                if dryRun { add("would keep it: \(id) \(journal.entry.displayVersion) is installed", .wouldRepair); return owned }
                try clearJournal()
                add("finished it: \(id) \(journal.entry.displayVersion) is installed", .repaired)
            case .install:
                let what = FileSystem.exists(newHome.path) ? "remove the partial home \(newHome.path)" : "nothing had been created"
                if dryRun { add("would undo it: \(what)", .wouldRepair); return owned }
                try containersErrors { try TreeOperations.remove(newHome.path) }
                removeGroupContainers(strayGroups)
                TreeOperations.syncDirectory(layout.applicationsDirectory)
                try clearJournal()
                add("undid it: " + (what.hasPrefix("remove ") ? "removed" + what.dropFirst(6) : what), .repaired)
            case .update where named == journal.entry.homeUUID:
                let old = layout.home(uuid: journal.previous!.homeUUID, bundleName: journal.previous!.bundleName)
                if dryRun { add("would finish it: remove the old home \(old.path)", .wouldRepair); return owned }
                try containersErrors {
                    try TreeOperations.remove(old.path)
                    try FileSystem.removeFile(layout.runLockPath(uuid: journal.previous!.homeUUID))
                }
                TreeOperations.syncDirectory(layout.applicationsDirectory)
                try clearJournal()
                add("finished it: removed the old home \(old.path); \(id) \(journal.entry.displayVersion) is installed with its data", .repaired)
            case .update where named == journal.previous!.homeUUID:
                let old = layout.home(uuid: journal.previous!.homeUUID, bundleName: journal.previous!.bundleName)
                if !FileSystem.exists(newHome.path) {
                    if dryRun { add("would undo it: nothing had been created", .wouldRepair); return owned }
                    removeGroupContainers(strayGroups)
                    try clearJournal()
                    add("undid it: nothing had been created; \(id) \(journal.previous!.displayVersion) is installed", .repaired)
                    break
                }
                let items = try updatedItems(in: newHome)
                if dryRun {
                    add("would undo it: move \(items.count) item(s) of user data back to \(old.path) and remove the new home \(newHome.path)", .wouldRepair)
                    return owned
                }
                var conflicts: [String] = []
                var movedBack = 0
                try containersErrors {
                    for item in items {
                        let source = newHome.path + "/" + item, target = old.path + "/" + item
                        if !FileSystem.exists(target) {
                            try TreeOperations.makeDirectory(FileSystem.parentDirectory(target))
                            try TreeOperations.rename(source, to: target)
                            movedBack += 1
                        } else if try !TreeOperations.holdsFiles(source, skipping: []) {
                            continue  // an empty directory the update made: goes with the new home
                        } else {
                            conflicts.append(item)
                        }
                    }
                    TreeOperations.syncDirectory(old.library)
                    TreeOperations.syncDirectory(old.path)
                }
                if !conflicts.isEmpty {
                    add("cannot undo it: both \(old.path) and \(newHome.path) hold \(conflicts.joined(separator: ", ")); merge them by hand, then run 'apphome doctor' again", .notRepaired)
                    return owned
                }
                try containersErrors { try TreeOperations.remove(newHome.path) }
                removeGroupContainers(strayGroups)
                TreeOperations.syncDirectory(layout.applicationsDirectory)
                try clearJournal()
                add("undid it: moved \(movedBack) item(s) of user data back to \(old.path) and removed the new home \(newHome.path); \(id) \(journal.previous!.displayVersion) is installed", .repaired)
            case .update:
                add("cannot finish or undo it: the registry names neither its old nor its new home; check \(layout.applicationsDirectory) by hand", .notRepaired)
            case .uninstall where named == journal.entry.homeUUID:
                if dryRun { add("would undo it: nothing was removed yet, \(id) stays installed", .wouldRepair); return owned }
                try clearJournal()
                add("undid it: nothing was removed yet, \(id) is still installed; run 'apphome uninstall \(id)' again", .repaired)
            case .uninstall where named == nil:
                if dryRun { add("would finish it: remove the home \(newHome.path) and run the remaining uninstall steps", .wouldRepair); return owned }
                var j = journal
                let r = try Uninstaller(context: context).finishUninstall(journal.entry, groups: journal.groups, remaining: current, journal: &j,
                                            environment: environment, hookTimeout: hookTimeout)
                report.hooks += r.hooks
                report.participantFailures += r.participantFailures
                add("finished it: removed the home \(newHome.path)", .repaired)
            case .uninstall:
                add("cannot finish or undo it: \(id) is installed in another home; check \(layout.applicationsDirectory) by hand", .notRepaired)
            }
        } catch .simulatedCrash(let step) {
            add("stopped by a simulated crash after step \(step)", .notRepaired)
            return owned
        } catch {
            add("repair failed: \(error)", .notRepaired)
            return owned
        }
        return report.findings.last?.outcome == .repaired ? Owned() : owned
    }

    /// The user-data items an update moves, as found in `home`:
    /// `Documents` and every `Library/` entry except `Caches`.
    private func updatedItems(in home: ApplicationHome) throws(ContainersError) -> [String] {
        try containersErrors {
            var items: [String] = []
            if FileSystem.exists(home.documents) { items.append("Documents") }
            for name in try FileSystem.directoryEntries(home.library).sorted() where name != "Caches" {
                items.append("Library/" + name)
            }
            return items
        }
    }

    // MARK: Registry, homes, groups, stray files

    private func checkRegistryAndFiles(dryRun: Bool, keeping owned: Owned, into report: inout DoctorReport) {
        func add(_ problem: String, _ done: String, _ wouldDo: String, _ action: () throws -> Void) {
            if dryRun {
                report.findings.append(DoctorFinding(problem: problem, repair: "would " + wouldDo, outcome: .wouldRepair))
                return
            }
            do {
                try action()
                report.findings.append(DoctorFinding(problem: problem, repair: done, outcome: .repaired))
            } catch {
                report.findings.append(DoctorFinding(problem: problem, repair: "repair failed: \(error)", outcome: .notRepaired))
            }
        }
        var current: Registry
        var registryChanged = false
        do { current = try registry.read() } catch .registryCorrupt(let path, let reason) {
            // The homes say what is installed: keep the damaged file for
            // inspection and rebuild the registry from them (below).
            let aside = Self.unusedPath(path + ".damaged")
            current = Registry()
            registryChanged = true
            add(ContainersError.registryCorrupt(path: path, reason: reason).description, "moved it to \(aside) and rebuilt the registry from the homes",
                "move it to \(aside) and rebuild the registry from the homes") {
                try FileSystem.move(path, to: aside)
            }
            if !dryRun && report.findings.last?.outcome != .repaired { return }
        } catch {
            report.findings.append(DoctorFinding(problem: "\(error)", repair: "cannot check the homes without the registry; restore it from a backup or move it aside", outcome: .notRepaired))
            return
        }

        // Entries.
        for entry in current.sortedEntries where !owned.homes.contains(entry.homeUUID) {
            let id = entry.bundleIdentifier
            let home = layout.home(uuid: entry.homeUUID, bundleName: entry.bundleName)
            if !FileSystem.isDirectory(home.path) {
                add("\(id) is in the registry but its home \(home.path) does not exist",
                    "removed \(id) from the registry", "remove \(id) from the registry") {
                    current.entries[id] = nil
                    registryChanged = true
                }
                continue
            }
            if !FileSystem.isDirectory(home.app) {
                report.findings.append(DoctorFinding(problem: "\(id): its bundle \(home.app) is missing",
                                                     repair: "cannot repair it; reinstall the bundle with 'apphome update <\(entry.bundleName)>'",
                                                     outcome: .notRepaired))
            }
            // A standard directory replaced by a symbolic link (an app
            // pointing `tmp` at `~/important`): the link goes, an empty
            // directory takes its place, the target is left alone.
            for link in ([home.path] + home.standardDirectories).filter(DirectoryTree.isSymbolicLink) {
                let name = link == home.path ? "home" : String(link.dropFirst(home.path.count + 1))
                add("\(id): its \(name) \(link) is a symbolic link, not a directory",
                    "replaced the link with an empty directory (its target was left alone)",
                    "replace the link with an empty directory (its target left alone)") {
                    try FileSystem.removeFile(link)
                    try TreeOperations.makeDirectory(link)
                }
            }
            let missing = home.standardDirectories.filter { !DirectoryTree.isDirectoryNotLink($0) && !DirectoryTree.isSymbolicLink($0) }
            if !missing.isEmpty {
                let names = missing.map { String($0.dropFirst(home.path.count + 1)) }.joined(separator: ", ")
                add("\(id): its home \(home.path) lacks \(names)", "recreated them (empty)", "recreate them (empty)") {
                    for dir in missing { try FileSystem.makeDirectories(dir) }
                }
            }
        }
        // Homes no entry names that hold an intact bundle of an app the
        // registry lacks (a lost or rebuilt registry): registered again.
        let adopted = adoptHomes(&current, keeping: owned, dryRun: dryRun, changed: &registryChanged, add: add)

        if registryChanged && !dryRun {
            do { try registry.write(current) } catch {
                report.findings.append(DoctorFinding(problem: "the registry could not be rewritten", repair: "\(error)", outcome: .notRepaired))
            }
        }

        // Recorded groups.
        for (group, uuid) in current.groups.sorted(by: { $0.key < $1.key }) where !owned.groups.contains(uuid) {
            let container = layout.groupContainer(uuid: uuid)
            for link in container.standardDirectories.filter(DirectoryTree.isSymbolicLink) {
                add("app group \(group): its \(link.dropFirst(container.path.count + 1)) \(link) is a symbolic link, not a directory",
                    "replaced the link with an empty directory (its target was left alone)",
                    "replace the link with an empty directory (its target left alone)") {
                    try FileSystem.removeFile(link)
                    try TreeOperations.makeDirectory(link)
                }
            }
            let missing = container.standardDirectories.filter { !DirectoryTree.isDirectoryNotLink($0) && !DirectoryTree.isSymbolicLink($0) }
            if !missing.isEmpty {
                add("app group \(group): its container \(container.path) is missing or incomplete",
                    "recreated it (empty where missing)", "recreate it") {
                    try FileSystem.makeDirectories(layout.groupsDirectory)
                    for dir in [container.path] + missing { try TreeOperations.makeDirectory(dir) }
                    try container.writeIdentity(group)
                }
            } else if container.readIdentity() != group {
                add("app group \(group): its container \(container.path) does not record its group",
                    "wrote its identity file", "write its identity file") {
                    try container.writeIdentity(group)
                }
            }
        }

        // Orphans.
        let registered = Set(current.entries.values.map(\.homeUUID)).union(owned.homes).union(adopted.homes)
        for uuid in allUUIDs(in: layout.applicationsDirectory) where !registered.contains(uuid) {
            let path = layout.applicationsDirectory + "/" + uuid
            let bundle = ((try? FileSystem.directoryEntries(path)) ?? []).filter { $0.hasSuffix(".app") }.sorted().first
            let what = "orphaned home \(path)" + (bundle.map { " (\($0))" } ?? "") + ", named by no registry entry"
            let skip = Set((bundle.map { [$0] } ?? []) + ["Library/Caches", "tmp"])
            settle(orphan: path, uuid: uuid, hasData: (try? TreeOperations.holdsFiles(path, skipping: skip)) ?? true,
                   problem: what, add: add)
        }
        let recordedGroups = Set(current.groups.values).union(owned.groups).union(adopted.groups)
        for uuid in allUUIDs(in: layout.groupsDirectory) where !recordedGroups.contains(uuid) {
            let path = layout.groupsDirectory + "/" + uuid
            let skip: Set<String> = ["Library/Caches", GroupContainer.identityFileName]
            settle(orphan: path, uuid: uuid, hasData: (try? TreeOperations.holdsFiles(path, skipping: skip)) ?? true,
                   problem: "orphaned app-group container \(path), recorded for no group", add: add)
        }

        // Stray files in Applications/.
        let names = ((try? FileSystem.directoryEntries(layout.applicationsDirectory)) ?? []).sorted()
        for name in names where name.hasPrefix(".") && name.hasSuffix(".tmp")
            && (name.hasPrefix(".registry.plist.") || name.hasPrefix(".journal.plist.")) {
            let path = layout.applicationsDirectory + "/" + name
            add("temporary file \(path) left by an interrupted write", "removed it", "remove it") {
                try FileSystem.removeFile(path)
            }
        }
        let homes = Set(current.entries.values.map(\.homeUUID)).union(owned.homes)
        for name in names where name.hasPrefix(".") && name.hasSuffix(".run.lock") {
            let uuid = String(name.dropFirst().dropLast(9))
            guard !homes.contains(uuid) else { continue }
            let path = layout.applicationsDirectory + "/" + name
            guard let held = try? RunLock.exclusiveIfFree(path) else { continue }  // a command still runs there
            held.unlock()
            add("run lock file \(path) of a home that no longer exists", "removed it", "remove it") {
                try FileSystem.removeFile(path)
            }
        }
    }

    /// Registers again the homes no entry names whose bundle is intact and
    /// whose app the registry lacks: for each app the home with the highest
    /// `CFBundleVersion` (then the most recently changed). The app's groups
    /// get their containers back by the identity files of unrecorded
    /// containers, or new ones. Returns the homes and group containers
    /// taken (or, in a dry run, that would be), which are not orphans.
    private func adoptHomes(_ current: inout Registry, keeping owned: Owned, dryRun: Bool, changed: inout Bool,
                            add: (String, String, String, () throws -> Void) -> Void) -> Owned {
        var taken = Owned()
        let registered = Set(current.entries.values.map(\.homeUUID)).union(owned.homes)
        var best: [BundleIdentifier: (uuid: String, bundle: AppBundle, changed: Int)] = [:]
        for uuid in allUUIDs(in: layout.applicationsDirectory) where !registered.contains(uuid) {
            let path = layout.applicationsDirectory + "/" + uuid
            let bundles = ((try? FileSystem.directoryEntries(path)) ?? []).filter { $0.hasSuffix(".app") }
            guard bundles.count == 1, let bundle = try? AppBundle(path: path + "/" + bundles[0]),
                  current.entries[bundle.identifier] == nil else { continue }
            var st = stat()
            let changedAt = stat(path, &st) == 0 ? Int(st.st_ctim.tv_sec) : 0
            if let other = best[bundle.identifier] {
                let order = Self.compareVersions(bundle.version, other.bundle.version)
                if order < 0 || (order == 0 && changedAt <= other.changed) { continue }
            }
            best[bundle.identifier] = (uuid, bundle, changedAt)
        }
        guard !best.isEmpty else { return taken }

        // Unrecorded group containers, by the group their identity file names.
        let recorded = Set(current.groups.values).union(owned.groups)
        var unrecorded: [AppGroupIdentifier: String] = [:]
        for uuid in allUUIDs(in: layout.groupsDirectory) where !recorded.contains(uuid) {
            if let group = layout.groupContainer(uuid: uuid).readIdentity(), current.groups[group] == nil, unrecorded[group] == nil {
                unrecorded[group] = uuid
            }
        }
        for (id, found) in best.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
            // A home whose bundle claims what an install would refuse stays an orphan.
            guard (try? checkEntitlements(found.bundle, in: current)) != nil else { continue }
            let entry = makeEntry(found.bundle, uuid: found.uuid)
            let home = layout.applicationsDirectory + "/" + found.uuid
            taken.homes.insert(found.uuid)
            var groups: [AppGroupIdentifier: String] = [:]
            var newGroups: [AppGroupIdentifier: String] = [:]
            for group in entry.groups where current.groups[group] == nil && groups[group] == nil {
                if let uuid = unrecorded.removeValue(forKey: group) { groups[group] = uuid } else { newGroups[group] = makeUUID() }
            }
            taken.groups.formUnion(groups.values)
            add("home \(home) holds \(id) \(entry.displayVersion), which the registry does not name",
                "registered it again" + (groups.isEmpty ? "" : " with the containers of \(groups.keys.sorted().map(\.rawValue).joined(separator: ", "))"),
                "register it again") {
                try createGroupContainers(newGroups)
                current.entries[id] = entry
                current.groups.merge(groups) { old, _ in old }
                current.groups.merge(newGroups) { old, _ in old }
                current.recordTeam(entry.team, of: newGroups.keys)
                current.recordTeam(entry.team, of: groups.keys)
                changed = true
            }
        }
        return taken
    }

    /// Compares two `CFBundleVersion`s number by number (`1.10` after
    /// `1.9`); a part that is not a number compares as text.
    static func compareVersions(_ a: String, _ b: String) -> Int {
        let x = a.split(separator: "."), y = b.split(separator: ".")
        for i in 0..<max(x.count, y.count) {
            let p = i < x.count ? x[i] : "0", q = i < y.count ? y[i] : "0"
            if let m = Int(p), let n = Int(q) {
                if m != n { return m < n ? -1 : 1 }
            } else if p != q {
                return p < q ? -1 : 1
            }
        }
        return 0
    }

    /// `path`, or `path-2`, `path-3`, … : the first that does not exist.
    static func unusedPath(_ path: String) -> String {
        var candidate = path
        var n = 2
        while FileSystem.exists(candidate) { candidate = path + "-\(n)"; n += 1 }
        return candidate
    }

    /// Removes an orphan with no user data; moves one with data to
    /// `<root>/Recovered/<UUID>`, so that nothing the user made is lost.
    private func settle(orphan path: String, uuid: String, hasData: Bool, problem: String,
                        add: (String, String, String, () throws -> Void) -> Void) {
        if hasData {
            let target = layout.recoveredDirectory + "/" + uuid
            add(problem + ", holding user data", "moved it to \(target)", "move it to \(target)") {
                try FileSystem.makeDirectories(layout.recoveredDirectory)
                try FileSystem.move(path, to: target)
            }
        } else {
            add(problem + ", holding no user data", "removed it", "remove it") {
                try TreeOperations.remove(path)
                TreeOperations.syncDirectory(FileSystem.parentDirectory(path))
            }
        }
    }

    /// The UUID-named entries of `directory`, sorted.
    func allUUIDs(in directory: String) -> [String] {
        ((try? FileSystem.directoryEntries(directory)) ?? []).filter(ContainerLayout.isValidUUID).sorted()
    }
}

extension TreeOperations {
    /// Whether the tree at `path` holds anything but directories, not
    /// looking into the relative paths in `skipping`.
    static func holdsFiles(_ path: String, skipping: Set<String>, prefix: String = "") throws -> Bool {
        var st = stat()
        guard lstat(path, &st) == 0 else {
            if errno == ENOENT { return false }
            throw SystemError("lstat", path: path, errno: errno)
        }
        guard st.st_mode & S_IFMT == S_IFDIR else { return true }
        for name in try FileSystem.directoryEntries(path) {
            let relative = prefix.isEmpty ? name : prefix + "/" + name
            if skipping.contains(relative) { continue }
            if try holdsFiles(path + "/" + name, skipping: skipping, prefix: relative) { return true }
        }
        return false
    }
}
