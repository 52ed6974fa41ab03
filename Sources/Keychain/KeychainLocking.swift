import AppHomeSystem

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
            if current.version >= 2 {
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
            let bytes = try upgraded.encoded(kek: keys.kek)
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
        func bundleOpens() -> Bool {
            policy.kernelKeys != .off && record.version >= 2
                && policy.keyCache?.cached(DeviceKey.cacheName(record.deviceID)).flatMap {
                    ClassKeys(record: record, bundle: $0, loadRoot: { () throws(KeychainError) -> SecureBytes in throw .itemNotFound })
                } != nil
        }
        switch record.store {
        case .file:
            return KeychainLockInfo(state: .unlocked, store: .file, afterFirstUnlockOpen: true)
        case .passphraseFile:
            let session = policy.keyCache?.cached(DeviceKey.sessionName(record.deviceID))
            if let session, session.count == Sodium.keyBytes, DeviceKey.checks(record, session) {
                return KeychainLockInfo(state: .unlocked, store: .passphraseFile, afterFirstUnlockOpen: true)
            }
            return KeychainLockInfo(state: .locked, store: .passphraseFile, afterFirstUnlockOpen: bundleOpens())
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
                return KeychainLockInfo(state: .locked, store: .secretService, afterFirstUnlockOpen: bundleOpens())
            }
        }
    }

    /// Locks the keychain: the Secret Service collection holding the device
    /// root key (`org.freedesktop.Secret.Service.Lock`), or a passphrase
    /// keychain's session. `whenUnlocked…` items close; `afterFirstUnlock…`
    /// items stay open until reboot, as on iOS.
    ///
    /// - Throws: ``KeychainError/invalidParameter(_:)`` for a keychain whose
    ///   key is in a plain key file (nothing to lock).
    public func lock() throws(KeychainError) {
        let record = try lockableRecord()
        if record.store == .passphraseFile {
            policy.keyCache?.forgetCached(DeviceKey.sessionName(record.deviceID))
            return
        }
        try secretService().lockCollection(schema: DeviceKey.schema, attributes: serviceAttributes(record))
    }

    /// Unlocks the keychain, then opens it once, which puts the
    /// after-first-unlock keys in the kernel (and moves a format-1 keychain
    /// on). Secret Service: with `password`, the collection's password (no
    /// prompt); without, the service's own prompt. Passphrase key file: the
    /// passphrase (required); the device key then stays in the kernel's user
    /// keyring for the session, until ``lock()``, reboot or logout.
    public func unlock(password: SecureBytes?) throws(KeychainError) {
        let record = try lockableRecord()
        if record.store == .passphraseFile {
            guard let password else { throw .invalidParameter("unlocking this keychain needs its passphrase") }
            guard let cache = policy.keyCache, let seconds = policy.kernelSeconds else {
                throw .invalidParameter("a passphrase keychain stays unlocked in the kernel's user keyring, which is switched off (APPHOME_KEYCHAIN_KEY_CACHE=0)")
            }
            let key = try PassphraseKeyFile.open(directory: directory, deviceID: record.deviceID, passphrase: password,
                                                 belowFloorForTesting: passphraseCostForTesting != nil)
            guard DeviceKey.checks(record, key) else { throw .wrongKey("the passphrase key file holds another keychain's key") }
            cache.cache(DeviceKey.sessionName(record.deviceID), key, seconds: seconds)
            DeviceKey.keepAfterFirstUnlockKeys(ClassKeys(record: record, rootKey: key, protected: true), policy: policy)
            return
        }
        try secretService().unlockCollection(schema: DeviceKey.schema, attributes: serviceAttributes(record), password: password)
        try call { () throws(KeychainError) in _ = try loadDevice(create: false) }
    }

    /// Makes a new keychain whose device root key is sealed under an Argon2id
    /// key from `passphrase` (`device.pkey`), and unlocks it for the session.
    /// For machines without a Secret Service: its classes then mean what
    /// they mean there, `security unlock-keychain` playing the service's part.
    ///
    /// - Throws: ``KeychainError/duplicateItem`` when the root has a keychain already.
    public func createProtected(passphrase: SecureBytes) throws(KeychainError) {
        guard policy.keyCache != nil, policy.kernelSeconds != nil else {
            throw .invalidParameter("a passphrase keychain stays unlocked in the kernel's user keyring, which is switched off (APPHOME_KEYCHAIN_KEY_CACHE=0)")
        }
        try withLock { () throws(KeychainError) in
            if try readRecord() != nil || FileSystem.exists(keysPath) { throw .duplicateItem }
            let key = SecureBytes.random(count: Sodium.keyBytes)
            let deviceID = Random.uuid()
            let parameters = passphraseCostForTesting ?? .fresh()
            try PassphraseKeyFile.write(key, passphrase: passphrase, parameters: parameters, deviceID: deviceID, directory: directory)
            let check = Sodium.deriveKey(key, id: 2, context: "kcCheck_")
            let record = DeviceRecord(deviceID: deviceID, store: .passphraseFile,
                                      keyCheck: Sodium.seal(DeviceKey.checkConstant, key: check, ad: DeviceKey.checkAD(deviceID)),
                                      classChecks: ClassKeys.checkBoxes(rootKey: key, deviceID: deviceID))
            let bytes = try record.encoded(kek: Sodium.deriveKey(key, id: 1, context: "kcAppKEK"))
            do throws(SystemError) { try FileSystem.writeAtomically(bytes, to: recordPath) } catch { throw .system(error) }
        }
        try unlock(password: passphrase)
    }

    /// Drops the after-first-unlock keys from the kernel, as a reboot does:
    /// `afterFirstUnlock…` items close until the next unlock.
    public func forgetAfterFirstUnlockKeys() throws(KeychainError) {
        guard let record = try readRecord() else { return }
        policy.keyCache?.forgetCached(DeviceKey.cacheName(record.deviceID))
        policy.keyCache?.forgetCached(DeviceKey.sessionName(record.deviceID))
    }

    private func serviceAttributes(_ record: DeviceRecord) -> [String: String] {
        DeviceKey.serviceAttributes(root: root, deviceID: record.deviceID)
    }

    private func lockableRecord() throws(KeychainError) -> DeviceRecord {
        guard let record = try readRecord() else { throw .itemNotFound }
        guard record.store != .file else {
            throw .invalidParameter("this keychain keeps its device key in a plain key file, which cannot be locked or unlocked")
        }
        return record
    }

    private func secretService() throws(KeychainError) -> any SecretStore {
        guard let service = policy.secretStore else {
            throw .keyStoreUnavailable("the keychain records its key in the Secret Service, which cannot be reached (no session bus)")
        }
        return service
    }
}
