import PropertyList

/// A set of changes to one domain, applied all or nothing.
///
/// `expected` holds, for keys whose current value the change depends on,
/// the value it must still have (`nil`: the key must be absent); when one
/// differs, nothing is applied and the writer is told of a conflict.
public struct ChangeSet: Equatable, Sendable {
    /// Keys to set, with their new values.
    public var set: [PlistKey: PlistValue]
    /// Keys to remove.
    public var remove: [PlistKey]
    /// Whether every key goes first (the domain is replaced or deleted).
    public var removeAll: Bool
    /// Key → the value it must still have (`nil`: must be absent).
    public var expected: [PlistKey: PlistValue?]

    public init(set: [PlistKey: PlistValue] = [:], remove: [PlistKey] = [], removeAll: Bool = false, expected: [PlistKey: PlistValue?] = [:]) {
        self.set = set; self.remove = remove; self.removeAll = removeAll; self.expected = expected
    }

    /// The change that turns `base` into `contents`, expecting every key it
    /// touches to still hold its value in `base` (so that a concurrent write
    /// of the same key is a conflict, and writes of distinct keys are not).
    public init(from base: [PlistKey: PlistValue], to contents: [PlistKey: PlistValue]) {
        self.init()
        for (k, v) in contents where base[k] != v {
            set[k] = v
            expected[k] = .some(base[k])
        }
        for (k, v) in base where contents[k] == nil {
            remove.append(k)
            expected[k] = .some(v)
        }
    }

    /// Whether the change changes nothing.
    public var isEmpty: Bool { self.set.isEmpty && remove.isEmpty && !removeAll }

    /// Whether `contents` still has every expected value.
    public func holds(in contents: [PlistKey: PlistValue]) -> Bool {
        expected.allSatisfy { key, value in contents[key] == value }
    }

    /// Applies the change to `contents` (removals first, then sets).
    public func apply(to contents: inout [PlistKey: PlistValue]) {
        if removeAll { contents.removeAll() }
        for k in remove { contents[k] = nil }
        for (k, v) in set { contents[k] = v }
    }

    /// Throws when a value nests deeper than a property list may.
    public func checkDepth(of domain: Domain) throws(PreferencesError) {
        if set.values.contains(where: { $0.depth >= PlistValue.maximumDepth }) {
            throw .encoding(domain, .tooDeep(limit: PlistValue.maximumDepth))
        }
    }
}
