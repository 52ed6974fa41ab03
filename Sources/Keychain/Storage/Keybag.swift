import Synchronization

/// The open class keys of a long-running process (prefsd), as iOS keeps
/// them in its keybag while the device is unlocked: keychain calls made
/// through it need no Secret Service round trip each.
///
/// - The after-first-unlock keys (KEK, `CK[afterFirstUnlock…]`) are kept
///   from the first unlock until the process ends (reboot) or
///   ``forgetAll()`` (`security lock-keychain`).
/// - The device root key, which opens the `whenUnlocked…` classes, is kept
///   only while the store holding it is unlocked: the process watching the
///   Secret Service calls ``storeLocked()`` the moment the collection locks,
///   and calls made after that ask the store again (and find it locked).
///
/// Only a Secret Service keychain's keys are kept: a key file costs a file
/// read, and a passphrase keychain's session already lives in the kernel's
/// user keyring, where `lock-keychain` drops it.
///
/// Keys are ``SecureBytes`` (locked, wiped memory); what comes out is
/// checked against the keychain's device record like the kernel's bundle.
public final class Keybag: Sendable {
    private struct Entry {
        var bundle: SecureBytes?
        var rootKey: SecureBytes?
    }
    private struct State {
        var entries: [String: Entry] = [:]
        /// Bumped by every lock: a root key fetched before a lock that
        /// reports after it is not kept.
        var generation = 0
        /// Whether the store was last seen locked (the watcher said so).
        var locked = false
        /// Whether a watcher reports locks (without one, nothing is taken
        /// as known: every call that needs the root key asks the store).
        var watched = false
    }
    private let state = Mutex(State())

    public init() {}

    /// The generation to pass to ``remember(record:rootKey:generation:)``,
    /// read before asking the store for the key.
    var generation: Int { state.withLock { $0.generation } }

    /// Whether the watcher last saw the store locked (then the device root
    /// key is not asked for: no round trip to learn what is known).
    public var storeIsLocked: Bool { state.withLock { $0.locked } }

    /// The keys kept for `record`: every class with the device root key,
    /// else the after-first-unlock ones, else `nil`.
    func keys(for record: DeviceRecord, loadRoot: @escaping () throws(KeychainError) -> SecureBytes) -> ClassKeys? {
        let entry = state.withLock { $0.entries[record.deviceID] }
        guard let entry else { return nil }
        if let root = entry.rootKey, DeviceKey.checks(record, root) {
            return ClassKeys(record: record, rootKey: root, protected: true)
        }
        if let bundle = entry.bundle {
            return ClassKeys(record: record, bundle: bundle, loadRoot: loadRoot)
        }
        return nil
    }

    /// Keeps the keys `rootKey` opens (the device root key just fetched
    /// from an unlocked store), unless the store locked since `generation`.
    func remember(record: DeviceRecord, rootKey: SecureBytes, generation: Int) {
        let keys = ClassKeys(record: record, rootKey: rootKey, protected: true)
        let bundle = keys.afterFirstUnlockBundle()
        state.withLock { s in
            var e = s.entries[record.deviceID] ?? Entry()
            if bundle != nil { e.bundle = bundle }
            if s.generation == generation {
                e.rootKey = rootKey
                s.locked = false
            }
            s.entries[record.deviceID] = e
        }
    }

    /// Keeps the after-first-unlock bundle read from the kernel.
    func remember(record: DeviceRecord, bundle: SecureBytes) {
        state.withLock { s in
            var e = s.entries[record.deviceID] ?? Entry()
            e.bundle = bundle
            s.entries[record.deviceID] = e
        }
    }

    /// The store holding the device root key locked: drops every root key
    /// (the `whenUnlocked…` classes close now); the after-first-unlock keys stay.
    public func storeLocked() {
        state.withLock { s in
            s.generation += 1
            s.locked = true
            for id in s.entries.keys { s.entries[id]?.rootKey = nil }
        }
    }

    /// The store may have unlocked: the next call that needs the device
    /// root key asks the store again.
    public func storeMayHaveUnlocked() {
        state.withLock { $0.locked = false }
    }

    /// A collection changed in a way that may be a lock: the root keys are
    /// dropped, and the next call that needs one asks the store.
    public func storeChanged() {
        state.withLock { s in
            s.generation += 1
            s.locked = false
            for id in s.entries.keys { s.entries[id]?.rootKey = nil }
        }
    }

    /// A watcher now reports the store's locks and unlocks.
    public func watcherStarted() {
        state.withLock { $0.watched = true }
    }

    /// The store answered "locked": with a watcher, later calls take it as
    /// known until it reports an unlock.
    func storeAnsweredLocked() {
        state.withLock { s in if s.watched { s.locked = true } }
    }

    /// Drops every key, as a reboot does (`security lock-keychain`).
    public func forgetAll() {
        state.withLock { s in
            s.generation += 1
            s.entries.removeAll()
        }
    }

    /// A number that changes with every lock, every change that may be a
    /// lock and ``forgetAll()``, while a watcher reports them; `nil` without
    /// a watcher (then a lock may go unseen). What a cache of secrets read
    /// through these keys compares to know that no class closed since.
    public var epoch: Int? { state.withLock { $0.watched ? $0.generation : nil } }

    /// Whether no key of any class is held now (after ``forgetAll()``, or
    /// before the first call).
    public var isEmpty: Bool { state.withLock { $0.entries.values.allSatisfy { $0.rootKey == nil && $0.bundle == nil } } }

    /// Whether any device root key is held now (for tests and `show-keychain-info`).
    public var holdsRootKey: Bool { state.withLock { $0.entries.values.contains { $0.rootKey != nil } } }
}
