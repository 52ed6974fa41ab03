#if canImport(Glibc)
import Glibc
#endif
import AppHomeSystem
import PropertyList

/// Where the device root key (DRK) lives.
public enum DeviceKeyStoreKind: String, Sendable, CaseIterable {
    /// The user's Secret Service (an item with the schema
    /// `org.apphome.Keychain.DeviceRootKey`).
    case secretService = "secret-service"
    /// A 0600 file `<root>/Keychains/device.key`.
    case file = "file"
    /// A 0600 file `<root>/Keychains/device.pkey`: the key sealed under an
    /// Argon2id key from a passphrase; `security unlock-keychain` opens it
    /// for the session (until `lock-keychain`, reboot or logout).
    case passphraseFile = "passphrase-file"
}

/// How to find or make the device root key. `main` decides (from the
/// environment); the library never reads the environment.
public struct DeviceKeyPolicy: Sendable {
    /// The user's Secret Service when one is reachable, else `nil`. A new
    /// keychain keeps its key there when it can, else in the key file.
    public var secretStore: (any SecretStore)?
    /// Forces the key file even when a Secret Service is reachable.
    public var forceFile: Bool
    /// How long the after-first-unlock class keys stay in the kernel's user
    /// keyring once the device root key was had (``KernelKeyLifetime``).
    public var kernelKeys: KernelKeyLifetime

    /// The keybag of a long-running process (prefsd): class keys kept open
    /// between calls, so calls need no Secret Service round trip each.
    /// `nil` (a command): every call asks the store.
    public var keybag: Keybag?

    /// Whether a call may wait: ask the Secret Service for the device root
    /// key, take the writers' lock, read a large group file. prefsd makes a
    /// look-up on its loop with `false`, and on a worker when the call
    /// throws ``KeychainError/wouldBlock``.
    public var mayWait = true

    /// How long the after-first-unlock keys stay in the kernel's user keyring.
    public enum KernelKeyLifetime: Sendable, Equatable {
        /// Not kept: `afterFirstUnlock…` items close with the store.
        case off
        /// Until the user keyring goes (reboot, or the user's last logout).
        case untilReboot
        /// At most this many seconds (tests, cautious set-ups).
        case seconds(UInt32)
    }

    /// Where the after-first-unlock keys (and a passphrase keychain's
    /// unlocked session) are kept: the kernel's user keyring for real use.
    /// Defaults to `secretStore`.
    public var keyCache: (any KernelKeyCache)?

    public init(secretStore: (any SecretStore)? = nil, forceFile: Bool = false, kernelKeys: KernelKeyLifetime = .off,
                keyCache: (any KernelKeyCache)? = nil) {
        self.secretStore = secretStore
        self.forceFile = forceFile
        self.kernelKeys = kernelKeys
        self.keyCache = keyCache ?? secretStore
    }

    /// The kernel's timeout for kept keys, or `nil` when none are kept.
    var kernelSeconds: UInt32? {
        switch kernelKeys {
        case .off: return nil
        case .untilReboot: return 0
        case .seconds(let n): return n
        }
    }

    /// The key file only; for tests and machines without a Secret Service.
    public static let fileOnly = DeviceKeyPolicy(forceFile: true)
}

/// `<root>/Keychains/device.plist`: which store holds the device root key,
/// the device id, a key-check value sealed under the key and (format 2 on)
/// the check values of the keys kept in the kernel after the first unlock.
///
/// Format 3 is sealed whole (Schemas/keychain-device-record.md):
/// `"AHKDEV03"` ‖ digest (32) ‖ seal (32) ‖ body, the body a binary
/// property list. The digest is an unkeyed BLAKE2b-256 of magic ‖ body, so
/// any changed byte is refused before a key is asked for; the seal is a
/// BLAKE2b-256 keyed by a key derived from the key-encryption key, checked
/// once the keys are open, so the record cannot be rewritten without them.
/// Formats 1 and 2 (a bare binary property list) are read, then sealed at
/// their first open.
struct DeviceRecord: Equatable {
    static let formatVersion = 3
    static let magicPrefix: [UInt8] = Array("AHKDEV".utf8)
    static let magic: [UInt8] = Array("AHKDEV03".utf8)
    var deviceID: String
    var store: DeviceKeyStoreKind
    var keyCheck: [UInt8]
    /// 1 for a keychain not yet moved to class keys, 2 for one not yet sealed.
    var version: Int = DeviceRecord.formatVersion
    /// Format 2 on: check boxes of the key-encryption key and the
    /// after-first-unlock class keys, by name (`kek`, `ck`, `cku`).
    var classChecks: [String: [UInt8]] = [:]
    /// Format 3, as read: the bytes the seal covers and the seal, checked by
    /// ``verifySeal(kek:path:)`` once the keys are open.
    var sealed: (covered: [UInt8], seal: [UInt8])?

