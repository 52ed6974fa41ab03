import KeyedArchive
import PropertyList

/// `-unarchive` and `-archive`: keyed archives to and from their graph form
/// (`Schemas/keyed-archive.md`).
enum Unarchiving {
    /// `value` with keyed archives (and data holding them) shown as their graphs.
    static func graph(_ value: PlistValue) throws(PlutilError) -> PlistValue {
        do { return try KeyedArchiveGraphForm.unarchivingValues(in: value) } catch { throw .message(error.description) }
    }

    /// The archive of a graph form (its root).
    static func archive(_ value: PlistValue) throws(PlutilError) -> PlistValue {
        do { return try KeyedArchiveGraphForm.archive(of: value).plist() } catch { throw .message(error.description) }
    }
}
