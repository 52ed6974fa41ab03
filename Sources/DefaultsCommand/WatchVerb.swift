import AppHomeSystem
import CommandSupport
import Containers
import Preferences
import PrefsClient
import PrefsProtocol
import PropertyList
import SyncedPreferences

extension DefaultsCommand {
    /// `watch D [K]`: prints each change of the domain (or of one key) as
    /// it happens, one line each, until interrupted.
    ///
    /// With prefsd, changes are pushed by the service, which sees every
    /// writer (itself, and direct file edits through inotify). Without it
    /// (`APPHOME_PREFSD=off`, or `auto` and no service answering) the
    /// command watches the domain's file itself (``FileDomainWatch``) and
    /// prints the same lines.
    static func watch(_ args: [String], root: String, options: Options, configuration: Configuration, console: Console) throws -> Int32 {
        guard let first = args.first else { throw CommandFailure.usage("watch needs a domain") }
        if args.count > 2 { throw unexpected(args[2]) }
        let domain = try Domain(argument: first)
        let key = args.count == 2 ? args[1] : nil
        let address = DomainAddress(domain, scope: options.scope)
        let print = { (change: DomainChange) -> Bool in
            for line in lines(for: change, key: key) { console.out(line + "\n") }
            console.flushOutput()
            return true
        }
        if options.synced { return try watchSynced(domain, key: key, root: root, console: console) }
        let settings = try PrefsdSettings(configuration: configuration)
        guard let connection = try settings.connect(root: root) else {
            // Installs and uninstalls move an app's domain: follow the registry's directory.
            try FileDomainWatch(makeStore: { fileStore(root: root) }, address: address,
                                follow: ContainerLayout(root: root).registryPath).watch(handler: print)
            return 0
        }
        do {
            try connection.watch(address, handler: print)
        } catch {
            throw CommandFailure.failure("stopped watching \(domain): \(error.description)")
        }
        return 0
    }

    /// The lines `watch` prints for a change: `key = value` for each new or
    /// changed key and `key deleted` for each removed key, in key order.
    static func lines(for change: DomainChange, key: String?) -> [String] {
        // Keys compare by their exact scalars (``PlistKey``), never as `String`s.
        let wanted = key.map { PlistKey($0) }
        var out: [(PlistKey, String)] = []
        for (k, v) in change.set where wanted == nil || wanted == k {
            out.append((k, "\(k) = \(OldStylePrinter.describe(v))"))
        }
        for name in change.removed where wanted == nil || wanted == PlistKey(name) { out.append((PlistKey(name), "\(name) deleted")) }
        return out.sorted { $0.0 < $1.0 }.map(\.1)
    }

    /// `--synced watch STORE [KEY]`: prints each notice of a synced store as
    /// it arrives, `[reason] key = value` or `[reason] key deleted` per
    /// changed key (`[quota violation]` alone for a refused write), whoever
    /// made it: prefsd, `apphome sync now`, or the Swift API.
    static func watchSynced(_ domain: Domain, key: String?, root: String, console: Console) throws -> Int32 {
        let sync = KeyValueSync(root: root)
        let store: StoreIdentifier
        do { store = try StoreIdentifier(domain.description) } catch { throw CommandFailure.failure(error.description) }
        let observer: KeyValueObserver
        do { observer = try KeyValueObserver(sync: sync, store: store) } catch { throw CommandFailure.failure(error.description) }
        while true {
            let changes = observer.next(timeout: 3600)
            guard !changes.isEmpty else { continue }
            let values = (try? sync.read(store)) ?? [:]
            for change in changes {
                if change.keys.isEmpty { console.out("[\(change.reason)]\n") }
                for k in change.keys.sorted(by: { PlistKey($0) < PlistKey($1) }) where key == nil || PlistKey(key!) == PlistKey(k) {
                    if let v = values[PlistKey(k)] {
                        console.out("[\(change.reason)] \(k) = \(OldStylePrinter.describe(v))\n")
                    } else {
                        console.out("[\(change.reason)] \(k) deleted\n")
                    }
                }
            }
            console.flushOutput()
        }
    }
}
