/// The keys one keychain call holds: the key-encryption key (KEK, which
/// opens the group keys and so the attributes) and the class keys that are
/// open now.
///
/// Made for one call and dropped at its end, so a `whenUnlocked…` class key
/// never outlives the call. With the device root key (DRK) every class is
/// open (`whenPasscodeSetThisDeviceOnly` only when the DRK is protected).
/// From the kernel's after-first-unlock bundle only the KEK and the
/// `afterFirstUnlock…` class keys; the others come from the DRK, asked for
/// once in the call when an item of theirs is touched.
///
/// Class keys: `CK[class] = crypto_kdf(DRK, id, "kcClass_")` (ids in
/// ``Accessibility/classKeyID``).
final class ClassKeys {
    /// The device record (replaced by its format-2 form when a keychain moves).
    var record: DeviceRecord
    let kek: SecureBytes
    private var classKeys: [Accessibility: SecureBytes] = [:]
    /// Whether the DRK is protected (Secret Service), so the passcode class may open.
    private var protected: Bool
    private var rootKeyTried = false
    private let loadRoot: (() throws(KeychainError) -> SecureBytes)?

    /// The names of the keys in the kernel bundle, in its order.
    static let cachedNames = ["kek", "ck", "cku"]
    static let checkConstant: [UInt8] = Array("AppHome keychain class key check".utf8)

    /// Every key, from the device root key.
    init(record: DeviceRecord, rootKey: SecureBytes, protected: Bool) {
        self.record = record
        self.protected = protected
        kek = Sodium.deriveKey(rootKey, id: 1, context: "kcAppKEK")
        loadRoot = nil
        rootKeyTried = true
        fill(from: rootKey)
    }

    /// The after-first-unlock keys from the kernel bundle (KEK ‖ CK[ck] ‖
    /// CK[cku]), each checked against `record`; `nil` when the bundle does not
    /// belong to this keychain. `loadRoot` fetches the DRK for the other classes.
    init?(record: DeviceRecord, bundle: SecureBytes, loadRoot: @escaping () throws(KeychainError) -> SecureBytes) {
        let n = Sodium.keyBytes
        guard bundle.count == n * Self.cachedNames.count else { return nil }
        var parts: [SecureBytes] = []
        for i in Self.cachedNames.indices {
            let part = bundle.withUnsafeBytes { SecureBytes(copying: UnsafeRawBufferPointer(rebasing: $0[(i * n)..<((i + 1) * n)])) }
            guard let box = record.classChecks[Self.cachedNames[i]],
                  Sodium.open(box, key: part, ad: Self.checkAD(Self.cachedNames[i], deviceID: record.deviceID)) != nil else { return nil }
            parts.append(part)
        }
        self.record = record
        self.protected = true
        self.loadRoot = loadRoot
        kek = parts[0]
        classKeys[.afterFirstUnlock] = parts[1]
        classKeys[.afterFirstUnlockThisDeviceOnly] = parts[2]
    }

    private func fill(from rootKey: SecureBytes) {
        for c in Accessibility.allCases where c != .whenPasscodeSetThisDeviceOnly || protected {
            classKeys[c] = Sodium.deriveKey(rootKey, id: c.classKeyID, context: "kcClass_")
        }
    }

    /// The key of class `c`, fetching the DRK (once per call) when it is not
    /// open yet.
    ///
    /// - Throws: ``KeychainError/interactionNotAllowed(_:)`` when the class is
    ///   not open now.
    func classKey(_ c: Accessibility) throws(KeychainError) -> SecureBytes {
        if let k = classKeys[c] { return k }
        if c == .whenPasscodeSetThisDeviceOnly && !protected {
            throw .interactionNotAllowed("whenPasscodeSetThisDeviceOnly items need a protected device key (the Secret Service); this keychain keeps its key in a plain key file")
        }
        guard !rootKeyTried, let loadRoot else {
            throw .interactionNotAllowed("the keychain is locked: \(c.name) items open only while it is unlocked")
        }
        rootKeyTried = true
        fill(from: try loadRoot())
        guard let k = classKeys[c] else { throw .interactionNotAllowed("\(c.name) items are not open") }
        return k
    }

    /// Whether class `c` is open now (asking for the DRK if needed).
    func isOpen(_ c: Accessibility) throws(KeychainError) -> Bool {
        do { _ = try classKey(c); return true } catch {
            if case .interactionNotAllowed = error { return false }
            throw error
        }
    }

    /// KEK ‖ CK[ck] ‖ CK[cku], for the kernel; `nil` without those keys.
    func afterFirstUnlockBundle() -> SecureBytes? {
        guard let ck = classKeys[.afterFirstUnlock], let cku = classKeys[.afterFirstUnlockThisDeviceOnly] else { return nil }
        let n = Sodium.keyBytes
        return SecureBytes(count: 3 * n) { out in
            for (i, k) in [kek, ck, cku].enumerated() {
                k.withUnsafeBytes { out.baseAddress!.advanced(by: i * n).copyMemory(from: $0.baseAddress!, byteCount: n) }
            }
        }
    }

    /// The check boxes for this keychain's bundle keys (from a full set).
    func checkBoxes() -> [String: [UInt8]] {
        var out: [String: [UInt8]] = [:]
        let keys = [kek, classKeys[.afterFirstUnlock], classKeys[.afterFirstUnlockThisDeviceOnly]]
        for (name, key) in zip(Self.cachedNames, keys) {
            if let key { out[name] = Sodium.seal(Self.checkConstant, key: key, ad: Self.checkAD(name, deviceID: record.deviceID)) }
        }
        return out
    }

    static func checkAD(_ name: String, deviceID: String) -> [UInt8] {
        var e = CanonicalEncoder()
        e.append("AHKC/2"); e.append("class-key-check"); e.append(name); e.append(deviceID)
        return e.bytes
    }

    /// The check boxes device.plist carries for the kernel bundle's keys.
    static func checkBoxes(rootKey: SecureBytes, deviceID: String) -> [String: [UInt8]] {
        let keys = [Sodium.deriveKey(rootKey, id: 1, context: "kcAppKEK"),
                    Sodium.deriveKey(rootKey, id: Accessibility.afterFirstUnlock.classKeyID, context: "kcClass_"),
                    Sodium.deriveKey(rootKey, id: Accessibility.afterFirstUnlockThisDeviceOnly.classKeyID, context: "kcClass_")]
        var out: [String: [UInt8]] = [:]
        for (name, key) in zip(cachedNames, keys) { out[name] = Sodium.seal(checkConstant, key: key, ad: checkAD(name, deviceID: deviceID)) }
        return out
    }
}
