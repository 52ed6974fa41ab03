import AppHomeSystem
import Preferences
import PrefsProtocol
import PropertyList
import Synchronization

/// A ``PreferenceStore`` served by prefsd over its socket.
///
/// It keeps the store's contract: ``commit(_:scope:options:_:)`` runs `change` on
/// the current contents and commits the result atomically. It does so
/// optimistically: it reads the domain, runs `change`, and sends only the
/// keys that changed, each with the value it had when read; if another
/// writer changed one of those keys meanwhile, prefsd refuses the batch and
/// the update runs again on fresh contents. Updates of distinct keys never
/// conflict, so concurrent writers all succeed.
///
/// prefsd commits the batch through the one commit path with the service's
/// write policy (the domains' settings schemas), so a refused value comes
/// back as ``PreferencesError/policyViolation(_:)``, whatever the client.
public final class DaemonPreferenceStore: PreferenceStore {
    private let connection: Mutex<PrefsConnection>
    /// The socket it talks to.
    public let socketPath: String
    /// Rules only this client knows (an explicit `--settings-bundle`),
    /// checked before the batch is sent; the service checks its own.
    let policy: (any WritePolicy)?

    /// Attempts before an update that keeps conflicting gives up.
    static let maximumAttempts = 1000

    public init(connection: sending PrefsConnection, policy: (any WritePolicy)? = nil) {
        self.socketPath = connection.socketPath
        self.connection = Mutex(connection)
        self.policy = policy
    }

    func call(_ request: Request) throws(PrefsClientError) -> [PlistKey: PlistValue] {
        try connection.withLock { c throws(PrefsClientError) in try c.call(request) }
    }

    private func preferencesCall(_ request: Request, domain: Domain? = nil) throws(PreferencesError) -> [PlistKey: PlistValue] {
        do { return try call(request) } catch {
            if case .encoding(let e) = error, let domain { throw .encoding(domain, e) }
            throw .service(error.description)
        }
    }

    public func read(_ domain: Domain, scope: HostScope) throws(PreferencesError) -> [PlistKey: PlistValue]? {
        try preferencesCall(.read(DomainAddress(domain, scope: scope), key: nil))["contents"]?.dictionaryValue
    }

    public func commit(_ domain: Domain, scope: HostScope, options: WriteOptions,
                       _ change: (inout [PlistKey: PlistValue]) throws -> Void) throws -> [WriteNote] {
        let address = DomainAddress(domain, scope: scope)
        for _ in 0..<Self.maximumAttempts {
            let base = try preferencesCall(.read(address, key: nil))["contents"]?.dictionaryValue ?? [:]
            var contents = base
            try change(&contents)
            // A write of values already stored still asks the policy about them.
            if contents == base && options.checkedKeys.isEmpty { return [] }
            let local = try policy?.check(domain, old: base, new: contents, options: options) ?? []
            do {
                let reply = try call(.batch(address, ChangeSet(from: base, to: contents), options: options))
                return local + Self.notes(reply["notes"])
            } catch {
                if case .remote(let e) = error {
                    if e.code == ErrorCode.conflict.rawValue { continue }
                    if e.code == ErrorCode.policyViolation.rawValue { throw PreferencesError.policyViolation(e.message) }
                }
                if case .encoding(let e) = error { throw PreferencesError.encoding(domain, e) }
                throw PreferencesError.service(error.description)
            }
        }
        throw PreferencesError.service("the domain \(domain) kept changing; nothing was written")
    }

    /// The write notes of a batch's reply (`Schemas/prefsd-protocol.md`).
    static func notes(_ value: PlistValue?) -> [WriteNote] {
        guard case .array(let items)? = value else { return [] }
        return items.compactMap { item -> WriteNote? in
            guard case .dictionary(let d) = item, case .string(let rule)? = d["rule"], case .string(let message)? = d["message"] else { return nil }
            var forced = false
            if case .bool(let f)? = d["forced"] { forced = f }
            return WriteNote(rule: rule, message: message, forced: forced)
        }
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
