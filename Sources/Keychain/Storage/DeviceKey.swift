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
}

/// How to find or make the device root key. `main` decides (from the
/// environment); the library never reads the environment.
public struct DeviceKeyPolicy: Sendable {
    /// The user's Secret Service when one is reachable, else `nil`. A new
    /// keychain keeps its key there when it can, else in the key file.
    public var secretStore: (any SecretStore)?
    /// Forces the key file even when a Secret Service is reachable.
    public var forceFile: Bool
    /// Seconds a key fetched from the Secret Service stays in the store's
    /// short-lived cache (the kernel's user keyring for the real service),
    /// so that a command run many times does not ask the service every
    /// time; 0 disables the cache. A cached key is checked against the
    /// key-check value on every use.
    public var cacheSeconds: UInt32

    public init(secretStore: (any SecretStore)? = nil, forceFile: Bool = false, cacheSeconds: UInt32 = 0) {
        self.secretStore = secretStore
        self.forceFile = forceFile
        self.cacheSeconds = cacheSeconds
    }

    /// The key file only; for tests and machines without a Secret Service.
    public static let fileOnly = DeviceKeyPolicy(forceFile: true)
}

/// `<root>/Keychains/device.plist`: which store holds the device root key,
/// the device id, and a key-check value sealed under the key.
struct DeviceRecord: Equatable {
    static let formatVersion = 1
    var deviceID: String
    var store: DeviceKeyStoreKind
    var keyCheck: [UInt8]

    func encoded() throws(KeychainError) -> [UInt8] {
        let d: [String: PlistValue] = [
            "FormatVersion": .integer(Int128(Self.formatVersion)),
            "DeviceID": .string(deviceID),
            "RootKeyStore": .string(store.rawValue),
            "KeyCheck": .data(keyCheck),
        ]
        return try KeychainError.binaryPlist(d)
    }

    init(deviceID: String, store: DeviceKeyStoreKind, keyCheck: [UInt8]) {
        self.deviceID = deviceID; self.store = store; self.keyCheck = keyCheck
    }

    init(decoding bytes: [UInt8], path: String) throws(KeychainError) {
        func corrupt(_ why: String) -> KeychainError { .corrupt(path: path, reason: why) }
        guard let top = (try? PlistCodec.decode(bytes))?.dictionaryValue else { throw corrupt("not a property list dictionary") }
        guard case .integer(let v)? = top["FormatVersion"] else { throw corrupt("FormatVersion is missing") }
        if v > Int128(Self.formatVersion) { throw .versionTooNew(path: path, found: Int(clamping: v), supported: Self.formatVersion) }
        guard v == 1 else { throw corrupt("FormatVersion \(v) is not valid") }
        guard case .string(let id)? = top["DeviceID"], id.utf8.count == 36 else { throw corrupt("DeviceID is missing") }
        guard case .string(let s)? = top["RootKeyStore"], let store = DeviceKeyStoreKind(rawValue: s) else {
            throw corrupt("RootKeyStore is missing or unknown")
        }
        guard case .data(let check)? = top["KeyCheck"] else { throw corrupt("KeyCheck is missing") }
        self.init(deviceID: id, store: store, keyCheck: check)
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

    /// The cache entry's name for a device's key.
    public static func cacheName(_ deviceID: String) -> String { "apphome-keychain:" + deviceID }

    /// The attributes of the device root key item.
    public static func serviceAttributes(root: String, deviceID: String) -> [String: String] {
        ["apphome-root": root, "apphome-device": deviceID]
    }

    /// The key from `record`'s store (or the kernel cache), verified against its key-check value.
    static func load(_ record: DeviceRecord, directory: String, root: String, policy: DeviceKeyPolicy) throws(KeychainError) -> SecureBytes {
        let check = { (key: SecureBytes) -> Bool in
            Sodium.open(record.keyCheck, key: Sodium.deriveKey(key, id: 2, context: "kcCheck_"), ad: checkAD(record.deviceID)) != nil
        }
        let cacheKey = cacheName(record.deviceID)
        let service = policy.secretStore
        if record.store == .secretService && policy.cacheSeconds > 0, let cached = service?.cached(cacheKey), check(cached) {
            return cached
        }
        let key: SecureBytes
        switch record.store {
        case .file:
            let path = directory + "/device.key"
            guard let k = try readKeyFile(path) else {
                throw .keyStoreUnavailable("the keychain records its key in the key file \(path), which is missing")
            }
            key = k
        case .secretService:
            guard let service else {
                throw .keyStoreUnavailable("the keychain records its key in the Secret Service, which cannot be reached (no session bus)")
            }
            let found: SecureBytes?
            do { found = try service.lookup(schema: schema, attributes: serviceAttributes(root: root, deviceID: record.deviceID)) } catch {
                throw .keyStoreUnavailable("the keychain records its key in the Secret Service, which cannot be reached (\(error))")
            }
            guard let hex = found else {
                throw .keyStoreUnavailable("the keychain records its key in the Secret Service, but the item for device \(record.deviceID) is gone")
            }
            guard let k = fromHex(hex) else { throw .wrongKey("the Secret Service item does not hold a 32-byte key") }
            key = k
        }
        guard check(key) else {
            throw .wrongKey("the key-check value does not match (the key in the \(record.store == .file ? "key file" : "Secret Service") belongs to another keychain)")
        }
        if record.store == .secretService && policy.cacheSeconds > 0 { service?.cache(cacheKey, key, seconds: policy.cacheSeconds) }
        return key
    }

    /// Makes a new key, stores it in the chosen store and returns the record to write.
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
                store = .file
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
        let record = DeviceRecord(deviceID: deviceID, store: store, keyCheck: Sodium.seal(checkConstant, key: check, ad: checkAD(deviceID)))
        return (record, key)
    }

    /// Reads the key file, refusing one readable by others or owned by another user.
    static func readKeyFile(_ path: String) throws(KeychainError) -> SecureBytes? {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        if fd < 0 {
            if errno == ENOENT { return nil }
            throw .system(SystemError("open", path: path, errno: errno))
        }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw .system(SystemError("stat", path: path, errno: errno)) }
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
