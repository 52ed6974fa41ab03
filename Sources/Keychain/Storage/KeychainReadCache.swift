import AppHomeSystem

/// The keychain's files as a long-running process (prefsd) last read them:
/// the device record, the key table, each group file's records and each
/// app's credential, kept while the file is unchanged (``StampedFileCache``),
/// so a look-up costs a `stat` per file instead of an open, a read and a
/// parse.
///
/// Only what is on disk is kept, as it is on disk: wrapped keys, sealed
/// items, the credential token a caller must show. Every check a read makes
/// (the file's owner and mode, the device record's seal, the key check and
/// the group file's seal under the keys of the call) is made again on each
/// call from what is kept; a key is never kept here (the keybag keeps the
/// open class keys, under its own rules). Shared by every thread of the
/// process.
public final class KeychainReadCache: Sendable {
    let records = StampedFileCache<DeviceRecord>(limit: 8, followsLinks: false)
    let keyTables = StampedFileCache<KeyTable>(limit: 8, followsLinks: false)
    let groupFiles = StampedFileCache<GroupFile.Records>(limit: 512, followsLinks: false)
    let credentials = StampedFileCache<String>(limit: 512)

    public init() {}

    /// Drops everything kept.
    public func removeAll() {
        records.removeAll(); keyTables.removeAll(); groupFiles.removeAll(); credentials.removeAll()
    }
}
