import PropertyList

/// A type whose instances can be saved in a keyed archive and loaded back:
/// Swift's counterpart of `NSCoding`.
///
/// ```swift
/// final class ScaryBugData: KeyedCoding {
///     static let archivedClassName = "ScaryBugData"
///     var title: String; var rating: Float
///     func encode(with coder: KeyedArchiver) {
///         coder.encode(title, forKey: "Title")
///         coder.encode(rating, forKey: "Rating")
///     }
///     init(coder: KeyedUnarchiver) throws {
///         title = try coder.decodeString(forKey: "Title") ?? ""
///         rating = try coder.decodeFloat(forKey: "Rating")
///     }
/// }
/// ```
///
/// An instance reached twice is archived once and comes back as one
/// instance. A cycle between instances is archived, but `init(coder:)`
/// cannot be handed an instance that is not yet initialised: decoding one
/// throws ``KeyedArchiveError/decodingFailed(_:)`` (use a weak back-link set
/// after decoding instead).
public protocol KeyedCoding: AnyObject {
    /// The class name written as `$classname` (Foundation writes Swift classes as `Module.Class`).
    static var archivedClassName: String { get }
    /// The superclasses written after the class name in `$classes`; `["NSObject"]` unless given.
    static var archivedSuperclassNames: [String] { get }
    /// Writes the instance's state under keys of its choosing.
    func encode(with coder: KeyedArchiver)
    /// Makes an instance from what ``encode(with:)`` wrote.
    init(coder: KeyedUnarchiver) throws
}

extension KeyedCoding {
    public static var archivedSuperclassNames: [String] { ["NSObject"] }
}

/// Writes ``KeyedCoding`` instances into a keyed archive, as `NSKeyedArchiver` does.
///
/// A key that starts with `$` is stored as `$$…` (Foundation's escape;
/// ``KeyedUnarchiver`` undoes it).
public final class KeyedArchiver {
    private var current: ArchiveObject
    private var top = ArchiveObject(classChain: ["$top"])
    private var converted: [ObjectIdentifier: ArchiveObject] = [:]
    /// Keeps every encoded instance alive while its identifier is a key of `converted`.
    private var retained: [AnyObject] = []

    public init() {
        current = top
    }

    /// The archive of one root instance, as `NSKeyedArchiver.archivedData(withRootObject:)` makes.
    public static func archivedData(withRootObject root: any KeyedCoding, format: PlistFormat = .binary) throws(KeyedArchiveError) -> [UInt8] {
        let archiver = KeyedArchiver()
        archiver.encode(root, forKey: KeyedArchive.rootKey.string)
        return try archiver.encodedData(format: format)
    }

    /// What has been encoded (at the top level) so far, as an archive.
    public var archive: KeyedArchive {
        KeyedArchive(top: top.fields, inlineTopKeys: top.inlineKeys)
    }

    /// The archive's bytes.
    public func encodedData(format: PlistFormat = .binary) throws(KeyedArchiveError) -> [UInt8] {
        try archive.encode(format: format)
    }

    private func store(_ value: ArchiveValue?, _ key: String, inline: Bool) {
        let k = PlistKey(key.hasPrefix("$") ? "$" + key : key)
        current.fields[k] = value
        if inline { current.inlineKeys.insert(k) } else { current.inlineKeys.remove(k) }
    }

    /// Encodes an instance (or `nil`, which is left out, as `$null`).
    public func encode(_ object: (any KeyedCoding)?, forKey key: String) {
        store(object.map(convert), key, inline: false)
    }

    /// Encodes an array of instances as an `NSArray`.
    public func encode(_ objects: [any KeyedCoding], forKey key: String) {
        store(.array(objects.map(convert)), key, inline: false)
    }

    /// Encodes a Foundation value (a string, number, date, data, collection, …) as an object.
    public func encode(_ value: ArchiveValue?, forKey key: String) {
        store(value, key, inline: false)
    }

