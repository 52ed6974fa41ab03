import PropertyList

/// A keyed archive shown as one property-list value, and back
/// (`Schemas/keyed-archive.md`): what `plutil -unarchive` prints and
/// `plutil -archive` reads.
///
/// - Foundation values are plain values: strings, numbers, booleans, dates,
///   data, arrays; sets and ordered sets as arrays; dictionaries as
///   dictionaries (a key that starts with `$` shown as `$$…`); `NSUUID` as
///   its uppercase string; `NSURL` as its string (`relative -- base` when
///   it has a base, as `NSURL` describes itself).
/// - Any other object is a dictionary of `"$class"` (its class name) and its
///   fields, under their keys as archived; a field that holds `$null` is left out.
/// - An object reached again while it is still being shown (a cycle) is
///   `{"$ref": N}`, N its UID in the archive.
/// - The root alone when `$top` holds only `root`, else a dictionary of the `$top` keys.
public enum KeyedArchiveGraphForm {
    /// The graph form of an archive.
    ///
    /// - Throws: ``KeyedArchiveError/tooLarge(limit:)`` when shared objects would be
    ///   repeated beyond ``KeyedArchive/maximumExpansion`` values,
    ///   ``KeyedArchiveError/unrepresentable(_:)`` for a dictionary key that is not a string.
    public static func value(of archive: KeyedArchive,
                             maximumValues: Int = KeyedArchive.maximumExpansion) throws(KeyedArchiveError) -> PlistValue {
        try LargeStack.run { () throws(KeyedArchiveError) -> PlistValue in try shown(archive, maximumValues) }
    }

    private static func shown(_ archive: KeyedArchive, _ limit: Int) throws(KeyedArchiveError) -> PlistValue {
        var shower = Shower(limit: limit)
        if archive.top.count == 1, let root = archive.root {
            return try shower.show(root)
        }
        var out: [PlistKey: PlistValue] = [:]
        for (key, value) in archive.top { out[key] = try shower.show(value) }
        return .dictionary(out)
    }

    /// An archive of a graph form: its root is `value` (the reverse of ``value(of:)``
    /// for an archive with one root).
    ///
    /// Objects get the class chain `[$class, "NSObject"]`; numbers and booleans
    /// in their fields are stored in the object (as `encodeInteger:forKey:` does),
    /// everything else by UID.
    ///
    /// - Throws: ``KeyedArchiveError/unrepresentable(_:)`` for `{"$ref": N}` (the form
    ///   does not say which object N was) or a `$class` that is not a string.
    public static func archive(of value: PlistValue) throws(KeyedArchiveError) -> KeyedArchive {
        try LargeStack.run { () throws(KeyedArchiveError) -> KeyedArchive in
            var depth = 0
            return KeyedArchive(root: try build(value, depth: &depth))
        }
    }

    private static func build(_ value: PlistValue, depth: inout Int) throws(KeyedArchiveError) -> ArchiveValue {
        depth += 1
        defer { depth -= 1 }
        guard depth <= KeyedArchive.maximumDepth else { throw .tooDeep(limit: KeyedArchive.maximumDepth) }
        switch value {
        case .string(let s): return .string(s)
        case .integer(let n): return .integer(n)
        case .real(let r): return .real(r)
        case .bool(let b): return .bool(b)
        case .date(let d): return .date(d)
        case .data(let d): return .data(d)
        case .uid(let u): throw .unrepresentable("a UID (\(u)) in the graph form")
        case .array(let items):
            var out: [ArchiveValue] = []
            out.reserveCapacity(items.count)
            for item in items { out.append(try build(item, depth: &depth)) }
            return .array(out)
        case .dictionary(let d):
            if d["$ref"] != nil, d["$class"] == nil {
                throw .unrepresentable("{\"$ref\": …}: the graph form does not say which object a back-reference names")
            }
            if let cls = d["$class"] {
                guard case .string(let name) = cls, !name.isEmpty else { throw .unrepresentable("a $class that is not a class name") }
                if name == "NSNull" && d.count == 1 { return .null }
                let object = ArchiveObject(className: name)
                for key in d.keys.sorted() where key.string != "$class" {
                    let field = try build(d[key]!, depth: &depth)
                    object.fields[key] = field
                    switch field {
                    case .bool, .integer, .real: object.inlineKeys.insert(key)
                    default: break
                    }
                }
                return .object(object)
            }
            var entries: [ArchiveEntry] = []
            entries.reserveCapacity(d.count)
            for key in d.keys.sorted() {
                entries.append(ArchiveEntry(unescape(key.string), try build(d[key]!, depth: &depth)))
            }
            return .dictionary(entries)
        }
    }

