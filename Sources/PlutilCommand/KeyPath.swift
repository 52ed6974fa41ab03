import PropertyList

/// A `plutil` key path: components split at `.`, with `\.` for a dot inside
/// a key; a component applied to an array is an index.
struct KeyPath {
    let text: String
    let components: [String]

    init(_ text: String) {
        self.text = text
        var parts: [String] = []
        var current: [UInt8] = []
        var bytes = Array(text.utf8)[...]
        while let b = bytes.popFirst() {
            if b == UInt8(ascii: "\\"), bytes.first == UInt8(ascii: ".") {
                current.append(UInt8(ascii: "."))
                bytes.removeFirst()
            } else if b == UInt8(ascii: ".") {
                parts.append(String(decoding: current, as: UTF8.self))
                current = []
            } else {
                current.append(b)
            }
        }
        parts.append(String(decoding: current, as: UTF8.self))
        components = parts
    }

    /// The path as messages show it: each component with its dots escaped again.
    var escaped: String {
        components.map { $0.replacingDots() }.joined(separator: ".")
    }

    /// An array index: decimal digits only, as an `Int`.
    static func index(_ component: String) -> Int? {
        guard !component.isEmpty, component.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return Int(component)
    }

    /// The value at this path, or `nil`.
    func value(in root: PlistValue) -> PlistValue? {
        var current = root
        for component in components {
            guard let next = Self.step(component, in: current) else { return nil }
            current = next
        }
        return current
    }

    /// The value one component names in `value` (a key, or an index into an array), or `nil`.
    static func step(_ component: String, in value: PlistValue) -> PlistValue? {
        guard !component.isEmpty else { return nil }
        switch value {
        case .dictionary(let d):
            return d[component]
        case .array(let a):
            guard let i = index(component), a.indices.contains(i) else { return nil }
            return a[i]
        default:
            return nil
        }
    }

    /// `root` without the value at this path; `nil` when the path is the whole (empty) path.
    func removing(from root: PlistValue) throws(PlutilError) -> PlistValue? {
        try remove(root, components[...])
    }

    private func remove(_ value: PlistValue, _ rest: ArraySlice<String>) throws(PlutilError) -> PlistValue? {
        guard let key = rest.first else { return nil }
        let missing = PlutilError.message("No value to remove at key path \(escaped)")
        guard !key.isEmpty else { throw missing }
        switch value {
        case .dictionary(var d):
            guard let existing = d[key] else { throw missing }
            if let kept = try remove(existing, rest.dropFirst()) { d[key] = kept } else { d.removeValue(forKey: key) }
            return .dictionary(d)
        case .array(var a):
            guard let i = Self.index(key), a.indices.contains(i) else { throw missing }
            if let kept = try remove(a[i], rest.dropFirst()) { a[i] = kept } else { a.remove(at: i) }
            return .array(a)
        default:
            throw missing
        }
    }

    /// `root` with `newValue` inserted (or replaced, or appended) at this path.
    func inserting(_ newValue: PlistValue, into root: PlistValue, replacing: Bool, appending: Bool) throws(PlutilError) -> PlistValue {
        try insert(newValue, into: root, components[...], replacing: replacing, appending: appending)
    }

    private func insert(_ newValue: PlistValue, into value: PlistValue, _ rest: ArraySlice<String>,
                        replacing: Bool, appending: Bool) throws(PlutilError) -> PlistValue {
        guard let key = rest.first else { throw .message("Key path not found \(escaped)") }
        let last = rest.count == 1
        switch value {
        case .dictionary(var d):
            let existing = d[key]
            if !last {
                guard let existing else { throw .message("Key path not found \(escaped)") }
                d[key] = try insert(newValue, into: existing, rest.dropFirst(), replacing: replacing, appending: appending)
            } else if replacing || existing == nil {
                d[key] = newValue
            } else if appending {
                guard case .array(var items)? = existing else { throw .message("Appending to a non-array at key path \(escaped)") }
                items.append(newValue)
                d[key] = .array(items)
            } else {
                throw .message("Value already exists at key path \(escaped)")
            }
            return .dictionary(d)
        case .array(var a):
            guard let i = Self.index(key) else { throw .message("Unable to index into array with key path \(escaped)") }
            if !last {
                guard a.indices.contains(i) else { throw .message("Index \(i) out of bounds in array at key path \(escaped)") }
                a[i] = try insert(newValue, into: a[i], rest.dropFirst(), replacing: replacing, appending: appending)
            } else if appending {
                guard a.indices.contains(i), case .array(var items) = a[i] else {
                    throw .message("Attempt to append value to non-array at key path \(escaped)")
                }
                items.append(newValue)
                a[i] = .array(items)
            } else if replacing && a.indices.contains(i) {
                a[i] = newValue
            } else if a.indices.contains(i) {
                a.insert(newValue, at: i)
            } else if i == a.count {
                a.append(newValue)
            } else {
                throw .message("Index \(i) out of bounds in array at key path \(escaped)")
            }
            return .array(a)
        default:
            throw .message("Unable to insert value at key path \(escaped)")
        }
    }
}

extension String {
    fileprivate func replacingDots() -> String {
        var out = ""
        for c in self { if c == "." { out += "\\." } else { out.append(c) } }
        return out
    }
}