    static func == (a: DeviceRecord, b: DeviceRecord) -> Bool {
        a.deviceID == b.deviceID && a.store == b.store && a.keyCheck == b.keyCheck && a.version == b.version && a.classChecks == b.classChecks
    }

    /// The key the seal is made with: from the KEK, which every way of
    /// opening the keychain yields (the DRK, the kernel bundle, a session).
    static func sealKey(kek: SecureBytes) -> SecureBytes { Sodium.deriveKey(kek, id: 3, context: "kcRecord") }

    /// The sealed format-3 file for this record.
    func encoded(kek: SecureBytes) throws(KeychainError) -> [UInt8] {
        var d: [PlistKey: PlistValue] = [
            "FormatVersion": .integer(Int128(Self.formatVersion)),
            "DeviceID": .string(deviceID),
            "RootKeyStore": .string(store.rawValue),
            "KeyCheck": .data(keyCheck),
        ]
        d["ClassKeyChecks"] = .dictionary(Dictionary(stringKeys: classChecks.mapValues { .data($0) }))
        let covered = Self.magic + (try KeychainError.binaryPlist(d))
        let digest = Sodium.hash(covered)
        let seal = Sodium.keyedHash(covered, key: Self.sealKey(kek: kek))
        return Self.magic + digest + seal + covered[Self.magic.count...]
    }

    /// Whether the seal read with the record matches under `kek` (always
    /// true for formats 1 and 2, which carry none).
    func sealMatches(kek: SecureBytes) -> Bool {
        guard let sealed else { return version < 3 }
        return Sodium.equal(Sodium.keyedHash(sealed.covered, key: Self.sealKey(kek: kek)), sealed.seal)
    }

    init(deviceID: String, store: DeviceKeyStoreKind, keyCheck: [UInt8], version: Int = DeviceRecord.formatVersion, classChecks: [String: [UInt8]] = [:]) {
        self.deviceID = deviceID; self.store = store; self.keyCheck = keyCheck
        self.version = version; self.classChecks = classChecks
    }

