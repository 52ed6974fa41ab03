import AppHomeSystem
import PropertyList

/// `<root>/Keychains/keys.plist`: every access group's key (AKK), wrapped
/// by the key-encryption key derived from the device root key.
///
/// Group keys live apart from the group files on purpose: removing a key
/// from this table is what destroys a group (crypto-shredding), since any
/// leftover copy of its file (a stale temporary file, a snapshot) is
/// useless without it.
struct KeyTable: Sendable {
    static let formatVersion = 1
    var deviceID: String
    var wrapped: [String: [UInt8]]

    /// The table in `path` (empty when there is none), as kept in `cache`
    /// while the file is unchanged.
    static func read(path: String, deviceID: String, cache: StampedFileCache<KeyTable>?) throws(KeychainError) -> KeyTable {
        let table = try StampedFileCache.value(in: cache, at: path) { () throws(KeychainError) -> KeyTable? in try read(path: path, deviceID: deviceID) }
        // Kept for another device's record (the record changed since): checked as read.
        guard let table, table.deviceID == deviceID else { return try read(path: path, deviceID: deviceID) }
        return table
    }

    static func read(path: String, deviceID: String) throws(KeychainError) -> KeyTable {
        let bytes: [UInt8]?
        bytes = try PrivateFile.read(path)
        guard let bytes else { return KeyTable(deviceID: deviceID, wrapped: [:]) }
        func corrupt(_ why: String) -> KeychainError { .corrupt(path: path, reason: why) }
        guard let top = (try? PlistCodec.decode(bytes))?.dictionaryValue else { throw corrupt("it is not a readable property list (truncated?)") }
        guard case .integer(let v)? = top["FormatVersion"] else { throw corrupt("FormatVersion is missing") }
        if v > Int128(formatVersion) { throw .versionTooNew(path: path, found: Int(clamping: v), supported: formatVersion) }
        guard v == 1 else { throw corrupt("FormatVersion \(v) is not valid") }
        guard case .string(let dev)? = top["DeviceID"], dev == deviceID else { throw .wrongKey("\(path) was made on another device") }
        guard case .dictionary(let keys)? = top["Keys"] else { throw corrupt("Keys is missing") }
        var wrapped: [String: [UInt8]] = [:]
        for (name, value) in keys.stringEntries {
            guard case .data(let d) = value else { throw corrupt("the key of group '\(name)' is not data") }
            wrapped[name] = d
        }
        return KeyTable(deviceID: deviceID, wrapped: wrapped)
    }

    func write(path: String) throws(KeychainError) {
        let top: [PlistKey: PlistValue] = [
            "FormatVersion": .integer(Int128(Self.formatVersion)),
            "DeviceID": .string(deviceID),
            "Keys": .dictionary(Dictionary(stringKeys: wrapped.mapValues { .data($0) })),
        ]
        let bytes = try KeychainError.binaryPlist(top)
        do { try FileSystem.writeAtomically(bytes, to: path) } catch {
            throw .system(error)
        }
    }

    static func ad(group: AccessGroup, deviceID: String) -> [UInt8] {
        var e = CanonicalEncoder()
        e.append("AHKC/1"); e.append("group-key"); e.append(group.rawValue); e.append(deviceID)
        return e.bytes
    }

    /// Unwraps a group key; `path` is for messages.
    static func unwrap(_ sealed: [UInt8], group: AccessGroup, deviceID: String, kek: SecureBytes, path: String) throws(KeychainError) -> SecureBytes {
        guard let akk = Sodium.open(sealed, key: kek, ad: ad(group: group, deviceID: deviceID)), akk.count == Sodium.keyBytes else {
            throw .corrupt(path: path, reason: "the key of access group '\(group.rawValue)' does not open under this device's key")
        }
        return akk
    }

    static func wrap(_ akk: SecureBytes, group: AccessGroup, deviceID: String, kek: SecureBytes) -> [UInt8] {
        Sodium.seal(akk, key: kek, ad: ad(group: group, deviceID: deviceID))
    }
}

extension KeychainError {
    /// A binary property list of `dictionary`, for the keychain's files and
    /// sealed boxes. An encoding failure is an error, never an empty file
    /// written over one that held keys or items.
    static func binaryPlist(_ dictionary: [PlistKey: PlistValue]) throws(KeychainError) -> [UInt8] {
        do { return try PlistCodec.encode(.dictionary(dictionary), format: .binary) } catch {
            throw .invalidParameter("cannot encode a keychain record: \(error)")
        }
    }
}
