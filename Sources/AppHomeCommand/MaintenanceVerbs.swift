import AppHomeSystem
import CommandSupport
import Containers

extension AppHomeCommand {
    /// `doctor [--dry-run]`: 0 when healthy or everything was repaired; 1
    /// when something could not be repaired, or a dry run found problems.
    func doctor(_ args: [String]) throws -> Int32 {
        var dryRun = false
        for arg in args {
            if arg == "--dry-run" { dryRun = true } else if arg.hasPrefix("-") {
                throw CommandFailure.usage("unknown option '\(arg)'")
            } else {
                throw CommandFailure.usage("unexpected argument '\(arg)'")
            }
        }
        let report = try manager.doctor(dryRun: dryRun, environment: environment.configuration.hookVariables, hookTimeout: hookTimeout)
        if report.findings.isEmpty {
            console.out("no problems found\n")
            return 0
        }
        for finding in report.findings {
            console.out("problem: \(finding.problem)\n")
            switch finding.outcome {
            case .repaired: console.out("  repaired: \(finding.repair)\n")
            case .wouldRepair: console.out("  \(finding.repair)\n")
            case .notRepaired: console.out("  not repaired: \(finding.repair)\n")
            }
        }
        reportCleanupWarnings(hooks: report.hooks, participantFailures: report.participantFailures)
        let total = report.findings.count
        let unrepaired = report.findings.filter { $0.outcome == .notRepaired }.count
        if dryRun {
            console.err("apphome: \(total) problem(s) found; nothing changed (dry run)\n")
            return 1
        }
        console.out("\(total) problem(s) found, \(total - unrepaired) repaired\n")
        if unrepaired > 0 {
            console.err("apphome: \(unrepaired) problem(s) could not be repaired\n")
            return 1
        }
        return 0
    }

    /// Before install, update and uninstall: finishes or undoes an
    /// operation a crash interrupted, saying so on stderr, or refuses.
    func finishInterruptedOperation() throws {
        do {
            guard try manager.pendingJournal() != nil else { return }
        } catch {
            throw CommandFailure.failure("\(error); run 'apphome doctor'")
        }
        let report = try manager.finishInterruptedOperation(environment: environment.configuration.hookVariables, hookTimeout: hookTimeout)
        for finding in report.findings { console.err("apphome: note: \(finding.problem); \(finding.repair)\n") }
        reportCleanupWarnings(hooks: report.hooks, participantFailures: report.participantFailures)
        if report.hasUnrepairedProblems {
            throw CommandFailure.failure("an interrupted operation could not be finished or undone; run 'apphome doctor'")
        }
    }

    func reportCleanupWarnings(hooks: [HookResult], participantFailures: [String]) {
        for failure in participantFailures { console.err("apphome: warning: \(failure)\n") }
        for hook in hooks {
            if let failure = hook.failureDescription { console.err("apphome: warning: \(failure)\n") }
        }
    }

    /// `purge-caches [--target-free SIZE]`: SIZE in bytes or with a unit (`500M`, ``ByteCount``).
    func purgeCaches(_ args: [String]) throws -> Int32 {
        var target: UInt64?
        var rest = args[...]
        while let arg = rest.popFirst() {
            if arg == "--target-free" || arg.hasPrefix("--target-free=") {
                let text = arg == "--target-free" ? rest.popFirst() : String(arg.dropFirst(14))
                guard let text, !text.isEmpty else { throw CommandFailure.usage("option --target-free needs a size") }
                guard let bytes = ByteCount.parse(text) else {
                    throw CommandFailure.usage("option --target-free needs a size (bytes, or a number with K, M, G or T: 500M), not '\(text)'")
                }
                target = bytes
            } else if arg.hasPrefix("-") {
                throw CommandFailure.usage("unknown option '\(arg)'")
            } else {
                throw CommandFailure.usage("unexpected argument '\(arg)'")
            }
        }
        let report = try manager.purgeCaches(targetFree: target, freeBytes: freeBytes)
        var refused = 0
        for r in report.results {
            if r.refusedLink {
                refused += 1
                console.out("skipped \(r.owner): \(r.directory) is a symbolic link, not a directory; its target was left alone\n")
            } else if r.skippedRunning {
                if case .group = r.owner {
                    console.out("skipped \(r.owner): a member app is running\n")
                } else {
                    console.out("skipped \(r.owner): it is running\n")
                }
            } else {
                console.out("purged \(r.owner): \(ByteCount.human(UInt64(r.bytesFreed))) freed\n")
            }
        }
        let freed = report.results.reduce(0) { $0 + $1.bytesFreed }
        console.out("\(ByteCount.human(UInt64(freed))) freed in total; \(ByteCount.human(UInt64(report.freeAfter))) free\n")
        if let target, !report.targetReached {
            console.err("apphome: only \(ByteCount.human(UInt64(report.freeAfter))) free after purging every cache it could; "
                        + "the target was \(ByteCount.human(target))\n")
            return 1
        }
        if refused > 0 { throw Self.linkRefusal(refused) }
        return 0
    }

    /// The failure of `clean-tmp` or `purge-caches` when `count` directories
    /// were symbolic links and left alone.
    static func linkRefusal(_ count: Int) -> CommandFailure {
        .failure("\(count) \(count == 1 ? "directory is a symbolic link" : "directories are symbolic links") and left alone; "
                 + "run 'apphome doctor' to replace \(count == 1 ? "it" : "them") with an empty directory")
    }

    /// `clean-tmp`.
    func cleanTemporaryDirectories(_ args: [String]) throws {
        _ = try operands(args, [])
        var refused = 0
        for r in try manager.cleanTemporaryDirectories() {
            if r.refusedLink {
                refused += 1
                console.out("skipped \(r.owner): \(r.directory) is a symbolic link, not a directory; its target was left alone\n")
            } else if r.skippedRunning {
                console.out("skipped \(r.owner): it is running\n")
            } else {
                console.out("cleaned \(r.owner): \(ByteCount.human(UInt64(r.bytesFreed))) freed\n")
            }
        }
        if refused > 0 { throw Self.linkRefusal(refused) }
    }
}
