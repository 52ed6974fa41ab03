import PropertyList

/// A keyed archive shown as one property-list value, and back
/// (`Schemas/keyed-archive.md`, form 2): what `plutil -unarchive` prints and
/// `plutil -archive` reads.
///
/// - Foundation values are plain values: strings, numbers, booleans, dates,
///   data, arrays; sets and ordered sets as arrays; dictionaries as
///   dictionaries (a key that starts with `$` shown as `$$…`); `NSUUID` as
///   its uppercase string; `NSURL` as the URL it denotes (its relative string
///   resolved against its base, RFC 3986).
/// - Any other object is a dictionary of `"$class"` (its class name) and its
///   fields, under their keys as archived; a field that holds `$null` is left out.
/// - An entry of the archive reached more than once is shown in full once, with
///   `"$id": N` (N its UID; a value that is not an object as `{"$id": N, "$value": …}`),
///   and is `{"$ref": N}` everywhere else: shared objects and cycles alike, so the
///   form is linear in the archive. Numbers, dates, `NSNull`, UUIDs and short
///   strings, data and URLs are shown in full each time.
/// - The root alone when `$top` holds only `root`, else a dictionary of the `$top` keys.
public enum KeyedArchiveGraphForm {
    /// The graph form of an archive (it is written out first: the form is made from
    /// the archive's entries, so what it shares is what the form shares).
    ///
    /// - Throws: ``KeyedArchiveError/tooLarge(limit:)`` beyond `maximumValues` values,
    ///   ``KeyedArchiveError/unrepresentable(_:)`` for a dictionary key that is not a string.
    public static func value(of archive: KeyedArchive,
                             maximumValues: Int = KeyedArchive.maximumExpansion) throws(KeyedArchiveError) -> PlistValue {
        try value(ofArchive: try archive.plist(maximumValues: maximumValues), maximumValues: maximumValues)
    }

    /// The graph form of an archive read as a property list (`$archiver`, `$objects`, …).
    ///
    /// - Throws: ``KeyedArchiveError``: what ``KeyedArchive/decode(plist:)`` refuses, and
    ///   what ``value(of:maximumValues:)`` refuses.
    public static func value(ofArchive plist: PlistValue,
                             maximumValues: Int = KeyedArchive.maximumExpansion) throws(KeyedArchiveError) -> PlistValue {
        try LargeStack.run { () throws(KeyedArchiveError) -> PlistValue in
            var shower = try GraphFormShower(plist, limit: maximumValues)
            return try shower.form()
        }
    }

    /// An archive of a graph form: its root is `value` (the reverse of ``value(of:maximumValues:)``
    /// for an archive with one root). Form 1 (no `$id`) is read as before.
    ///
    /// Objects get the class chain `[$class, "NSObject"]`; numbers and booleans
    /// in their fields are stored in the object (as `encodeInteger:forKey:` does),
    /// everything else by UID. Every `$id` is one entry of the archive, and each
    /// `{"$ref": N}` names it (before or after it, in a cycle or not).
    ///
    /// - Throws: ``KeyedArchiveError/unrepresentable(_:)`` for a `$ref` to no `$id`,
    ///   an `$id` given twice, or a `$class` that is not a string.
    public static func archive(of value: PlistValue) throws(KeyedArchiveError) -> KeyedArchive {
        try LargeStack.run { () throws(KeyedArchiveError) -> KeyedArchive in
            var builder = GraphFormBuilder()
            return KeyedArchive(root: try builder.archiveValue(of: value))
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
            return try Self.value(ofArchive: value)
        }
        switch value {
        case .data(let bytes):
            let isPlist = bytes.starts(with: Array("bplist00".utf8)) || PlistCodec.detectFormat(bytes) == .xml
            guard isPlist, let inner = try? PlistCodec.decode(bytes), KeyedArchive.isArchive(inner) else { return value }
            return try Self.value(ofArchive: inner)
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

    /// The values of a graph form that carry an `"$id"`, by id: what each `{"$ref": N}` names.
    public static func labels(in form: PlistValue) -> [Int128: PlistValue] {
        var out: [Int128: PlistValue] = [:]
        func walk(_ value: PlistValue) {
            switch value {
            case .array(let items): for item in items { walk(item) }
            case .dictionary(let d):
                if case .integer(let id)? = d["$id"], out[id] == nil { out[id] = value }
                for (_, v) in d { walk(v) }
            default: break
            }
        }
        walk(form)
        return out
    }

    /// `value` as a key path sees it: a `{"$ref": N}` is the value with `"$id": N`
    /// (in `labels`, from ``labels(in:)``), and `{"$id": N, "$value": v}` is `v`.
    public static func followed(_ value: PlistValue, labels: [Int128: PlistValue]) -> PlistValue {
        var current = value
        for _ in 0..<2 {
            guard case .dictionary(let d) = current else { return current }
            if d.count == 1, case .integer(let id)? = d["$ref"], let target = labels[id] {
                current = target
            } else if d.count == 2, d["$id"] != nil, let inner = d["$value"] {
                return inner
            } else {
                return current
            }
        }
        return current
    }

    static func escape(_ key: String) -> String { key.hasPrefix("$") ? "$" + key : key }
    static func unescape(_ key: String) -> String { key.hasPrefix("$$") ? String(key.dropFirst()) : key }

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

    /// The URL an `NSURL` denotes: `relative` resolved against `base` as RFC 3986
    /// (section 5.2) and Foundation resolve it; `relative` alone without a base.
    public static func urlString(base: URLBase?, relative: String) -> String {
        guard let base else { return relative }
        return URLResolution.resolve(relative, against: urlString(base: base.base, relative: base.relative))
    }
}
