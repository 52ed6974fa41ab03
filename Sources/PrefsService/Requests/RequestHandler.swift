#if canImport(Glibc)
import Glibc
#endif
import AppHomeSystem
import Preferences
import PrefsProtocol
import PropertyList

/// What each request does: reads from the cache, writes to the queue,
/// subscriptions to the table, uninstalls and keychain calls to the job
/// runner.
extension PrefsServer {
    func handle(_ request: Request, id: Int, from c: ClientConnection) {
        func reply(_ r: Result<[PlistKey: PlistValue], RemoteError>) { send(c, .response(id: id, r)) }
        if let why = c.confinement?.refusal(for: request) {
            reply(.failure(RemoteError(.notAuthorized, "prefsd: " + why)))
            return
        }
        do throws(PreferencesError) {
            switch request {
            case .hello(let root):
                if Self.normalized(root) != Self.normalized(configuration.root) {
                    reply(.failure(RemoteError(.wrongRoot, "prefsd serves the root \(configuration.root), not \(root)")))
                } else {
                    reply(.success(["root": .string(configuration.root), "pid": .integer(Int128(getpid())), "version": .integer(Int128(Frame.version))]))
                }
            case .status:
                reply(.success(status()))
            case .read(let address, let key):
                counters.reads += 1
                let contents = try cache.load(address)
                if let key {
                    reply(.success(contents?[key].map { ["value": $0] } ?? [:]))
                } else {
                    reply(.success(contents.map { ["contents": .dictionary($0)] } ?? [:]))
                }
            case .write(let address, let set, let options):
                try queue(ChangeSet(set: set), options: options, for: address, id: id, from: c)
            case .delete(let address, let keys):
                try queue(keys.map { ChangeSet(remove: $0.map { PlistKey($0) }) } ?? ChangeSet(removeAll: true), options: WriteOptions(), for: address, id: id, from: c)
            case .batch(let address, let change, let options):
                try queue(change, options: options, for: address, id: id, from: c)
            case .listDomains:
                cache.refreshResolverIfNeeded()
                let names = try cache.resolver.domainNames()
                reply(.success(["domains": .array((c.confinement?.visible(names) ?? names).map { .string($0) })]))
            case .subscribe(let address):
                let path = try cache.path(for: address)
                let contents = try cache.load(address)
                let sub = subscriptions.add(clientID: c.id, address: address, path: path)
                c.subscriptions[sub] = path
                var result: [PlistKey: PlistValue] = ["subscription": .integer(Int128(sub))]
                if let contents { result["contents"] = .dictionary(contents) }
                reply(.success(result))
            case .unsubscribe(let sub):
                guard let path = c.subscriptions.removeValue(forKey: sub) else {
                    reply(.failure(RemoteError(.noSuchSubscription, "no subscription \(sub) on this connection")))
                    return
                }
                subscriptions.remove(sub, at: path)
                reply(.success([:]))
            case .uninstall(let bundle, let hookEnvironment):
                jobs.uninstall(bundle, hookEnvironment: hookEnvironment, clientID: c.id, requestID: id)
            case .hostIdentifier:
                reply(.success(["hostIdentifier": .string(try cache.hostIdentifier())]))
            case .location(let address):
                reply(.success(["path": .string(try cache.path(for: address))]))
            case .keychainFind(let caller, _), .keychainAdd(let caller, _, _), .keychainUpdate(let caller, _, _, _), .keychainDelete(let caller, _),
                 .keychainLocked(let caller):
                if let result = jobs.keychainNow(request, caller: caller, peerPID: c.peerPID, peerSandbox: c.sandbox) {
                    reply(result)
                    return
                }
                jobs.keychain(request, caller: caller, peerPID: c.peerPID, peerSandbox: c.sandbox, clientID: c.id, requestID: id)
            }
        } catch {
            reply(.failure(RemoteError(.preferences, error.description)))
        }
    }

    private func status() -> [PlistKey: PlistValue] {
        [
            "pid": .integer(Int128(getpid())),
            "root": .string(configuration.root),
            "socket": .string(configuration.socketPath),
            "protocolVersion": .integer(Int128(Frame.version)),
            "uptime": .real(UnixSocket.now() - started),
            "clients": .integer(Int128(clients.count)),
            "cachedDomains": .integer(Int128(cache.validCount)),
            "subscriptions": .integer(Int128(subscriptions.count)),
            "reads": .integer(Int128(counters.reads)),
            "writes": .integer(Int128(counters.writes)),
            "commits": .integer(Int128(counters.commits)),
            "commitsIntoSpares": .integer(Int128(spares.reused)),
            "commitsSwappingNames": .integer(Int128(spares.exchanged)),
            "writeTurns": writeTurns.status,
            "notifications": .integer(Int128(counters.notifications)),
            "durability": .string("write-through, group commit"),
        ]
    }

    static func normalized(_ path: String) -> String {
        if let r = realpath(path, nil) { defer { free(r) }; return String(cString: r) }
        return Paths.trimmingTrailingSlashes(path)
    }
}
