import AppHomeSystem
import Containers
import Preferences
import PropertyList

/// The synced key-value stores as a ``PreferenceStore``, for `defaults
/// --synced`: a domain is a store identifier, and every verb of
/// `defaults` reads and writes it with the usual typed values.
///
/// Only a store that an installed app's signature grants can be read or
/// written (never an ordinary domain); the values of a store no app grants
/// are kept on this machine, for a later install, but not shown.
public struct SyncedPreferenceStore: PreferenceStore {
    public let sync: KeyValueSync

    public init(root: String) { sync = KeyValueSync(root: root) }

    func store(_ domain: Domain) throws(PreferencesError) -> StoreIdentifier {
        do { return try StoreIdentifier(domain.description) } catch { throw .service(error.description) }
    }

    public func read(_ domain: Domain, scope: HostScope) throws(PreferencesError) -> [PlistKey: PlistValue]? {
        guard scope == .anyHost else { throw .service("a key-value store has no per-host values (no -currentHost or -host)") }
        let id = try store(domain)
        try granted(id, ContainerRegistry.readOrEmpty(root: sync.root), "nothing was read")
        let values: [PlistKey: PlistValue]
        do { values = try sync.read(id) } catch { throw .service("\(error)") }
        return values.isEmpty ? nil : values
    }

    /// Refuses a store that no installed app's signature grants.
    private func granted(_ id: StoreIdentifier, _ registry: Registry, _ outcome: String) throws(PreferencesError) {
        guard registry.sortedEntries.contains(where: { $0.ubiquityKeyValueStore == id.rawValue }) else {
            throw .service("no installed app's signature grants the key-value store \(id) "
                           + "(com.apple.developer.ubiquity-kvstore-identifier); \(outcome)")
        }
    }

    public func commit(_ domain: Domain, scope: HostScope, options: WriteOptions,
                       _ change: (inout [PlistKey: PlistValue]) throws -> Void) throws -> [WriteNote] {
        guard scope == .anyHost else { throw PreferencesError.service("a key-value store has no per-host values (no -currentHost or -host)") }
        let id = try store(domain)
        let registry = ContainerRegistry.readOrEmpty(root: sync.root)
        try granted(id, registry, "nothing was written")
        try sync.commit(id, registry: registry, change)
        return []
    }

    public func domainNames() throws(PreferencesError) -> [String] { sync.knownStores().map(\.rawValue) }

    public func location(of domain: Domain, scope: HostScope) throws(PreferencesError) -> String {
        "key-value store \(try store(domain).rawValue)"
    }

    public func hostIdentifier() throws(PreferencesError) -> String {
        do { return try sync.status().device } catch { throw .service("\(error)") }
    }
}
