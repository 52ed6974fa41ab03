import PropertyList

/// A keyed archive (`NSKeyedArchiver`'s format) as a graph of values.
///
/// `top` holds the archive's `$top` entries under their keys as stored
/// (``rootKey`` for `archivedData(withRootObject:)`); values are
/// ``ArchiveValue``s, so Foundation's value classes are plain values and
/// every other object is an ``ArchiveObject``, shared where the archive
/// shares it.
///
/// ```swift
/// let archive = try KeyedArchive.decode(bytes)
/// if case .object(let bug)? = archive.root { print(bug.className) }
/// let again = try archive.encode(format: .binary)
/// ```
public struct KeyedArchive: Sendable {
    /// The `$top` key of `archivedData(withRootObject:)` (`NSKeyedArchiveRootObjectKey`).
    public static let rootKey: PlistKey = "root"
    /// The only `$archiver` this module reads and writes.
    public static let archiverName = "NSKeyedArchiver"
    /// The only `$version` this module reads and writes.
    public static let version: Int128 = 100_000
    /// The deepest chain of objects the decoder follows and the encoder writes.
    ///
    /// Decoding recurses once per object reached from another; the bound
    /// turns a hostile chain of 100,000 objects into an error, not a crash.
    public static let maximumDepth = PlistValue.maximumDepth
    /// The most values the encoder writes and ``KeyedArchiveGraphForm`` shows for one archive.
    ///
    /// A value that Foundation shares (an array reached from two places) is
    /// a value here and is written once per place; an archive built to
    /// double at each level would otherwise grow without bound.
    public static let maximumExpansion = 16_000_000

    /// The `$top` entries.
    public var top: [PlistKey: ArchiveValue]
    /// `$top` keys whose scalar is stored in `$top` itself (`encodeInteger:forKey:` on the archiver).
    public var inlineTopKeys: Set<PlistKey>

    /// An archive of `top`.
    public init(top: [PlistKey: ArchiveValue], inlineTopKeys: Set<PlistKey> = []) {
        self.top = top
        self.inlineTopKeys = inlineTopKeys
    }

    /// An archive of one root object, as `archivedData(withRootObject:)` makes.
    public init(root: ArchiveValue) {
        self.init(top: [Self.rootKey: root])
    }

    /// The root object (`$top.root`), or `nil` when there is none.
    public var root: ArchiveValue? { top[Self.rootKey] }

    /// Whether `value` looks like a keyed archive (a dictionary with `$archiver` and `$objects`):
    /// the test a printer uses before decoding.
    public static func isArchive(_ value: PlistValue) -> Bool {
        guard case .dictionary(let d) = value else { return false }
        return d["$archiver"] != nil && d["$objects"] != nil && d["$top"] != nil
    }

    /// Decodes an archive from a binary or XML property list.
    ///
    /// - Throws: ``KeyedArchiveError``: the plist's own error, a wrong `$archiver`
    ///   or `$version`, a UID out of range, a malformed object or class record,
    ///   nesting beyond ``maximumDepth``.
    public static func decode(_ bytes: [UInt8]) throws(KeyedArchiveError) -> KeyedArchive {
        let plist: PlistValue
        do { plist = try PlistCodec.decode(bytes) } catch { throw .propertyList(error) }
        return try decode(plist: plist)
    }

    /// Decodes an archive already read as a property list.
    public static func decode(plist: PlistValue) throws(KeyedArchiveError) -> KeyedArchive {
        try LargeStack.run { () throws(KeyedArchiveError) -> KeyedArchive in
            var reader = try ArchiveReader(plist)
            return try reader.archive()
        }
    }

    /// The archive as a property list (`$archiver`, `$version`, `$top`, `$objects`).
    ///
    /// - Parameter maximumValues: the most values written, shared Foundation values
    ///   counted once per place (``maximumExpansion`` unless given).
    public func plist(maximumValues: Int = KeyedArchive.maximumExpansion) throws(KeyedArchiveError) -> PlistValue {
        try LargeStack.run { () throws(KeyedArchiveError) -> PlistValue in
            var writer = ArchiveWriter(limit: maximumValues)
            return try writer.archive(self)
        }
    }

    /// The archive's bytes in a property-list format (`.binary`, as Foundation
    /// writes by default, or `.xml`).
    public func encode(format: PlistFormat = .binary) throws(KeyedArchiveError) -> [UInt8] {
        let value = try plist()
        do { return try PlistCodec.encode(value, format: format) } catch { throw .propertyList(error) }
    }
}