    /// Encodes a string as an `NSString`.
    public func encode(_ string: String?, forKey key: String) { store(string.map { .string($0) }, key, inline: false) }
    /// Encodes a date as an `NSDate`.
    public func encode(_ date: PlistDate?, forKey key: String) { store(date.map { .date($0) }, key, inline: false) }
    /// Encodes bytes as an `NSData` object (`encodeObject:` of `NSData`).
    public func encode(_ data: [UInt8]?, forKey key: String) { store(data.map { .data($0) }, key, inline: false) }
    /// Stores bytes in the object itself (`encodeBytes:length:forKey:`).
    public func encodeBytes(_ bytes: [UInt8], forKey key: String) { store(.data(bytes), key, inline: true) }
    /// `encodeInteger:forKey:`.
    public func encode(_ value: Int, forKey key: String) { store(.integer(Int128(value)), key, inline: true) }
    /// `encodeInt64:forKey:`.
    public func encode(_ value: Int64, forKey key: String) { store(.integer(Int128(value)), key, inline: true) }
    /// `encodeInt32:forKey:`.
    public func encode(_ value: Int32, forKey key: String) { store(.integer(Int128(value)), key, inline: true) }
    /// `encodeBool:forKey:`.
    public func encode(_ value: Bool, forKey key: String) { store(.bool(value), key, inline: true) }
    /// `encodeDouble:forKey:`.
    public func encode(_ value: Double, forKey key: String) { store(.real(value), key, inline: true) }
    /// `encodeFloat:forKey:` (stored as a double, as Foundation stores it).
    public func encode(_ value: Float, forKey key: String) { store(.real(Double(value)), key, inline: true) }

    private func convert(_ object: any KeyedCoding) -> ArchiveValue {
        let id = ObjectIdentifier(object)
        if let done = converted[id] { return .object(done) }
        let type = type(of: object)
        let node = ArchiveObject(classChain: [type.archivedClassName] + type.archivedSuperclassNames)
        converted[id] = node
        retained.append(object)
        let saved = current
        current = node
        object.encode(with: self)
        current = saved
        return .object(node)
    }
}

/// Reads ``KeyedCoding`` instances out of a keyed archive, as `NSKeyedUnarchiver` does.
///
/// Only the classes given are made; an object of any other class is an
/// error, as with `unarchivedObject(ofClasses:from:)`.
public final class KeyedUnarchiver {
    private var classes: [String: any KeyedCoding.Type]
    private var current: [PlistKey: ArchiveValue]
    private var made: [ObjectIdentifier: AnyObject] = [:]
    private var making: Set<ObjectIdentifier> = []
    /// The archive being read.
    public let archive: KeyedArchive

    /// A decoder of `archive`'s `$top`, making instances of `classes`.
    public init(archive: KeyedArchive, classes: [any KeyedCoding.Type]) {
        self.archive = archive
        self.current = archive.top
        var byName: [String: any KeyedCoding.Type] = [:]
        for c in classes { byName[c.archivedClassName] = c }
        self.classes = byName
    }

    /// Makes objects archived under `name` as instances of `type`, as
    /// `NSKeyedUnarchiver.setClass(_:forClassName:)` does: Foundation writes a
    /// Swift class as `Module.Class`.
    public func setClass(_ type: any KeyedCoding.Type, forClassName name: String) {
        classes[name] = type
    }

    /// A decoder of an archive's bytes (binary or XML).
    public convenience init(data: [UInt8], classes: [any KeyedCoding.Type]) throws(KeyedArchiveError) {
        self.init(archive: try KeyedArchive.decode(data), classes: classes)
    }

    /// The root instance of an archive, as `unarchivedObject(ofClass:from:)` returns it.
    public static func unarchivedObject<T: KeyedCoding>(ofClass type: T.Type, from data: [UInt8],
                                                        classes: [any KeyedCoding.Type] = []) throws(KeyedArchiveError) -> T? {
        let decoder = try KeyedUnarchiver(data: data, classes: [type] + classes)
        return try decoder.decodeObject(of: type, forKey: KeyedArchive.rootKey.string)
    }

    private func raw(_ key: String) -> ArchiveValue? {
        current[PlistKey(key.hasPrefix("$") ? "$" + key : key)]
    }

    private func mismatch(_ key: String, _ expected: String, _ found: ArchiveValue) -> KeyedArchiveError {
        .decodingFailed("the value for key \(key) is \(found.className), not \(expected)")
    }

    /// Whether the key holds a value (a `$null` field holds none).
    public func containsValue(forKey key: String) -> Bool { raw(key) != nil }

    /// The value under the key as the graph holds it (`decodeObjectForKey:` without a class check).
    public func decodeObject(forKey key: String) -> ArchiveValue? { raw(key) }

