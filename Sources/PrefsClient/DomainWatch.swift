#if canImport(Glibc)
import Glibc
#endif
import AppHomeSystem
import Preferences
import PrefsProtocol
import PropertyList

extension PrefsConnection {
    /// Subscribes to a domain's changes on this connection.
    ///
    /// - Returns: the subscription number and the domain's contents now
    ///   (`nil` when it does not exist).
    public func subscribe(_ address: DomainAddress) throws(PrefsClientError) -> (subscription: Int, contents: [PlistKey: PlistValue]?) {
        let result = try call(.subscribe(address))
        guard case .integer(let n)? = result["subscription"], let sub = Int(exactly: n) else {
            throw .connection("prefsd did not number the subscription")
        }
        return (sub, result["contents"]?.dictionaryValue)
    }

    /// Calls `handler` with each change of `address` as it happens, until
    /// the handler returns `false` or the connection breaks.
    ///
    /// - Parameter initial: called once with the contents at subscription time.
    public func watch(_ address: DomainAddress, initial: ([PlistKey: PlistValue]?) -> Void = { _ in },
                      handler: (DomainChange) -> Bool) throws(PrefsClientError) {
        let (sub, contents) = try subscribe(address)
        initial(contents)
        while true {
            let change = try nextChange()
            if change.subscription == sub && !handler(change) { return }
        }
    }

    /// Unblocks a ``nextChange()`` waiting on another thread: the
    /// connection is shut down and cannot be used again.
    public func shutDown() { shutdown(fd, Int32(SHUT_RDWR)) }
}

/// Changes of one domain as an `AsyncSequence`.
///
/// Each element is a ``DomainChange``; the stream ends with an error when
/// the connection to prefsd breaks, and stops the subscription when the
/// consumer cancels.
public enum DomainChanges {
    /// A stream of the changes to `address`, served by the prefsd at
    /// `socketPath` for `root`.
    ///
    /// - Throws: ``PrefsClientError`` when prefsd does not answer.
    public static func stream(socketPath: String, root: String, address: DomainAddress) throws(PrefsClientError) -> AsyncThrowingStream<DomainChange, Error> {
        let connection = try PrefsConnection(socketPath: socketPath, root: root, timeout: 30)
        let (sub, _) = try connection.subscribe(address)
        let box = UncheckedBox(connection)
        return AsyncThrowingStream { continuation in
            continuation.onTermination = { _ in box.value.shutDown() }
            let started = DetachedThread.start {
                do {
                    while true {
                        let change = try box.value.nextChange()
                        if change.subscription == sub { continuation.yield(change) }
                    }
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            if !started { continuation.finish(throwing: PrefsClientError.connection("no thread to read notifications on")) }
        }
    }
}

/// Hands a connection to the one thread that reads it; `shutDown` from
/// another thread only calls `shutdown(2)`, which is thread-safe.
final class UncheckedBox: @unchecked Sendable {
    let value: PrefsConnection
    init(_ value: PrefsConnection) { self.value = value }
}