    init(decoding bytes: [UInt8], path: String) throws(KeychainError) {
        func corrupt(_ why: String) -> KeychainError { .corrupt(path: path, reason: why) }
        var body = bytes[...]
        var sealed: (covered: [UInt8], seal: [UInt8])?
        if bytes.starts(with: Self.magicPrefix) {
            guard bytes.count >= 8 + 64 else { throw corrupt("it is shorter than its header (truncated?)") }
            guard bytes.starts(with: Self.magic) else {
                if let n = Int(String(decoding: bytes[6..<8], as: UTF8.self)), n > Self.formatVersion {
                    throw .versionTooNew(path: path, found: n, supported: Self.formatVersion)
                }
                throw corrupt("its format marker is not valid")
            }
            let digest = Array(bytes[8..<40])
            let seal = Array(bytes[40..<72])
            let covered = Self.magic + bytes[72...]
            guard Sodium.equal(Sodium.hash(covered), digest) else { throw corrupt("its contents do not match its digest (the file was changed)") }
            sealed = (covered, seal)
            body = bytes[72...]
        } else if !bytes.starts(with: Array("bplist00".utf8)) {
            throw corrupt("it is not a keychain device record")
        }
        guard let top = (try? PlistCodec.decode(Array(body)))?.dictionaryValue else { throw corrupt("not a property list dictionary") }
        guard case .integer(let v)? = top["FormatVersion"] else { throw corrupt("FormatVersion is missing") }
        if v > Int128(Self.formatVersion) { throw .versionTooNew(path: path, found: Int(clamping: v), supported: Self.formatVersion) }
        // A sealed file holds format 3 only; a bare property list, 1 or 2.
        guard sealed == nil ? (v == 1 || v == 2) : v == 3 else { throw corrupt("FormatVersion \(v) is not valid") }
        guard case .string(let id)? = top["DeviceID"], id.utf8.count == 36 else { throw corrupt("DeviceID is missing") }
        guard case .string(let s)? = top["RootKeyStore"], let store = DeviceKeyStoreKind(rawValue: s) else {
            throw corrupt("RootKeyStore is missing or unknown")
        }
        guard case .data(let check)? = top["KeyCheck"] else { throw corrupt("KeyCheck is missing") }
        var checks: [String: [UInt8]] = [:]
        if v >= 2 {
            guard case .dictionary(let d)? = top["ClassKeyChecks"] else { throw corrupt("ClassKeyChecks is missing") }
            for name in ClassKeys.cachedNames {
                guard case .data(let box)? = d[name] else { throw corrupt("ClassKeyChecks has no '\(name)'") }
                checks[name] = box
            }
        }
        self.init(deviceID: id, store: store, keyCheck: check, version: Int(v), classChecks: checks)
        self.sealed = sealed
    }
}

/// Loading, making and checking the device root key.
public enum DeviceKey {
    /// The Secret Service schema of the device root key item.
    public static let schema = "org.apphome.Keychain.DeviceRootKey"
    static let fileMagic: [UInt8] = Array("AHKDRK01".utf8)
    static let checkConstant: [UInt8] = Array("AppHome keychain device key check".utf8)

    static func checkAD(_ deviceID: String) -> [UInt8] {
        var e = CanonicalEncoder()
        e.append("AHKC/1"); e.append("device-key-check"); e.append(deviceID)
        return e.bytes
    }

    /// The kernel key holding a device's after-first-unlock keys.
    public static func cacheName(_ deviceID: String) -> String { "apphome-keychain:" + deviceID }

    /// The attributes of the device root key item.
    public static func serviceAttributes(root: String, deviceID: String) -> [String: String] {
        ["apphome-root": root, "apphome-device": deviceID]
    }

    static func checks(_ record: DeviceRecord, _ key: SecureBytes) -> Bool {
        Sodium.open(record.keyCheck, key: Sodium.deriveKey(key, id: 2, context: "kcCheck_"), ad: checkAD(record.deviceID)) != nil
    }

