import AppHomeSystem
import PropertyList
import Synchronization

/// A store that keeps domains in memory, for tests and for callers that
/// want a scratch store. It follows the same contract as
/// ``FilePreferenceStore``.
public final class InMemoryPreferenceStore: PreferenceStore {
    private struct Slot: Hashable { var domain: Domain; var scope: HostScope }
    private let domains = Mutex<[Slot: [PlistKey: PlistValue]]>([:])
    private let host: String
    private let policy: (any WritePolicy)?

    public init(hostIdentifier: String = "00000000-0000-4000-8000-000000000000", policy: (any WritePolicy)? = nil) {
        self.host = hostIdentifier
        self.policy = policy
    }

    public func read(_ domain: Domain, scope: HostScope) throws(PreferencesError) -> [PlistKey: PlistValue]? {
        domains.withLock { $0[Slot(domain: domain, scope: scope)] }
    }

    public func commit(_ domain: Domain, scope: HostScope, options: WriteOptions,
                       _ change: (inout [PlistKey: PlistValue]) throws -> Void) throws -> [WriteNote] {
        try domains.withLock { all in
            let slot = Slot(domain: domain, scope: scope)
            let old = all[slot] ?? [:]
            var contents = old
            try change(&contents)
            if PlistValue.dictionary(contents).depth > PlistValue.maximumDepth {
                throw PreferencesError.encoding(domain, .tooDeep(limit: PlistValue.maximumDepth))
            }
            let notes = try policy?.check(domain, old: old, new: contents, options: options) ?? []
            all[slot] = contents.isEmpty ? nil : contents
            return notes
        }
    }

    public func domainNames() throws(PreferencesError) -> [String] {
        domains.withLock { all in
            all.keys.compactMap { slot -> String? in
                if case .named(let n) = slot.domain, slot.scope == .anyHost { return n }
                return nil
            }.sorted()
        }
    }

    public func location(of domain: Domain, scope: HostScope) throws(PreferencesError) -> String {
        "memory:\(domain)"
    }

    public func hostIdentifier() throws(PreferencesError) -> String { host }
}
