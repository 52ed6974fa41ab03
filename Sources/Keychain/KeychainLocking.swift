import Preferences

/// Whether the keychain's `whenUnlocked…` classes are open.
public enum KeychainLockState: String, Sendable {
    case locked
    case unlocked
}

/// What `security show-keychain-info` reports.
public struct KeychainLockInfo: Sendable, Equatable {
    /// The state of the store holding the device root key.
    public var state: KeychainLockState
    /// Where the device root key is.
    public var store: DeviceKeyStoreKind
    /// Whether `afterFirstUnlock…` items are open (the store is unlocked,
    /// or was unlocked once since boot).
    public var afterFirstUnlockOpen: Bool
}

extension Keychain {
    /// Moves a format-1 keychain to class keys (format 2): every group file's
    /// item keys are wrapped again under their class keys, then device.plist
    /// gains the check values of the kernel's keys. `keys` hold the device
    /// root key (a format-1 keychain is never opened from the kernel cache).
    /// A crash half-way leaves device.plist at format 1, so the next call
    /// finishes the move; a group file already at format 2 is read as such.
    func migrateToClassKeys(_ keys: ClassKeys) throws(KeychainError) -> ClassKeys {
        try withLock { () throws(KeychainError) -> ClassKeys in
            guard let current = try readRecord() else {
                throw .keyStoreUnavailable("\(recordPath) disappeared while the keychain was being moved to format \(DeviceRecord.formatVersion)")
            }
            if current.version >= DeviceRecord.formatVersion {
                return try DeviceKey.open(current, directory: directory, root: root, policy: policy)
            }
            for group in try storedGroups() {
                guard let file = try openGroup(group, device: keys) else { continue }
                try file.upgrade()
                try file.write()
            }
            var upgraded = current
            upgraded.version = DeviceRecord.formatVersion
            upgraded.classChecks = keys.checkBoxes()
            let bytes = try upgraded.encoded()
            do throws(SystemError) { try FileSystem.writeAtomically(bytes, to: recordPath) } catch { throw .system(error) }
            keys.record = upgraded
            DeviceKey.keepAfterFirstUnlockKeys(keys, policy: policy)
            return keys
        }
    }

    /// Whether the keychain is locked, where its key is, and whether the
    /// after-first-unlock classes are open. Never prompts.
    ///
    /// - Throws: ``KeychainError/itemNotFound`` before the first write (no keychain yet).
    public func lockInfo() throws(KeychainError) -> KeychainLockInfo {
        guard let record = try readRecord() else { throw .itemNotFound }
        switch record.store {
        case .file:
            return KeychainLockInfo(state: .unlocked, store: .file, afterFirstUnlockOpen: true)
        case .secretService:
            guard let service = policy.secretStore else {
                throw .keyStoreUnavailable("the keychain records its key in the Secret Service, which cannot be reached (no session bus)")
            }
            let state: SecretLookup
            do { state = try service.lookupState(schema: DeviceKey.schema, attributes: serviceAttributes(record)) } catch {
                throw .keyStoreUnavailable("the keychain records its key in the Secret Service, which cannot be reached (\(error))")
            }
            switch state {
            case .missing:
                throw .keyStoreUnavailable("the keychain records its key in the Secret Service, but the item for device \(record.deviceID) is gone")
            case .found:
                return KeychainLockInfo(state: .unlocked, store: .secretService, afterFirstUnlockOpen: true)
            case .locked:
                let cached = policy.kernelKeys != .off && record.version >= 2
                    && service.cached(DeviceKey.cacheName(record.deviceID)).flatMap { ClassKeys(record: record, bundle: $0, loadRoot: { () throws(KeychainError) -> SecureBytes in throw .itemNotFound }) } != nil
                return KeychainLockInfo(state: .locked, store: .secretService, afterFirstUnlockOpen: cached)
            }
        }
    }

    /// Locks the Secret Service collection holding the device root key
    /// (`org.freedesktop.Secret.Service.Lock`). `whenUnlocked…` items close;
    /// `afterFirstUnlock…` items stay open until reboot, as on iOS.
    ///
    /// - Throws: ``KeychainError/invalidParameter(_:)`` for a keychain whose
    ///   key is in a plain key file (nothing to lock).
    public func lock() throws(KeychainError) {
        let (record, service) = try serviceForLocking()
        try service.lockCollection(schema: DeviceKey.schema, attributes: serviceAttributes(record))
    }

    /// Unlocks the Secret Service collection holding the device root key
    /// (with `password`, the collection's password, no prompt; without, the
    /// service's own prompt), then opens the keychain once, which puts the
    /// after-first-unlock keys in the kernel (and moves a format-1 keychain on).
    public func unlock(password: SecureBytes?) throws(KeychainError) {
        let (record, service) = try serviceForLocking()
        try service.unlockCollection(schema: DeviceKey.schema, attributes: serviceAttributes(record), password: password)
        try call { () throws(KeychainError) in _ = try loadDevice(create: false) }
    }

    /// Drops the after-first-unlock keys from the kernel, as a reboot does:
    /// `afterFirstUnlock…` items close until the next unlock.
    public func forgetAfterFirstUnlockKeys() throws(KeychainError) {
        guard let record = try readRecord() else { return }
        policy.secretStore?.forgetCached(DeviceKey.cacheName(record.deviceID))
    }

    private func serviceAttributes(_ record: DeviceRecord) -> [String: String] {
        DeviceKey.serviceAttributes(root: root, deviceID: record.deviceID)
    }

    private func serviceForLocking() throws(KeychainError) -> (DeviceRecord, any SecretStore) {
        guard let record = try readRecord() else { throw .itemNotFound }
        guard record.store == .secretService else {
            throw .invalidParameter("this keychain keeps its device key in a plain key file, which cannot be locked or unlocked")
        }
        guard let service = policy.secretStore else {
            throw .keyStoreUnavailable("the keychain records its key in the Secret Service, which cannot be reached (no session bus)")
        }
        return (record, service)
    }
}
