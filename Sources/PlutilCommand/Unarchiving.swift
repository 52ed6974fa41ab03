import KeyedArchive
import PropertyList

/// `-unarchive` and `-archive`: keyed archives to and from their graph form
/// (`Schemas/keyed-archive.md`).
enum Unarchiving {
    /// `value` with keyed archives (and data holding them) shown as their graphs.
    static func graph(_ value: PlistValue) throws(PlutilError) -> PlistValue {
        do { return try KeyedArchiveGraphForm.unarchivingValues(in: value) } catch { throw .message(error.description) }
    }

    /// `-extract KEYPATH FMT -unarchive`: the value at `keyPath` in the object graph.
    /// Each component is applied to the graph form: a keyed archive (or data holding
    /// one) met on the way is shown as its graph first, a `{"$ref": N}` is followed
    /// to the value with `"$id": N`, and `{"$id": N, "$value": v}` is `v`. What is
    /// found is shown as its graph too (archives inside it unarchived).
    static func value(at keyPath: KeyPath, in root: PlistValue) throws(PlutilError) -> PlistValue? {
        var labels: [Int128: PlistValue] = [:]
        var inGraph = false
        func step(_ value: PlistValue) throws(PlutilError) -> PlistValue {
            if !inGraph, isArchive(value) {
                let shown = try graph(value)
                labels = KeyedArchiveGraphForm.labels(in: shown)
                inGraph = true
                return KeyedArchiveGraphForm.followed(shown, labels: labels)
            }
            return inGraph ? KeyedArchiveGraphForm.followed(value, labels: labels) : value
        }
        var current = try step(root)
        for component in keyPath.components {
            guard let next = KeyPath.step(component, in: current) else { return nil }
            current = try step(next)
        }
        return inGraph ? current : try graph(current)
    }

    /// Whether `value` is a keyed archive or data holding one.
    private static func isArchive(_ value: PlistValue) -> Bool {
        if KeyedArchive.isArchive(value) { return true }
        guard case .data(let bytes) = value,
              bytes.starts(with: Array("bplist00".utf8)) || PlistCodec.detectFormat(bytes) == .xml,
              let inner = try? PlistCodec.decode(bytes) else { return false }
        return KeyedArchive.isArchive(inner)
    }

    /// The archive of a graph form (its root).
    static func archive(_ value: PlistValue) throws(PlutilError) -> PlistValue {
        do { return try KeyedArchiveGraphForm.archive(of: value).plist() } catch { throw .message(error.description) }
    }
}
