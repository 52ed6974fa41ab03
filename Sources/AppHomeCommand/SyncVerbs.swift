import AppHomeSystem
import CommandSupport
import Containers
import PropertyList
import SyncedPreferences

extension AppHomeCommand {
    /// `sync setup FOLDER | status | now`: the folder an engine (Syncthing)
    /// replicates between the user's machines, and one merge pass of the
    /// synced key-value stores (prefsd runs passes itself when it serves the root).
    func sync(_ args: [String]) throws -> Int32 {
        guard let sub = args.first else { throw CommandFailure.usage("sync needs setup FOLDER, status or now") }
        let rest = Array(args.dropFirst())
        let engine = KeyValueSync(root: manager.layout.root)
        switch sub {
        case "setup":
            let folder = try operands(rest, ["folder"])[0]
            let config = try wrap { try engine.setUp(folder: folder) }
            console.out("sync folder: \(config.folder ?? folder)\nthis device: \(config.device)\n")
            console.out("share the folder between your machines with your sync engine, then run 'apphome sync now' (prefsd does it by itself)\n")
            return 0
        case "status":
            _ = try operands(rest, [])
            let status = try wrap { try engine.status() }
            console.out("this device: \(status.device)\n")
            console.out("sync folder: \(status.folder ?? "(not set up: apphome sync setup FOLDER)")\n")
            for log in status.logs { console.out("log \(FileNames.escaped(log.name)): \(FileNames.escaped(log.summary))\n") }
            for store in status.stores { console.out("store \(store.store): \(store.keys) key(s), \(store.bytes) bytes\n") }
            return 0
        case "now":
            _ = try operands(rest, [])
            let report = try wrap { try engine.pass(warn: { console.err("apphome: warning: \($0)\n") }) }
            console.out("merged \(report.merged.count) log(s)\n")
            for change in report.changes {
                console.out("\(change.store): \(change.keys.count) key(s) changed (\(change.reason))\n")
            }
            for name in report.removedConflictCopies { console.out("merged and removed the conflict copy \(FileNames.escaped(name))\n") }
            if !report.skipped.isEmpty {
                console.err("apphome: \(report.skipped.count) log(s) skipped; the others were merged\n")
                return 1
            }
            return 0
        default:
            throw CommandFailure.usage("unknown sync verb '\(sub)' (use setup FOLDER, status or now)")
        }
    }

    /// Removes every key of the store `identifier` everywhere (`uninstall --forget-synced`).
    func forgetSynced(_ identifier: String) throws {
        let engine = KeyValueSync(root: manager.layout.root)
        let removed = try wrap { try engine.forget(try StoreIdentifier(identifier)) }
        console.out("forgot the synced key-value store \(identifier): \(removed.count) key(s) removed on every machine\n")
    }

    func wrap<T>(_ body: () throws -> T) throws -> T {
        do { return try body() } catch let error as SyncError { throw CommandFailure.failure(error.description) }
    }
}
