/// A property-list value: the eight types every plist format can carry,
/// and the keyed-archiver UID that binary and XML plists also carry.
///
/// The model is deliberately Foundation-free so that the `defaults` command
/// starts in the time a plain Swift binary starts. Integers span the whole
/// range a binary plist can store, `Int64.min ... UInt64.max`, which is why
/// they are kept as `Int128`; every initialiser that builds an integer from
/// outside input checks that range (see ``PlistValue/integerRange``).
public enum PlistValue: Hashable, Sendable {
    case string(String)
    case integer(Int128)
    case real(Double)
    case bool(Bool)
    case date(PlistDate)
    case data([UInt8])
    case array([PlistValue])
    case dictionary([PlistKey: PlistValue])
    /// A keyed-archiver object reference (`CFKeyedArchiverUID`): binary
    /// plists store it under marker `0x8N`, XML as the dictionary
    /// `{CF$UID = n}`. It appears in `NSKeyedArchiver` data, which
    /// preference files copied from a Mac sometimes hold.
    case uid(UInt64)

    /// The integers a property list can hold: a signed 64-bit value, or an
    /// unsigned one above `Int64.max` (binary plists store those in 16 bytes).
    public static let integerRange: ClosedRange<Int128> = Int128(Int64.min)...Int128(UInt64.max)

    /// The deepest nesting of arrays and dictionaries that readers accept and
    /// writers produce.
    ///
    /// Every reader, writer and printer in this module recurses once per
    /// level, so a bound turns a hostile file into a clear error instead of
    /// a stack overflow. 2,048 is twice the 1,000 levels real files are
    /// required to reach; it is tested on the main thread's 8 MiB stack.
    /// Code that decodes on threads with small stacks (prefsd) must check
    /// its stack size against this depth.
    public static let maximumDepth = 2048

    /// The name `defaults read-type` prints for this value's type.
    public var typeName: String {
        switch self {
        case .string: return "string"
        case .integer: return "integer"
        case .real: return "float"
        case .bool: return "boolean"
        case .date: return "date"
        case .data: return "data"
        case .array: return "array"
        case .dictionary: return "dictionary"
        case .uid: return "uid"
        }
    }

    /// The deepest nesting level of collections in this value (a scalar is 0).
    public var depth: Int {
        switch self {
        case .array(let items): return 1 + (items.map(\.depth).max() ?? 0)
        case .dictionary(let entries): return 1 + (entries.values.map(\.depth).max() ?? 0)
        default: return 0
        }
    }

    /// The dictionary payload, or `nil` for any other type.
    public var dictionaryValue: [PlistKey: PlistValue]? {
        if case .dictionary(let d) = self { return d }
        return nil
    }

    /// The array payload, or `nil` for any other type.
    public var arrayValue: [PlistValue]? {
        if case .array(let a) = self { return a }
        return nil
    }

    /// Equal values of equal types; strings are equal only with the same
    /// scalars (not when merely canonically equivalent, see ``PlistKey``),
    /// as Core Foundation compares them.
    public static func == (a: PlistValue, b: PlistValue) -> Bool {
        switch (a, b) {
        case (.string(let x), .string(let y)): return x.utf8.elementsEqual(y.utf8)
        case (.integer(let x), .integer(let y)): return x == y
        case (.real(let x), .real(let y)): return x == y
        case (.bool(let x), .bool(let y)): return x == y
        case (.date(let x), .date(let y)): return x == y
        case (.data(let x), .data(let y)): return x == y
        case (.array(let x), .array(let y)): return x == y
        case (.dictionary(let x), .dictionary(let y)): return x == y
        case (.uid(let x), .uid(let y)): return x == y
        default: return false
        }
    }

    public func hash(into hasher: inout Hasher) {
        switch self {
        case .string(let s): hasher.combine(0 as UInt8); hasher.combine(PlistKey(s))
        case .integer(let n): hasher.combine(1 as UInt8); hasher.combine(n)
        case .real(let r): hasher.combine(2 as UInt8); hasher.combine(r)
        case .bool(let b): hasher.combine(3 as UInt8); hasher.combine(b)
        case .date(let d): hasher.combine(4 as UInt8); hasher.combine(d)
        case .data(let d): hasher.combine(5 as UInt8); hasher.combine(d)
        case .array(let a): hasher.combine(6 as UInt8); hasher.combine(a)
        case .dictionary(let d): hasher.combine(7 as UInt8); hasher.combine(d)
        case .uid(let u): hasher.combine(8 as UInt8); hasher.combine(u)
        }
    }
}

/// A point in time as property lists store it: seconds since
/// 2001-01-01 00:00:00 UTC (Core Foundation's reference date), fractional.
public struct PlistDate: Hashable, Sendable, Comparable {
    /// Seconds between the Unix epoch and the Core Foundation reference date.
    public static let unixEpochOffset: Double = 978_307_200

    /// Seconds since 2001-01-01 00:00:00 UTC; negative before it.
    public var secondsSinceReferenceDate: Double

    /// Creates a date from seconds since the Core Foundation reference date.
    public init(secondsSinceReferenceDate: Double) {
        self.secondsSinceReferenceDate = secondsSinceReferenceDate
    }

    /// Creates a date from seconds since the Unix epoch.
    public init(secondsSince1970: Double) {
        self.secondsSinceReferenceDate = secondsSince1970 - Self.unixEpochOffset
    }

    /// Seconds since the Unix epoch.
    public var secondsSince1970: Double { secondsSinceReferenceDate + Self.unixEpochOffset }

    public static func < (lhs: PlistDate, rhs: PlistDate) -> Bool {
        lhs.secondsSinceReferenceDate < rhs.secondsSinceReferenceDate
    }
}
