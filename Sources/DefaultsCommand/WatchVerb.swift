import CommandSupport
import Preferences
import PrefsClient
import PrefsProtocol
import PropertyList

extension DefaultsCommand {
    /// `watch D [K]`: prints each change of the domain (or of one key) as
    /// it happens, one line each, until interrupted.
    ///
    /// Needs prefsd: changes are pushed by the service, which sees every
    /// writer (itself, and direct file edits through inotify). Without it
    /// the command fails with a message that says how to start it.
    static func watch(_ args: [String], root: String, options: Options, environment: DefaultsEnvironment, console: Console) throws -> Int32 {
        guard let first = args.first else { throw CommandFailure.usage("watch needs a domain") }
        if args.count > 2 { throw unexpected(args[2]) }
        let domain = try Domain(argument: first)
        let key = args.count == 2 ? args[1] : nil
        var settings = try PrefsdSettings(variables: environment.prefsdVariables)
        if settings.mode == .off {
            throw CommandFailure.failure("watch needs prefsd, and APPHOME_PREFSD is off")
        }
        settings.mode = .require
        let connection: PrefsConnection
        do {
            guard let c = try settings.connect(root: root) else { throw CommandFailure.failure("watch needs prefsd") }
            connection = c
        } catch let error as PrefsClientError {
            throw CommandFailure.failure("watch needs prefsd: \(error.description) (start it with `prefsd &` or `systemctl --user start prefsd.socket`)")
        }
        do {
            try connection.watch(DomainAddress(domain, scope: options.scope)) { change in
                for line in lines(for: change, key: key) { console.out(line + "\n") }
                console.flushOutput()
                return true
            }
        } catch {
            throw CommandFailure.failure("stopped watching \(domain): \(error.description)")
        }
        return 0
    }

    /// The lines `watch` prints for a change: `key = value` for each new or
    /// changed key and `key deleted` for each removed key, in key order.
    static func lines(for change: DomainChange, key: String?) -> [String] {
        var out: [(String, String)] = []
        for (k, v) in change.set where key == nil || key == k {
            out.append((k, "\(k) = \(OldStylePrinter.describe(v))"))
        }
        for k in change.removed where key == nil || key == k { out.append((k, "\(k) deleted")) }
        return out.sorted { $0.0 < $1.0 }.map(\.1)
    }
}
