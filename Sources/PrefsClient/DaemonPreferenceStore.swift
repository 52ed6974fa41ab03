import AppHomeSystem
import Preferences
import PrefsProtocol
import PropertyList
import Synchronization

/// A ``PreferenceStore`` served by prefsd over its socket.
///
/// It keeps the store's contract: ``update(_:scope:_:)`` runs `change` on
/// the current contents and commits the result atomically. It does so
/// optimistically: it reads the domain, runs `change`, and sends only the
/// keys that changed, each with the value it had when read; if another
/// writer changed one of those keys meanwhile, prefsd refuses the batch and
/// the update runs again on fresh contents. Updates of distinct keys never
/// conflict, so concurrent writers all succeed.
public final class DaemonPreferenceStore: PreferenceStore {
    private let connection: Mutex<PrefsConnection>
    /// The socket it talks to.
    public let socketPath: String

    /// Attempts before an update that keeps conflicting gives up.
    static let maximumAttempts = 1000

    public init(connection: sending PrefsConnection) {
        self.socketPath = connection.socketPath
        self.connection = Mutex(connection)
    }

    func call(_ request: Request) throws(PrefsClientError) -> [String: PlistValue] {
        try connection.withLock { c throws(PrefsClientError) in try c.call(request) }
    }

    private func preferencesCall(_ request: Request, domain: Domain? = nil) throws(PreferencesError) -> [String: PlistValue] {
        do { return try call(request) } catch {
            if case .encoding(let e) = error, let domain { throw .encoding(domain, e) }
            throw .service(error.description)
        }
    }

    public func read(_ domain: Domain, scope: HostScope) throws(PreferencesError) -> [String: PlistValue]? {
        try preferencesCall(.read(DomainAddress(domain, scope: scope), key: nil))["contents"]?.dictionaryValue
    }

    public func update(_ domain: Domain, scope: HostScope, _ change: (inout [String: PlistValue]) throws -> Void) throws {
        let address = DomainAddress(domain, scope: scope)
        for _ in 0..<Self.maximumAttempts {
            let base = try preferencesCall(.read(address, key: nil))["contents"]?.dictionaryValue ?? [:]
            var contents = base
            try change(&contents)
            if contents == base { return }
            var set = ChangeSet()
            for (k, v) in contents where base[k] != v {
                set.set[k] = v
                set.expected[k] = .some(base[k])
            }
            for (k, v) in base where contents[k] == nil {
                set.remove.append(k)
                set.expected[k] = .some(v)
            }
            do {
                _ = try call(.batch(address, set))
                return
            } catch {
                if case .remote(let e) = error, e.code == ErrorCode.conflict.rawValue { continue }
                if case .encoding(let e) = error { throw PreferencesError.encoding(domain, e) }
                throw PreferencesError.service(error.description)
            }
        }
        throw PreferencesError.service("the domain \(domain) kept changing; nothing was written")
    }

    public func domainNames() throws(PreferencesError) -> [String] {
        guard case .array(let items)? = try preferencesCall(.listDomains)["domains"] else { return [] }
        return items.compactMap { if case .string(let s) = $0 { return s }; return nil }
    }

    public func location(of domain: Domain, scope: HostScope) throws(PreferencesError) -> String {
        guard case .string(let p)? = try preferencesCall(.location(DomainAddress(domain, scope: scope)))["path"] else { return "" }
        return p
    }

    public func hostIdentifier() throws(PreferencesError) -> String {
        guard case .string(let h)? = try preferencesCall(.hostIdentifier)["hostIdentifier"] else { return "" }
        return h
    }
}
