import AppHomeSystem
import PropertyList

/// `<root>/Keychains/device.pkey`: the device root key sealed under an
/// Argon2id key from a passphrase, for machines without a Secret Service.
///
/// ```
/// { FormatVersion = 1; DeviceID = "UUID";
///   Parameters = { Algorithm = "argon2id13"; Salt = <16 bytes>; OpsLimit = 3; MemLimit = 268435456; };
///   Key = <box of the DRK under PK>; }
/// ```
/// PK = `crypto_pwhash` (Argon2id 1.3) of the passphrase; the box's
/// associated data binds the device id and the parameters, so they cannot
/// be lowered or moved; parameters below the floor are refused.
enum PassphraseKeyFile {
    static let formatVersion = 1

    static func path(_ directory: String) -> String { directory + "/device.pkey" }

    static func ad(deviceID: String, parameters: PassphraseParameters) -> [UInt8] {
        var e = CanonicalEncoder()
        e.append("AHKC/2"); e.append("passphrase-key"); e.append(deviceID); e.append(parameters.salt)
        e.append(parameters.opsLimit); e.append(UInt64(parameters.memLimit))
        return e.bytes
    }

    /// Writes the file for `rootKey` (atomically, 0600).
    static func write(_ rootKey: SecureBytes, passphrase: SecureBytes, parameters: PassphraseParameters, deviceID: String,
                      directory: String) throws(KeychainError) {
        let pk = try parameters.deriveKey(passphrase)
        let top: [PlistKey: PlistValue] = [
            "FormatVersion": .integer(Int128(formatVersion)), "DeviceID": .string(deviceID), "Parameters": parameters.plist,
            "Key": .data(Sodium.seal(rootKey, key: pk, ad: ad(deviceID: deviceID, parameters: parameters))),
        ]
        let bytes = try KeychainError.binaryPlist(top)
        do { try FileSystem.writeAtomically(bytes, to: path(directory)) } catch { throw .system(error) }
    }

    /// The device root key the file holds for `passphrase`.
    ///
    /// - Throws: ``KeychainError/wrongPassphrase(_:)`` for a wrong passphrase;
    ///   ``KeychainError/keyStoreUnavailable(_:)`` when the file is missing.
    static func open(directory: String, deviceID: String, passphrase: SecureBytes, belowFloorForTesting: Bool = false) throws(KeychainError) -> SecureBytes {
        let file = path(directory)
        guard let bytes = try PrivateFile.read(file) else {
            throw .keyStoreUnavailable("the keychain records its key in the passphrase-protected key file \(file), which is missing")
        }
        func corrupt(_ why: String) -> KeychainError { .corrupt(path: file, reason: why) }
        guard let top = (try? PlistCodec.decode(bytes))?.dictionaryValue else { throw corrupt("it is not a readable property list (truncated?)") }
        guard case .integer(let v)? = top["FormatVersion"] else { throw corrupt("FormatVersion is missing") }
        if v > Int128(formatVersion) { throw .versionTooNew(path: file, found: Int(clamping: v), supported: formatVersion) }
        guard v == 1 else { throw corrupt("FormatVersion \(v) is not valid") }
        guard case .string(let dev)? = top["DeviceID"], dev == deviceID else { throw .wrongKey("\(file) belongs to another keychain") }
        guard let p = top["Parameters"], case .data(let box)? = top["Key"] else { throw corrupt("Parameters or Key is missing") }
        let parameters = try PassphraseParameters(plist: p, belowFloorForTesting: belowFloorForTesting)
        let pk = try parameters.deriveKey(passphrase)
        guard let key = Sodium.open(box, key: pk, ad: ad(deviceID: deviceID, parameters: parameters)), key.count == Sodium.keyBytes else {
            throw .wrongPassphrase("the passphrase does not open \(file)")
        }
        return key
    }
}
