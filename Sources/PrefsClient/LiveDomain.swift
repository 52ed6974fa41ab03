import AppHomeSystem
import Preferences
import PrefsProtocol
import PropertyList

/// A domain's contents held in this process and kept current by prefsd's
/// change notifications, so that a read costs no round trip: the model of
/// dconf's clients, which read their memory-mapped database.
///
/// A read applies every notification that has already arrived (one
/// non-blocking `recv`), so it sees each write acknowledged before it began,
/// this connection's own included: prefsd queues a change's notification
/// before the writer's acknowledgement. Owns its connection; not for use
/// from two threads at once.
public final class LiveDomain {
    private let connection: PrefsConnection
    private let subscription: Int
    /// The domain followed.
    public let address: DomainAddress
    private var current: [PlistKey: PlistValue]

    /// Subscribes to `address` on `connection` and loads its contents.
    public init(connection: PrefsConnection, address: DomainAddress) throws(PrefsClientError) {
        self.connection = connection
        self.address = address
        let (sub, contents) = try connection.subscribe(address)
        subscription = sub
        current = contents ?? [:]
    }

    /// The domain's contents now (empty when it does not exist).
    public func contents() throws(PrefsClientError) -> [PlistKey: PlistValue] {
        for change in try connection.receivedChanges() where change.subscription == subscription {
            for key in change.removed { current[key] = nil }
            for (key, value) in change.set { current[key] = value }
        }
        return current
    }

    /// The value of `key` now, or `nil`.
    public func value(forKey key: String) throws(PrefsClientError) -> PlistValue? {
        try contents()[key]
    }

    /// Sets keys through prefsd; returns once they are on disk.
    public func set(_ values: [PlistKey: PlistValue]) throws(PrefsClientError) {
        _ = try connection.call(.write(address, set: values))
    }
}