    /// An instance of `type` under the key, or `nil` when the key holds none.
    public func decodeObject<T: KeyedCoding>(of type: T.Type, forKey key: String) throws(KeyedArchiveError) -> T? {
        guard let value = raw(key) else { return nil }
        guard case .object(let node) = value else { throw mismatch(key, type.archivedClassName, value) }
        let instance = try make(node)
        guard let typed = instance as? T else { throw mismatch(key, type.archivedClassName, value) }
        return typed
    }

    /// An array of instances of `type` under the key (`[]` when the key holds none).
    public func decodeArray<T: KeyedCoding>(of type: T.Type, forKey key: String) throws(KeyedArchiveError) -> [T] {
        guard let value = raw(key) else { return [] }
        guard case .array(let items, _) = value else { throw mismatch(key, "NSArray", value) }
        var out: [T] = []
        out.reserveCapacity(items.count)
        for item in items {
            guard case .object(let node) = item, let typed = try make(node) as? T else { throw mismatch(key, "an array of \(type.archivedClassName)", value) }
            out.append(typed)
        }
        return out
    }

    /// `decodeObjectOfClass:[NSString class]`.
    public func decodeString(forKey key: String) throws(KeyedArchiveError) -> String? {
        guard let value = raw(key) else { return nil }
        guard case .string(let s, _) = value else { throw mismatch(key, "NSString", value) }
        return s
    }

    /// `decodeObjectOfClass:[NSData class]` or `decodeBytesForKey:`.
    public func decodeData(forKey key: String) throws(KeyedArchiveError) -> [UInt8]? {
        guard let value = raw(key) else { return nil }
        guard case .data(let d, _) = value else { throw mismatch(key, "NSData", value) }
        return d
    }

    /// `decodeObjectOfClass:[NSDate class]`.
    public func decodeDate(forKey key: String) throws(KeyedArchiveError) -> PlistDate? {
        guard let value = raw(key) else { return nil }
        guard case .date(let d) = value else { throw mismatch(key, "NSDate", value) }
        return d
    }

    /// `decodeIntegerForKey:`: 0 when the key holds nothing; an error when it holds a
    /// non-integer or one that does not fit.
    public func decodeInteger(forKey key: String) throws(KeyedArchiveError) -> Int {
        guard let value = raw(key) else { return 0 }
        switch value {
        case .integer(let n):
            guard let i = Int(exactly: n) else { throw .decodingFailed("the value for key \(key) (\(n)) does not fit an Int") }
            return i
        case .bool(let b): return b ? 1 : 0
        case .real(let r):
            guard let i = Int(exactly: r.rounded(.towardZero)) else { throw .decodingFailed("the value for key \(key) (\(r)) does not fit an Int") }
            return i
        default: throw mismatch(key, "an integer", value)
        }
    }

    /// `decodeBoolForKey:`: false when the key holds nothing.
    public func decodeBool(forKey key: String) throws(KeyedArchiveError) -> Bool {
        guard let value = raw(key) else { return false }
        switch value {
        case .bool(let b): return b
        case .integer(let n): return n != 0
        default: throw mismatch(key, "a boolean", value)
        }
    }

    /// `decodeDoubleForKey:`: 0 when the key holds nothing.
    public func decodeDouble(forKey key: String) throws(KeyedArchiveError) -> Double {
        guard let value = raw(key) else { return 0 }
        switch value {
        case .real(let r): return r
        case .integer(let n): return Double(n)
        default: throw mismatch(key, "a number", value)
        }
    }

    /// `decodeFloatForKey:`: 0 when the key holds nothing.
    public func decodeFloat(forKey key: String) throws(KeyedArchiveError) -> Float {
        Float(try decodeDouble(forKey: key))
    }

    private func make(_ node: ArchiveObject) throws(KeyedArchiveError) -> AnyObject {
        let id = ObjectIdentifier(node)
        if let done = made[id] { return done }
        guard !making.contains(id) else {
            throw .decodingFailed("an object of class \(node.className) holds itself through its fields (a cycle init(coder:) cannot make)")
        }
        guard let type = classes[node.className] else {
            throw .decodingFailed("cannot decode object of class (\(node.className)); the class is not among those given to the unarchiver")
        }
        making.insert(id)
        let saved = current
        current = node.fields
        defer { current = saved; making.remove(id) }
        let instance: any KeyedCoding
        do {
            instance = try type.init(coder: self)
        } catch let error as KeyedArchiveError {
            throw error
        } catch {
            throw .decodingFailed("\(node.className).init(coder:): \(error)")
        }
        made[id] = instance
        return instance
    }
}
