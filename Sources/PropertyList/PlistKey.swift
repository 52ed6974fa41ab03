#if canImport(Glibc)
import Glibc
#endif

/// A dictionary key of a property list: its exact sequence of Unicode scalars.
///
/// Swift's `String` compares and hashes by canonical equivalence, so "é"
/// (U+00E9) and "e" + U+0301 are one `String` key, and a dictionary holding
/// both would silently lose one. Core Foundation, Python's plistlib and
/// libplist keep them apart, and so must we: `PlistKey` compares and hashes
/// the UTF-8 bytes (which is the same as comparing scalars), and orders
/// keys by code point, the order every writer of this module uses.
///
/// A `String` converts with ``init(_:)`` or a literal; ``string`` gives it
/// back unchanged. `[PlistKey: V]` can be subscripted with a `String`
/// (see the extension below), which names the key by its exact scalars.
public struct PlistKey: Hashable, Comparable, Sendable, ExpressibleByStringLiteral,
    CustomStringConvertible, CustomDebugStringConvertible {
    /// The key's text, exactly as read or given.
    public let string: String

    @inlinable
    public init(_ string: String) { self.string = string }

    @inlinable
    public init(stringLiteral value: String) { self.string = value }

    public var description: String { string }
    public var debugDescription: String { string.debugDescription }

    /// Whether both keys have the same scalars (not: are canonically equivalent).
    /// (Bytes compared with `memcmp`: a dictionary look-up compares keys,
    /// and a byte-by-byte walk of two UTF-8 views cost most of a policy's
    /// check of a large domain.)
    public static func == (a: PlistKey, b: PlistKey) -> Bool {
        var x = a.string, y = b.string
        return x.withUTF8 { px in
            y.withUTF8 { py in
                px.count == py.count && (px.count == 0 || memcmp(px.baseAddress!, py.baseAddress!, px.count) == 0)
            }
        }
    }

    /// Code point order (UTF-8 byte order), as Apple's writers sort keys
    /// (`String`'s `<` orders canonical equivalents, which they do not).
    public static func < (a: PlistKey, b: PlistKey) -> Bool {
        var a = a.string, b = b.string
        return a.withUTF8 { pa in
            b.withUTF8 { pb in
                let n = min(pa.count, pb.count)
                if n > 0 {
                    let c = memcmp(pa.baseAddress!, pb.baseAddress!, n)
                    if c != 0 { return c < 0 }
                }
                return pa.count < pb.count
            }
        }
    }

    @inlinable
    public func hash(into hasher: inout Hasher) {
        var text = string // `withUTF8` makes a copy contiguous only when it is not (bridged text)
        text.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
        hasher.combine(0xFF as UInt8) // not a UTF-8 byte: ends the key
    }
}

extension Dictionary where Key == PlistKey {
    /// The value under the key with exactly `key`'s scalars.
    @inlinable
    public subscript(key: String) -> Value? {
        get { self[PlistKey(key)] }
        set { self[PlistKey(key)] = newValue }
    }

    /// The value under the key with exactly `key`'s scalars, or `defaultValue`.
    @inlinable
    public subscript(key: String, default defaultValue: @autoclosure () -> Value) -> Value {
        get { self[PlistKey(key), default: defaultValue()] }
        set { self[PlistKey(key), default: defaultValue()] = newValue }
    }

    /// Removes the key with exactly `key`'s scalars.
    @inlinable
    @discardableResult
    public mutating func removeValue(forKey key: String) -> Value? {
        removeValue(forKey: PlistKey(key))
    }

    /// The entries with the keys' texts (in no order).
    public var stringEntries: [(key: String, value: Value)] { map { ($0.key.string, $0.value) } }

    /// The keys' texts, in code point order.
    public var sortedKeyStrings: [String] { keys.sorted().map(\.string) }
}

extension Dictionary where Key == PlistKey {
    /// A dictionary with the keys of `entries`: `String` keys are already
    /// distinct as text, so none merge.
    @inlinable
    public init(stringKeys entries: [String: Value]) {
        self.init(minimumCapacity: entries.count)
        for (key, value) in entries { self[PlistKey(key)] = value }
    }
}
