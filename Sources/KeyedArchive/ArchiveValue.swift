import PropertyList

/// A value in a decoded keyed archive: what a Foundation value class holds,
/// or a reference to an object of any other class.
///
/// Foundation's value classes (strings, numbers, dates, data, collections,
/// `NSNull`, `NSUUID`, `NSURL`) become plain values, so two references to one
/// `NSArray` in the archive are two equal arrays here. Objects of every other
/// class are ``ArchiveObject`` instances, compared and hashed by identity:
/// shared objects stay shared and cycles through them are kept.
///
/// A cycle that passes only through Foundation collections (an array that
/// holds itself, or holds an object whose field is that array) cannot be a
/// value; the inner reference is kept as ``reference(_:)`` with the UID the
/// collection had in the archive.
public indirect enum ArchiveValue: Hashable, @unchecked Sendable {
    /// `NSNull`.
    case null
    /// `NSString`; `mutable` for `NSMutableString`.
    case string(String, mutable: Bool = false)
    /// `NSNumber` holding a boolean (kept apart from the integers 0 and 1).
    case bool(Bool)
    /// `NSNumber` holding an integer.
    case integer(Int128)
    /// `NSNumber` holding a floating-point number.
    case real(Double)
    /// `NSDate` (`NS.time`).
    case date(PlistDate)
    /// `NSData`; `mutable` for `NSMutableData`.
    case data([UInt8], mutable: Bool = false)
    /// `NSArray`; `mutable` for `NSMutableArray`.
    case array([ArchiveValue], mutable: Bool = false)
    /// `NSDictionary`; `mutable` for `NSMutableDictionary`. Entries in archive order.
    case dictionary([ArchiveEntry], mutable: Bool = false)
    /// `NSSet`; `mutable` for `NSMutableSet`. Members in archive order.
    case set([ArchiveValue], mutable: Bool = false)
    /// `NSOrderedSet`; `mutable` for `NSMutableOrderedSet`.
    case orderedSet([ArchiveValue], mutable: Bool = false)
    /// `NSUUID`: its 16 bytes.
    case uuid([UInt8])
    /// `NSURL`: an optional base URL and the relative string.
    case url(base: URLBase?, relative: String)
    /// An object of any other class.
    case object(ArchiveObject)
    /// A reference to a Foundation collection still being decoded (a cycle
    /// through collections only): the collection's UID in the archive.
    case reference(UInt64)
    /// A Foundation collection, string or data that is one entry of the archive
    /// wherever it is reached (the graph form's `{"$id": N, "$value": …}`): the
    /// encoder writes it once, and a collection may hold itself through it.
    case shared(SharedValue)

    /// The Foundation class name this value is archived under.
    public var className: String {
        switch self {
        case .null: return "NSNull"
        case .string(_, let mutable): return mutable ? "NSMutableString" : "NSString"
        case .bool, .integer, .real: return "NSNumber"
        case .date: return "NSDate"
        case .data(_, let mutable): return mutable ? "NSMutableData" : "NSData"
        case .array(_, let mutable): return mutable ? "NSMutableArray" : "NSArray"
        case .dictionary(_, let mutable): return mutable ? "NSMutableDictionary" : "NSDictionary"
        case .set(_, let mutable): return mutable ? "NSMutableSet" : "NSSet"
        case .orderedSet(_, let mutable): return mutable ? "NSMutableOrderedSet" : "NSOrderedSet"
        case .uuid: return "NSUUID"
        case .url: return "NSURL"
        case .object(let o): return o.className
        case .reference: return "reference"
        case .shared(let box): return box.value.className
        }
    }

    /// A property-list scalar as the value Foundation archives it as (a string,
    /// number, boolean, data or date); `nil` for a UID, an array or a dictionary.
    init?(scalar value: PlistValue) {
        switch value {
        case .string(let s): self = .string(s)
        case .integer(let n): self = .integer(n)
        case .real(let r): self = .real(r)
        case .bool(let b): self = .bool(b)
        case .data(let d): self = .data(d)
        case .date(let d): self = .date(d)
        case .uid, .array, .dictionary: return nil
        }
    }

    /// The string, for `.string`.
    public var stringValue: String? {
        if case .string(let s, _) = self { return s }
        return nil
    }

    /// The object, for `.object`.
    public var objectValue: ArchiveObject? {
        if case .object(let o) = self { return o }
        return nil
    }
}

/// A value shared by identity (``ArchiveValue/shared(_:)``): equality is identity.
public final class SharedValue: Hashable, @unchecked Sendable {
    public var value: ArchiveValue

    public init(_ value: ArchiveValue) {
        self.value = value
    }

    public static func == (a: SharedValue, b: SharedValue) -> Bool { a === b }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}

/// A base URL: `NSURL`'s `NS.base`, itself a URL.
public final class URLBase: Hashable, @unchecked Sendable {
    public let base: URLBase?
    public let relative: String

    public init(base: URLBase?, relative: String) {
        self.base = base
        self.relative = relative
    }

    public static func == (a: URLBase, b: URLBase) -> Bool {
        a.relative.utf8.elementsEqual(b.relative.utf8) && a.base == b.base
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(PlistKey(relative))
        hasher.combine(base)
    }
}

/// A key and its value in an archived dictionary.
public struct ArchiveEntry: Hashable, Sendable {
    public var key: ArchiveValue
    public var value: ArchiveValue

    public init(key: ArchiveValue, value: ArchiveValue) {
        self.key = key
        self.value = value
    }

    public init(_ key: String, _ value: ArchiveValue) {
        self.key = .string(key)
        self.value = value
    }
}

/// An archived object of a class that is not one of Foundation's value
/// classes: its class chain and its keyed fields.
///
/// A reference type so that identity is the archive's: two fields that
/// name one object hold one `ArchiveObject`, and an object may reach
/// itself. Equality is identity; ``fieldsEqual(_:)`` compares contents.
public final class ArchiveObject: Hashable, @unchecked Sendable {
    /// The class chain, most derived first (`$classes`): `["ScaryBugs.ScaryBugData", "NSObject"]`.
    public var classChain: [String]
    /// The fields, under the keys as the archive holds them (a key the coder
    /// was given that starts with `$` is stored as `$$…`). `$null` fields are absent.
    public var fields: [PlistKey: ArchiveValue]
    /// Keys whose scalar is stored in the object itself (`encodeInteger:forKey:`,
    /// `encodeBool:forKey:`, `encodeDouble:forKey:`, `encodeBytes:length:forKey:`)
    /// rather than as a separate `NSNumber` or `NSData` object.
    public var inlineKeys: Set<PlistKey>
    /// The object's index in `$objects` when it was decoded from an archive
    /// (the `N` of a `{"$ref": N}` in ``KeyedArchiveGraphForm``).
    public internal(set) var archiveUID: UInt64?

    /// The class name (`$classname`).
    public var className: String { classChain.first ?? "" }

    public init(classChain: [String], fields: [PlistKey: ArchiveValue] = [:], inlineKeys: Set<PlistKey> = []) {
        self.classChain = classChain
        self.fields = fields
        self.inlineKeys = inlineKeys
    }

    public convenience init(className: String, fields: [PlistKey: ArchiveValue] = [:]) {
        self.init(classChain: [className, "NSObject"], fields: fields)
    }

    public static func == (a: ArchiveObject, b: ArchiveObject) -> Bool { a === b }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}
