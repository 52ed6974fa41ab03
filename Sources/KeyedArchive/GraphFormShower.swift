import PropertyList

/// The graph form of an archive (`Schemas/keyed-archive.md`, form 2), made
/// straight from its `$objects`: each entry is shown in full at most once.
///
/// A first pass counts how often each UID is reached (following what an
/// entry holds only the first time); the second shows the graph in the
/// order the form's keys sort in. An entry reached more than once is given
/// `"$id": N` (N its UID) where it is first shown and is `{"$ref": N}`
/// everywhere after, for shared entries and cycles alike; only numbers,
/// dates, `NSNull`, UUIDs and strings, data and URLs of at most
/// ``inlineLimit`` bytes are shown again in full. Time, memory and output
/// are linear in the archive.
struct GraphFormShower {
    /// The longest string, data or URL shown again in full where it is shared.
    static let inlineLimit = 64

    private var reader: ArchiveReader
    private let limit: Int
    private var shapes: [ArchiveReader.Shape?]
    /// 0: not reached; 1: once; 2: more than once.
    private var reached: [UInt8]
    /// Whether a UID reached more than once has been shown (its `$id` given).
    private var shown: [Bool]
    /// The URL each `NSURL` denotes, once resolved.
    private var urls: [String?]
    private var count = 0
    private var depth = 0

    init(_ plist: PlistValue, limit: Int) throws(KeyedArchiveError) {
        reader = try ArchiveReader(plist)
        self.limit = limit
        let n = reader.objectCount
        shapes = Array(repeating: nil, count: n)
        reached = Array(repeating: 0, count: n)
        shown = Array(repeating: false, count: n)
        urls = Array(repeating: nil, count: n)
    }

    /// The form: the root alone when `$top` holds only `root`, else a dictionary of the `$top` keys.
    mutating func form() throws(KeyedArchiveError) -> PlistValue {
        let top = reader.top
        let keys = top.keys.sorted()
        for key in keys { try countRaw(top[key]!) }
        var out: [PlistKey: PlistValue] = [:]
        for key in keys {
            if let value = try showRaw(top[key]!) { out[key] = value }
        }
        if out.count == 1, let root = out[KeyedArchive.rootKey] { return root }
        return .dictionary(out)
    }

    // MARK: - Counting

    private mutating func countRaw(_ raw: PlistValue) throws(KeyedArchiveError) {
        switch raw {
        case .uid(let r): if r != 0 { try reach(r) }
        case .array(let items): for item in items { try countRaw(item) }
        case .dictionary(let d): for (_, v) in d { try countRaw(v) }
        default: break
        }
    }

    private mutating func reach(_ uid: UInt64) throws(KeyedArchiveError) {
        guard uid < UInt64(reached.count) else { throw .referenceOutOfRange(uid: uid, objectCount: reached.count) }
        let index = Int(uid)
        if reached[index] != 0 {
            reached[index] = 2
            return
        }
        reached[index] = 1
        depth += 1
        defer { depth -= 1 }
        guard depth <= KeyedArchive.maximumDepth else { throw .tooDeep(limit: KeyedArchive.maximumDepth) }
        let shape = try reader.shape(uid)
        shapes[index] = shape
        switch shape {
        case .leaf: break
        case .url(_, let base): if base != 0 { try reach(base) }
        case .list(_, let members): for m in members { try reach(m) }
        case .dictionary(let keys, let values, _):
            for k in keys { try reach(k) }
            for v in values { try reach(v) }
        case .object(_, let fields):
            for (key, raw) in fields where key.string != "$class" {
                if Self.reservedKeys.contains(key) {
                    throw .malformed(uid: uid, "a field named \(key.string) (NSKeyedArchiver stores a coder key that starts with $ as $$…)")
                }
                try countRaw(raw)
            }
        }
    }

    /// The keys the form gives a meaning of its own.
    static let reservedKeys: Set<PlistKey> = ["$id", "$ref", "$value"]

    // MARK: - Showing

    private mutating func showRaw(_ raw: PlistValue) throws(KeyedArchiveError) -> PlistValue? {
        switch raw {
        case .uid(let r): return r == 0 ? nil : try show(r)
        case .array(let items):
            var out: [PlistValue] = []
            out.reserveCapacity(items.count)
            for item in items { out.append(try showRaw(item) ?? Self.null) }
            return .array(out)
        case .dictionary(let d):
            var out: [PlistKey: PlistValue] = [:]
            out.reserveCapacity(d.count)
            for key in d.keys.sorted() {
                out[PlistKey(KeyedArchiveGraphForm.escape(key.string))] = try showRaw(d[key]!) ?? Self.null
            }
            return .dictionary(out)
        default:
            return raw
        }
    }

    private static let null: PlistValue = .dictionary(["$class": .string("NSNull")])

    private static func reference(_ uid: UInt64) -> PlistValue { .dictionary(["$ref": .integer(Int128(uid))]) }

    private static func labelled(_ uid: UInt64, _ value: PlistValue) -> PlistValue {
        .dictionary(["$id": .integer(Int128(uid)), "$value": value])
    }

