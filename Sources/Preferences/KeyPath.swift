import AppHomeSystem
import PropertyList

/// A path into nested values: `window:frame:0` is key `window`, then key
/// `frame`, then item 0 of an array.
///
/// Syntax (as PlistBuddy users know it): components separated by `:`, an
/// optional leading `:`, `\:` for a colon and `\\` for a backslash inside a
/// component. A component addresses a dictionary by key and an array by
/// decimal index, decided by the container it meets.
public struct KeyPath: Hashable, Sendable, CustomStringConvertible {
    public let components: [String]
    public let text: String

    /// Parses `text`.
    ///
    /// - Throws: ``PreferencesError/invalidKeyPath(_:reason:)`` when it is
    ///   empty, has an empty component or ends in a lone backslash.
    public init(parsing text: String) throws(PreferencesError) {
        self.text = text
        var parts: [String] = []
        var current = ""
        var chars = Substring(text)
        if chars.first == ":" { chars.removeFirst() }
        var escaped = false
        for c in chars {
            if escaped { current.append(c); escaped = false; continue }
            if c == "\\" { escaped = true; continue }
            if c == ":" { parts.append(current); current = ""; continue }
            current.append(c)
        }
        if escaped { throw .invalidKeyPath(text, reason: "it ends with a lone backslash") }
        parts.append(current)
        if parts.contains(where: \.isEmpty) { throw .invalidKeyPath(text, reason: "a component is empty") }
        components = parts
    }

    /// A one-component path for a plain key (no parsing).
    public init(key: String) {
        components = [key]
        text = key
    }

    public var description: String { text }

    /// The value at this path inside `root`, or `nil` if any step is missing.
    public func value(in root: [PlistKey: PlistValue]) -> PlistValue? {
        var current = PlistValue.dictionary(root)
        for component in components {
            switch current {
            case .dictionary(let d):
                guard let next = d[component] else { return nil }
                current = next
            case .array(let a):
                guard let i = Int(component), a.indices.contains(i) else { return nil }
                current = a[i]
            default:
                return nil
            }
        }
        return current
    }

    /// Sets the value at this path, creating missing dictionaries on the
    /// way. In an array, an index equal to the count appends.
    ///
    /// - Throws: ``PreferencesError/invalidKeyPath(_:reason:)`` when a step
    ///   meets a scalar, or an array index is not a number or out of range.
    public func set(_ value: PlistValue, in root: inout [PlistKey: PlistValue]) throws(PreferencesError) {
        var top = PlistValue.dictionary(root)
        try Self.set(value, components[...], in: &top, path: self)
        root = top.dictionaryValue ?? [:]
    }

    /// Removes the value at this path. Returns whether something was removed.
    public func remove(from root: inout [PlistKey: PlistValue]) throws(PreferencesError) -> Bool {
        var top = PlistValue.dictionary(root)
        let removed = try Self.remove(components[...], in: &top, path: self)
        root = top.dictionaryValue ?? [:]
        return removed
    }

    private static func set(_ value: PlistValue, _ rest: ArraySlice<String>, in node: inout PlistValue, path: KeyPath) throws(PreferencesError) {
        guard let first = rest.first else { node = value; return }
        let tail = rest.dropFirst()
        switch node {
        case .dictionary(var d):
            node = .integer(0)  // release the payload so `d` is uniquely referenced
            var child = d[first] ?? (tail.isEmpty ? value : .dictionary([:]))
            try set(value, tail, in: &child, path: path)
            d[first] = child
            node = .dictionary(d)
        case .array(var a):
            guard let i = Int(first), i >= 0, i <= a.count else {
                throw .invalidKeyPath(path.text, reason: "\"\(first)\" is not an index of an array of \(a.count) items")
            }
            node = .integer(0)
            if i == a.count {
                var child = tail.isEmpty ? value : PlistValue.dictionary([:])
                try set(value, tail, in: &child, path: path)
                a.append(child)
            } else {
                try set(value, tail, in: &a[i], path: path)
            }
            node = .array(a)
        default:
            throw .invalidKeyPath(path.text, reason: "\"\(first)\" is inside a \(node.typeName), which holds no keys")
        }
    }

    private static func remove(_ rest: ArraySlice<String>, in node: inout PlistValue, path: KeyPath) throws(PreferencesError) -> Bool {
        guard let first = rest.first else { return false }
        let tail = rest.dropFirst()
        switch node {
        case .dictionary(var d):
            guard d[first] != nil else { return false }
            node = .integer(0)
            defer { node = .dictionary(d) }
            if tail.isEmpty { d[first] = nil; return true }
            return try remove(tail, in: &d[first]!, path: path)
        case .array(var a):
            guard let i = Int(first), a.indices.contains(i) else { return false }
            node = .integer(0)
            defer { node = .array(a) }
            if tail.isEmpty { a.remove(at: i); return true }
            return try remove(tail, in: &a[i], path: path)
        default:
            return false
        }
    }
}
