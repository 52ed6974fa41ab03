import KeyedArchive
import PropertyList

/// `-unarchive` and `-archive`: keyed archives to and from their graph form
/// (`Schemas/keyed-archive.md`).
enum Unarchiving {
    /// `value` with keyed archives shown as their graphs: the value itself when it
    /// is an archive, else every data value inside it that holds one (as a
    /// preference domain stores archived colours and URLs). Data that is not an
    /// archive stays data; an archive that fails to decode is an error.
    static func graph(_ value: PlistValue) throws(PlutilError) -> PlistValue {
        if KeyedArchive.isArchive(value) {
            do { return try KeyedArchiveGraphForm.value(of: try KeyedArchive.decode(plist: value)) } catch {
                throw .message(error.description)
            }
        }
        switch value {
        case .data(let bytes):
            guard looksLikePlist(bytes), let inner = try? PlistCodec.decode(bytes), KeyedArchive.isArchive(inner) else { return value }
            return try graph(inner)
        case .array(let items):
            var out: [PlistValue] = []
            out.reserveCapacity(items.count)
            for item in items { out.append(try graph(item)) }
            return .array(out)
        case .dictionary(let d):
            var out: [PlistKey: PlistValue] = [:]
            out.reserveCapacity(d.count)
            for (k, v) in d { out[k] = try graph(v) }
            return .dictionary(out)
        default:
            return value
        }
    }

    private static func looksLikePlist(_ bytes: [UInt8]) -> Bool {
        bytes.starts(with: Array("bplist00".utf8)) || PlistCodec.detectFormat(bytes) == .xml
    }

    /// The archive of a graph form (its root).
    static func archive(_ value: PlistValue) throws(PlutilError) -> PlistValue {
        do { return try KeyedArchiveGraphForm.archive(of: value).plist() } catch { throw .message(error.description) }
    }
}