    /// The keys `record`'s store gives now: everything when the device root
    /// key can be had; with the Secret Service locked, the after-first-unlock
    /// keys from the kernel when this boot saw an unlock.
    ///
    /// - Throws: ``KeychainError/interactionNotAllowed(_:)`` when the store is
    ///   locked and nothing is in the kernel; ``KeychainError/keyStoreUnavailable(_:)``
    ///   when the store or its item is gone.
    static func open(_ record: DeviceRecord, directory: String, root: String, policy: DeviceKeyPolicy) throws(KeychainError) -> ClassKeys {
        switch record.store {
        case .file:
            let path = directory + "/device.key"
            guard let key = try readKeyFile(path) else {
                throw .keyStoreUnavailable("the keychain records its key in the key file \(path), which is missing")
            }
            guard checks(record, key) else {
                throw .wrongKey("the key-check value does not match (the key in the key file belongs to another keychain)")
            }
            return ClassKeys(record: record, rootKey: key, protected: false)
        case .passphraseFile:
            let locked = "the keychain is locked: run `security unlock-keychain` with its passphrase"
            if let session = policy.keyCache?.cached(sessionName(record.deviceID)), session.count == Sodium.keyBytes, checks(record, session) {
                return ClassKeys(record: record, rootKey: session, protected: true)
            }
            if policy.kernelKeys != .off, let bundle = policy.keyCache?.cached(cacheName(record.deviceID)),
               let keys = ClassKeys(record: record, bundle: bundle, loadRoot: { () throws(KeychainError) -> SecureBytes in throw .interactionNotAllowed(locked) }) {
                return keys
            }
            throw .interactionNotAllowed("the keychain has not been unlocked since the system started: run `security unlock-keychain` with its passphrase")
        case .secretService:
            guard let service = policy.secretStore else {
                throw .keyStoreUnavailable("the keychain records its key in the Secret Service, which cannot be reached (no session bus)")
            }
            let attributes = serviceAttributes(root: root, deviceID: record.deviceID)
            let keybag = policy.keybag
            let fetch = { (why: String) throws(KeychainError) -> SecureBytes in
                // The watcher saw the collection lock: no round trip to learn it again.
                if let keybag, keybag.storeIsLocked { throw .interactionNotAllowed(why) }
                guard policy.mayWait else { throw .wouldBlock }
                let generation = keybag?.generation ?? 0
                let key: SecureBytes
                do throws(KeychainError) { key = try fetchFromService(service, attributes: attributes, record: record, lockedReason: why) } catch {
                    if case .interactionNotAllowed = error { keybag?.storeAnsweredLocked() }
                    throw error
                }
                keybag?.remember(record: record, rootKey: key, generation: generation)
                return key
            }
            let lockedNow = "the keychain is locked: the Secret Service collection holding its device key is locked"
            if record.version >= 2, let keys = keybag?.keys(for: record, loadRoot: { () throws(KeychainError) -> SecureBytes in try fetch(lockedNow) }) {
                return keys
            }
            let cacheKey = cacheName(record.deviceID)
            if record.version >= 2 && policy.kernelKeys != .off, let bundle = policy.keyCache?.cached(cacheKey),
               let keys = ClassKeys(record: record, bundle: bundle, loadRoot: { () throws(KeychainError) -> SecureBytes in try fetch(lockedNow) }) {
                keybag?.remember(record: record, bundle: bundle)
                return keys
            }
            let key = try fetch("the keychain has not been unlocked since the system started: the Secret Service collection holding its device key is locked")
            let keys = ClassKeys(record: record, rootKey: key, protected: true)
            keepAfterFirstUnlockKeys(keys, policy: policy)
            return keys
        }
    }

    /// The kernel key holding a passphrase keychain's unlocked device key.
    public static func sessionName(_ deviceID: String) -> String { "apphome-keychain-session:" + deviceID }

    /// Puts the after-first-unlock keys in the kernel (format 2 only).
    static func keepAfterFirstUnlockKeys(_ keys: ClassKeys, policy: DeviceKeyPolicy) {
        guard keys.record.version >= 2, keys.record.store != .file, let cache = policy.keyCache, let seconds = policy.kernelSeconds else { return }
        guard let bundle = keys.afterFirstUnlockBundle() else { return }
        cache.cache(cacheName(keys.record.deviceID), bundle, seconds: seconds)
    }

    /// The device root key from the Secret Service, checked; never prompts.
    static func fetchFromService(_ service: any SecretStore, attributes: [String: String], record: DeviceRecord,
                                 lockedReason: String) throws(KeychainError) -> SecureBytes {
        let state: SecretLookup
        do { state = try service.lookupState(schema: schema, attributes: attributes) } catch {
            throw .keyStoreUnavailable("the keychain records its key in the Secret Service, which cannot be reached (\(error))")
        }
        switch state {
        case .missing:
            throw .keyStoreUnavailable("the keychain records its key in the Secret Service, but the item for device \(record.deviceID) is gone")
        case .locked:
            throw .interactionNotAllowed(lockedReason)
        case .found(let hex):
            guard let key = fromHex(hex) else { throw .wrongKey("the Secret Service item does not hold a 32-byte key") }
            guard checks(record, key) else {
                throw .wrongKey("the key-check value does not match (the key in the Secret Service belongs to another keychain)")
            }
            return key
        }
    }

