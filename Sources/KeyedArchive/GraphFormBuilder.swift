import PropertyList

/// Reads a graph form (`Schemas/keyed-archive.md`) back into a graph: every
/// `$id` becomes one ``ArchiveObject`` or ``SharedValue`` and every
/// `{"$ref": N}` that object, so sharing and cycles survive
/// archive → form → archive. A first pass finds every `$id` (a `$ref` may
/// come before its `$id` in key order), the second builds.
struct GraphFormBuilder {
    private enum Labelled {
        case object(ArchiveObject)
        case shared(SharedValue)
    }

    private var labels: [Int128: Labelled] = [:]
    /// The `$id`s built so far: each is built once.
    private var built: Set<Int128> = []
    private var depth = 0

    mutating func archiveValue(of value: PlistValue) throws(KeyedArchiveError) -> ArchiveValue {
        try collect(value)
        return try build(value)
    }

    private static func label(_ raw: PlistValue, _ what: String) throws(KeyedArchiveError) -> Int128 {
        guard case .integer(let n) = raw else { throw .unrepresentable("a \(what) that is a \(raw.typeName), not an integer") }
        return n
    }

    private mutating func enter() throws(KeyedArchiveError) {
        depth += 1
        guard depth <= KeyedArchive.maximumDepth else { throw .tooDeep(limit: KeyedArchive.maximumDepth) }
    }

    private mutating func collect(_ value: PlistValue) throws(KeyedArchiveError) {
        try enter()
        defer { depth -= 1 }
        switch value {
        case .array(let items):
            for item in items { try collect(item) }
        case .dictionary(let d):
            if let raw = d["$id"] {
                let id = try Self.label(raw, "$id")
                guard labels[id] == nil else { throw .unrepresentable("two values with \"$id\": \(id)") }
                if let cls = d["$class"] {
                    guard case .string(let name) = cls, !name.isEmpty else { throw .unrepresentable("a $class that is not a class name") }
                    guard d["$value"] == nil else { throw .unrepresentable("an object (\"$id\": \(id)) with a \"$value\"") }
                    labels[id] = .object(ArchiveObject(className: name))
                } else {
                    guard d["$value"] != nil, d.count == 2 else {
                        throw .unrepresentable("\"$id\": \(id) on a dictionary without $class that is not {\"$id\": N, \"$value\": …}")
                    }
                    labels[id] = .shared(SharedValue(.null))
                }
            }
            for (_, v) in d { try collect(v) }
        default:
            break
        }
    }

    private mutating func build(_ value: PlistValue) throws(KeyedArchiveError) -> ArchiveValue {
        try enter()
        defer { depth -= 1 }
        if let scalar = ArchiveValue(scalar: value) { return scalar }
        switch value {
        case .string, .integer, .real, .bool, .date, .data: return .null   // scalars: above
        case .uid(let u): throw .unrepresentable("a UID (\(u)) in the graph form")
        case .array(let items):
            var out: [ArchiveValue] = []
            out.reserveCapacity(items.count)
            for item in items { out.append(try build(item)) }
            return .array(out)
        case .dictionary(let d):
            if let raw = d["$ref"] {
                let id = try Self.label(raw, "$ref")
                guard d.count == 1 else { throw .unrepresentable("{\"$ref\": \(id)} with other keys") }
                switch labels[id] {
                case .object(let o)?: return .object(o)
                case .shared(let box)?: return .shared(box)
                case nil: throw .unrepresentable("{\"$ref\": \(id)}: no value has \"$id\": \(id)")
                }
            }
            var labelled: Labelled?
            if let raw = d["$id"] {
                let id = try Self.label(raw, "$id")
                guard built.insert(id).inserted else { throw .unrepresentable("two values with \"$id\": \(id)") }
                labelled = labels[id]
            }
            if case .shared(let box)? = labelled {
                let inner = try build(d["$value"]!)
                switch inner {
                case .array, .dictionary, .string, .data: box.value = inner
                default: throw .unrepresentable("a \"$value\" that is not an array, a dictionary, a string or data")
                }
                return .shared(box)
            }
            if d["$value"] != nil { throw .unrepresentable("a \"$value\" without an \"$id\"") }
            if let cls = d["$class"] {
                guard case .string(let name) = cls, !name.isEmpty else { throw .unrepresentable("a $class that is not a class name") }
                if name == "NSNull" && d.count == 1 { return .null }
                let object: ArchiveObject
                if case .object(let o)? = labelled { object = o } else { object = ArchiveObject(className: name) }
                for key in d.keys.sorted() where key.string != "$class" && key.string != "$id" {
                    let field = try build(d[key]!)
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
                entries.append(ArchiveEntry(KeyedArchiveGraphForm.unescape(key.string), try build(d[key]!)))
            }
            return .dictionary(entries)
        }
    }
}