    /// `value` with keyed archives shown in the graph form: the value itself when
    /// it is an archive, else every data value inside it that holds one (as a
    /// preference domain stores archived colours, fonts and URLs). Data that is
    /// not an archive stays data.
    ///
    /// - Throws: ``KeyedArchiveError`` for an archive that fails to decode.
    public static func unarchivingValues(in value: PlistValue) throws(KeyedArchiveError) -> PlistValue {
        if KeyedArchive.isArchive(value) {
            return try Self.value(of: try KeyedArchive.decode(plist: value))
        }
        switch value {
        case .data(let bytes):
            let isPlist = bytes.starts(with: Array("bplist00".utf8)) || PlistCodec.detectFormat(bytes) == .xml
            guard isPlist, let inner = try? PlistCodec.decode(bytes), KeyedArchive.isArchive(inner) else { return value }
            return try Self.value(of: try KeyedArchive.decode(plist: inner))
        case .array(let items):
            var out: [PlistValue] = []
            out.reserveCapacity(items.count)
            for item in items { out.append(try unarchivingValues(in: item)) }
            return .array(out)
        case .dictionary(let d):
            var out: [PlistKey: PlistValue] = [:]
            out.reserveCapacity(d.count)
            for (k, v) in d { out[k] = try unarchivingValues(in: v) }
            return .dictionary(out)
        default:
            return value
        }
    }

    static func escape(_ key: String) -> String { key.hasPrefix("$") ? "$" + key : key }
    static func unescape(_ key: String) -> String { key.hasPrefix("$$") ? String(key.dropFirst()) : key }

    /// Shows values, counting them against ``KeyedArchive/maximumExpansion``.
    private struct Shower {
        let limit: Int
        var onPath: Set<ObjectIdentifier> = []
        var count = 0
        var depth = 0

        mutating func show(_ value: ArchiveValue) throws(KeyedArchiveError) -> PlistValue {
            count += 1
            guard count <= limit else { throw .tooLarge(limit: limit) }
            depth += 1
            defer { depth -= 1 }
            guard depth <= KeyedArchive.maximumDepth else { throw .tooDeep(limit: KeyedArchive.maximumDepth) }
            switch value {
            case .null: return .dictionary(["$class": .string("NSNull")])
            case .string(let s, _): return .string(s)
            case .bool(let b): return .bool(b)
            case .integer(let n): return .integer(n)
            case .real(let r): return .real(r)
            case .date(let d): return .date(d)
            case .data(let d, _): return .data(d)
            case .array(let items, _), .set(let items, _), .orderedSet(let items, _):
                var out: [PlistValue] = []
                out.reserveCapacity(items.count)
                for item in items { out.append(try show(item)) }
                return .array(out)
            case .dictionary(let entries, _):
                var out: [PlistKey: PlistValue] = [:]
                out.reserveCapacity(entries.count)
                for entry in entries {
                    guard case .string(let key, _) = entry.key else {
                        throw .unrepresentable("a dictionary key of class \(entry.key.className) in the graph form")
                    }
                    out[PlistKey(escape(key))] = try show(entry.value)
                }
                return .dictionary(out)
            case .uuid(let bytes): return .string(KeyedArchiveGraphForm.uuidString(bytes))
            case .url(let base, let relative): return .string(KeyedArchiveGraphForm.urlString(base: base, relative: relative))
            case .reference(let uid): return .dictionary(["$ref": .integer(Int128(uid))])
            case .object(let object):
                let id = ObjectIdentifier(object)
                if onPath.contains(id) { return .dictionary(["$ref": .integer(Int128(object.archiveUID ?? 0))]) }
                onPath.insert(id)
                defer { onPath.remove(id) }
                var out: [PlistKey: PlistValue] = ["$class": .string(object.className)]
                out.reserveCapacity(object.fields.count + 1)
                for (key, field) in object.fields { out[key] = try show(field) }
                return .dictionary(out)
            }
        }
    }

    /// `NSUUID`'s string: 8-4-4-4-12 uppercase hexadecimal digits.
    public static func uuidString(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        for (i, b) in bytes.enumerated() {
            if i == 4 || i == 6 || i == 8 || i == 10 { out.append(UInt8(ascii: "-")) }
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 15)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// `NSURL`'s description: the relative string, then ` -- ` and the base when there is one.
    public static func urlString(base: URLBase?, relative: String) -> String {
        guard let base else { return relative }
        return relative + " -- " + urlString(base: base.base, relative: base.relative)
    }
}