    /// Makes a new key, stores it in the chosen store and returns the record to write.
    ///
    /// With a Secret Service reachable (and the file not forced) the key
    /// goes there or nowhere: a service that cannot keep it (no login
    /// keyring, a locked collection, nothing answering for
    /// `org.freedesktop.secrets`) is an error naming its cause and the way
    /// to a key file, never a key file the user did not ask for.
    ///
    /// - Throws: ``KeychainError/keyStoreUnavailable(_:)`` when the service
    ///   refuses the key; a system error when the key file cannot be written.
    static func create(policy: DeviceKeyPolicy, directory: String, root: String) throws(KeychainError) -> (DeviceRecord, SecureBytes) {
        let key = SecureBytes.random(count: Sodium.keyBytes)
        let deviceID = Random.uuid()
        var store = DeviceKeyStoreKind.file
        if let service = policy.secretStore, !policy.forceFile {
            do {
                try service.store(schema: schema, attributes: serviceAttributes(root: root, deviceID: deviceID),
                                        label: "AppHome keychain device key (\(root))", secret: toHex(key))
                store = .secretService
            } catch {
                let cause = if case .secretService(_, _, let message) = error { message } else { error.description }
                throw .keyStoreUnavailable("the Secret Service could not store a new keychain's device key (\(cause)); "
                    + "set APPHOME_KEYCHAIN_KEY_STORE=file to keep the key in a 0600 file under the root instead")
            }
        }
        if store == .file {
            // Built in place, so no temporary copy of the key is left unwiped.
            var bytes = fileMagic
            bytes.reserveCapacity(fileMagic.count + key.count)
            key.withUnsafeBytes { bytes.append(contentsOf: $0) }
            defer { Sodium.wipe(&bytes) }
            do { try FileSystem.writeAtomically(bytes, to: directory + "/device.key") } catch { throw .system(error) }
        }
        let check = Sodium.deriveKey(key, id: 2, context: "kcCheck_")
        var record = DeviceRecord(deviceID: deviceID, store: store, keyCheck: Sodium.seal(checkConstant, key: check, ad: checkAD(deviceID)))
        record.classChecks = ClassKeys.checkBoxes(rootKey: key, deviceID: deviceID)
        return (record, key)
    }

    /// Reads the key file, refusing one readable by others or owned by another user.
    static func readKeyFile(_ path: String) throws(KeychainError) -> SecureBytes? {
        // Non-blocking: a FIFO put in its place cannot hang the keychain.
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        if fd < 0 {
            if errno == ENOENT { return nil }
            throw .system(SystemError("open", path: path, errno: errno))
        }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw .system(SystemError("stat", path: path, errno: errno)) }
        if st.st_mode & S_IFMT != S_IFREG {
            throw .corrupt(path: path, reason: "it is \(FileSystem.kindDescription(st.st_mode)), not a regular file")
        }
        if st.st_mode & 0o077 != 0 { throw .keyStoreUnavailable("the key file \(path) is accessible to other users (mode must be 0600)") }
        if st.st_uid != getuid() { throw .keyStoreUnavailable("the key file \(path) belongs to another user") }
        let size = fileMagic.count + Sodium.keyBytes
        let buffer = SecureBytes(uninitializedCount: size + 1)
        let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress!, size + 1) }
        guard n == size else { throw .corrupt(path: path, reason: "the key file has \(max(n, 0)) bytes, not \(size)") }
        let magicOK = buffer.withUnsafeBytes { Array($0[0..<fileMagic.count]) == fileMagic }
        guard magicOK else { throw .corrupt(path: path, reason: "the key file does not start with its format marker") }
        return buffer.withUnsafeBytes { SecureBytes(copying: UnsafeRawBufferPointer(rebasing: $0[fileMagic.count..<size])) }
    }

    static func toHex(_ key: SecureBytes) -> SecureBytes {
        let out = SecureBytes(uninitializedCount: key.count * 2)
        out.withUnsafeMutableBytes { o in key.withUnsafeBytes { k in Hex.encode(k, into: o) } }
        return out
    }

    static func fromHex(_ hex: SecureBytes) -> SecureBytes? {
        guard hex.count == 2 * Sodium.keyBytes else { return nil }
        let out = SecureBytes(uninitializedCount: Sodium.keyBytes)
        let ok = out.withUnsafeMutableBytes { o in hex.withUnsafeBytes { h in Hex.decode(h, into: o) } }
        return ok ? out : nil
    }
}
