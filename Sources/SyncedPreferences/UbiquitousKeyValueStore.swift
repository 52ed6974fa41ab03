import AppHomeSystem
import Containers
import PrefsProtocol
import PropertyList
import Synchronization

/// An app's synced key-value store, in the spirit of
/// `NSUbiquitousKeyValueStore`: small settings that follow the user to
/// every machine where the app is installed.
///
/// The app's signature must grant the store
/// (`com.apple.developer.ubiquity-kvstore-identifier`). Writes are
/// checked against Apple's limits (``KeyValueStoreLimits``) and committed
/// at once (the state, the app home's copy, this device's log); remote
/// changes arrive through prefsd, or ``synchronize()`` when it does not run.
public final class UbiquitousKeyValueStore: @unchecked Sendable {
    public let identifier: StoreIdentifier
    public let sync: KeyValueSync

    /// The store of the installed app `bundleIdentifier` under `root`.
    ///
    /// - Throws: ``SyncError/notEntitled(app:reason:)`` when the app is not
    ///   installed or its signature grants no store.
    public init(root: String, bundleIdentifier: String) throws(SyncError) {
        let registry = ContainerRegistry.readOrEmpty(root: root)
        guard let entry = registry.sortedEntries.first(where: { $0.bundleIdentifier.rawValue == bundleIdentifier }) else {
            throw .notEntitled(app: bundleIdentifier, reason: "no such app is installed")
        }
        guard let store = entry.ubiquityKeyValueStore else {
            throw .notEntitled(app: bundleIdentifier, reason: "its signature grants no com.apple.developer.ubiquity-kvstore-identifier")
        }
        identifier = try StoreIdentifier(store)
        sync = KeyValueSync(root: root)
    }

    /// The store `identifier` (a test, or a tool that already checked the grant).
    public init(sync: KeyValueSync, identifier: StoreIdentifier) {
        self.sync = sync
        self.identifier = identifier
    }

    /// Every key and value.
    public var dictionaryRepresentation: [PlistKey: PlistValue] { (try? sync.read(identifier)) ?? [:] }

    public func object(forKey key: String) -> PlistValue? { dictionaryRepresentation[PlistKey(key)] }
    public func string(forKey key: String) -> String? { if case .string(let s)? = object(forKey: key) { return s }; return nil }
    public func bool(forKey key: String) -> Bool {
        switch object(forKey: key) {
        case .bool(let b)?: return b
        case .integer(let i)?: return i != 0
        default: return false
        }
    }
    public func longLong(forKey key: String) -> Int64 {
        switch object(forKey: key) {
        case .integer(let i)?: return Int64(clamping: i)
        case .real(let d)? where d.isFinite: return Int64(exactly: d.rounded(.towardZero)) ?? 0
        case .bool(let b)?: return b ? 1 : 0
        default: return 0
        }
    }
    public func double(forKey key: String) -> Double {
        switch object(forKey: key) {
        case .real(let d)?: return d
        case .integer(let i)?: return Double(i)
        default: return 0
        }
    }
    public func data(forKey key: String) -> [UInt8]? { if case .data(let d)? = object(forKey: key) { return d }; return nil }
    public func array(forKey key: String) -> [PlistValue]? { if case .array(let a)? = object(forKey: key) { return a }; return nil }
    public func dictionary(forKey key: String) -> [PlistKey: PlistValue]? { if case .dictionary(let d)? = object(forKey: key) { return d }; return nil }

    /// Sets (or, with `nil`, removes) the value of `key`.
    ///
    /// - Throws: ``SyncError/quotaViolation(store:reason:)`` for a write past
    ///   a limit (observers also get a ``KeyValueChangeReason/quotaViolationChange`` notice).
    public func set(_ value: PlistValue?, forKey key: String) throws {
        try sync.commit(identifier) { $0[PlistKey(key)] = value }
    }

    public func removeObject(forKey key: String) throws { try set(nil, forKey: key) }

    /// Merges what the other machines wrote (one pass of the sync folder)
    /// when sync is set up; local writes are already committed.
    ///
    /// - Returns: false when the pass failed.
    @discardableResult
    public func synchronize() -> Bool {
        guard (try? sync.folder()) != nil else { return true }
        return (try? sync.pass()) != nil
    }

    /// Calls `handler` with each notice (reason and changed keys) on a
    /// thread of its own, until the returned observation is cancelled.
    public func observe(_ handler: @escaping @Sendable (KeyValueChange) -> Void) throws -> KeyValueObservation {
        let observer = try KeyValueObserver(sync: sync, store: identifier)
        let observation = KeyValueObservation()
        let box = ObserverBox(observer)
        DetachedThread.start {
            while !observation.isCancelled {
                for change in box.observer.next(timeout: 0.2) where !observation.isCancelled { handler(change) }
            }
        }
        return observation
    }
}

/// Stops an ``UbiquitousKeyValueStore/observe(_:)`` when cancelled.
public final class KeyValueObservation: @unchecked Sendable {
    private let flag = Atomic<Bool>(false)
    public var isCancelled: Bool { flag.load(ordering: .acquiring) }
    public func cancel() { flag.store(true, ordering: .releasing) }
}

private final class ObserverBox: @unchecked Sendable {
    let observer: KeyValueObserver
    init(_ observer: KeyValueObserver) { self.observer = observer }
}