    private static func isLong(_ value: PlistValue) -> Bool {
        switch value {
        case .string(let s): return s.utf8.count > inlineLimit
        case .data(let d): return d.count > inlineLimit
        default: return false
        }
    }

    private mutating func show(_ uid: UInt64) throws(KeyedArchiveError) -> PlistValue {
        count += 1
        guard count <= limit else { throw .tooLarge(limit: limit) }
        let index = Int(uid)
        let shared = reached[index] > 1
        if shared && shown[index] {
            switch shapes[index]! {
            case .leaf, .url:
                let value = try scalar(uid)
                if !Self.isLong(value) { return value }
            default: break
            }
            return Self.reference(uid)
        }
        depth += 1
        defer { depth -= 1 }
        guard depth <= KeyedArchive.maximumDepth else { throw .tooDeep(limit: KeyedArchive.maximumDepth) }
        switch shapes[index]! {
        case .leaf, .url:
            let value = try scalar(uid)
            guard shared, Self.isLong(value) else { return value }
            shown[index] = true
            return Self.labelled(uid, value)
        case .list(_, let members):
            if shared { shown[index] = true }
            var out: [PlistValue] = []
            out.reserveCapacity(members.count)
            for m in members { out.append(try show(m)) }
            return shared ? Self.labelled(uid, .array(out)) : .array(out)
        case .dictionary(let keys, let values, _):
            if shared { shown[index] = true }
            var out: [PlistKey: PlistValue] = [:]
            out.reserveCapacity(keys.count)
            for (k, v) in zip(keys, values) {
                guard case .leaf(.string(let key, _)) = shapes[Int(k)]! else {
                    throw .unrepresentable("a dictionary key of class \(className(k)) in the graph form")
                }
                if reached[Int(k)] > 1 {
                    // A shared key is written out at each use: count its length.
                    count += key.utf8.count / Self.inlineLimit
                    guard count <= limit else { throw .tooLarge(limit: limit) }
                }
                out[PlistKey(KeyedArchiveGraphForm.escape(key))] = try show(v)
            }
            return shared ? Self.labelled(uid, .dictionary(out)) : .dictionary(out)
        case .object(let chain, let fields):
            if shared { shown[index] = true }
            var out: [PlistKey: PlistValue] = [:]
            out.reserveCapacity(fields.count + 1)
            out["$class"] = .string(chain[0])
            if shared { out["$id"] = .integer(Int128(uid)) }
            for (key, raw) in fields.sorted(by: { $0.key < $1.key }) where key.string != "$class" {
                if let value = try showRaw(raw) { out[key] = value }
            }
            return .dictionary(out)
        }
    }

    private func className(_ uid: UInt64) -> String {
        switch shapes[Int(uid)]! {
        case .leaf(let v): return v.className
        case .url: return "NSURL"
        case .list(let kind, _):
            switch kind {
            case .array(let m): return m ? "NSMutableArray" : "NSArray"
            case .set(let m): return m ? "NSMutableSet" : "NSSet"
            case .orderedSet(let m): return m ? "NSMutableOrderedSet" : "NSOrderedSet"
            }
        case .dictionary(_, _, let m): return m ? "NSMutableDictionary" : "NSDictionary"
        case .object(let chain, _): return chain[0]
        }
    }

    /// A leaf or URL as the form shows it.
    private mutating func scalar(_ uid: UInt64) throws(KeyedArchiveError) -> PlistValue {
        switch shapes[Int(uid)]! {
        case .leaf(let v):
            switch v {
            case .null: return Self.null
            case .string(let s, _): return .string(s)
            case .bool(let b): return .bool(b)
            case .integer(let n): return .integer(n)
            case .real(let r): return .real(r)
            case .date(let d): return .date(d)
            case .data(let d, _): return .data(d)
            case .uuid(let bytes): return .string(KeyedArchiveGraphForm.uuidString(bytes))
            default: throw .malformed(uid: uid, "an object where a value was expected")
            }
        case .url:
            return .string(try url(uid))
        default:
            throw .malformed(uid: uid, "an object where a value was expected")
        }
    }

    /// The URL the `NSURL` at `uid` denotes: its relative string resolved against its base.
    private mutating func url(_ uid: UInt64) throws(KeyedArchiveError) -> String {
        if let done = urls[Int(uid)] { return done }
        let resolved: String
        switch shapes[Int(uid)]! {
        case .url(let relative, 0):
            resolved = relative
        case .url(let relative, let base):
            depth += 1
            defer { depth -= 1 }
            guard depth <= KeyedArchive.maximumDepth else { throw .tooDeep(limit: KeyedArchive.maximumDepth) }
            let baseText: String
            switch shapes[Int(base)]! {
            case .url: baseText = try url(base)
            case .leaf(.string(let s, _)): baseText = s
            default: throw .malformed(uid: uid, "NS.base is not a URL")
            }
            resolved = URLResolution.resolve(relative, against: baseText)
        default:
            throw .malformed(uid: uid, "not a URL")
        }
        urls[Int(uid)] = resolved
        return resolved
    }
}
