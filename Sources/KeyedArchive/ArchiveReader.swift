import PropertyList

/// Decodes `$objects` into values, each UID once.
///
/// Every UID is decoded at most once and remembered, so time and memory are
/// linear in the archive; an object is remembered before its fields are
/// decoded, so a field may lead back to it (a cycle). A Foundation
/// collection reached again while its members are being decoded becomes
/// ``ArchiveValue/reference(_:)``.
struct ArchiveReader {
    private let objects: [PlistValue]
    private let topEntries: [PlistKey: PlistValue]
    /// The finished value of each UID (`nil`: not decoded yet).
    private var done: [ArchiveValue?]
    /// UIDs being decoded now (collections only: objects are in `done` from the start).
    private var inProgress: [Bool]
    /// Class chains by the UID of their class record.
    private var classes: [UInt64: [String]] = [:]
    private var depth = 0

    init(_ plist: PlistValue) throws(KeyedArchiveError) {
        guard case .dictionary(let d) = plist else {
            throw .notAnArchive("the property list is a \(plist.typeName), not a dictionary")
        }
        guard let archiver = d["$archiver"] else { throw .notAnArchive("no $archiver") }
        guard case .string(let name) = archiver else { throw .unsupportedArchiver("(a \(archiver.typeName))") }
        guard name == KeyedArchive.archiverName else { throw .unsupportedArchiver("\"\(name)\"") }
        guard let version = d["$version"] else { throw .notAnArchive("no $version") }
        guard case .integer(let n) = version, n == KeyedArchive.version else {
            if case .integer(let n) = version { throw .unsupportedVersion("\(n)") }
            throw .unsupportedVersion("(a \(version.typeName))")
        }
        guard case .array(let objects)? = d["$objects"] else { throw .notAnArchive("$objects is missing or not an array") }
        guard case .dictionary(let top)? = d["$top"] else { throw .notAnArchive("$top is missing or not a dictionary") }
        self.objects = objects
        self.topEntries = top
        self.done = Array(repeating: nil, count: objects.count)
        self.inProgress = Array(repeating: false, count: objects.count)
    }

    mutating func archive() throws(KeyedArchiveError) -> KeyedArchive {
        var top: [PlistKey: ArchiveValue] = [:]
        var inline: Set<PlistKey> = []
        for (key, raw) in topEntries {
            if case .uid(let uid) = raw {
                if let value = try value(uid) { top[key] = value }
            } else {
                top[key] = try inlineValue(raw, owner: 0)
                inline.insert(key)
            }
        }
        return KeyedArchive(top: top, inlineTopKeys: inline)
    }

    /// The value of a UID; `nil` for UID 0 (`$null`).
    private mutating func value(_ uid: UInt64) throws(KeyedArchiveError) -> ArchiveValue? {
        guard uid != 0 else { return nil }
        guard uid < UInt64(objects.count) else { throw .referenceOutOfRange(uid: uid, objectCount: objects.count) }
        let index = Int(uid)
        if let value = done[index] { return value }
        if inProgress[index] { return .reference(uid) }
        depth += 1
        defer { depth -= 1 }
        guard depth <= KeyedArchive.maximumDepth else { throw .tooDeep(limit: KeyedArchive.maximumDepth) }
        inProgress[index] = true
        defer { inProgress[index] = false }
        let decoded = try decode(uid, objects[index])
        done[index] = decoded
        return decoded
    }

    private mutating func decode(_ uid: UInt64, _ raw: PlistValue) throws(KeyedArchiveError) -> ArchiveValue {
        switch try shape(uid) {
        case .leaf(let value):
            return value
        case .url(let relative, let baseUID):
            var base: URLBase?
            if baseUID != 0 {
                switch try value(baseUID) {
                case .url(let b, let rel)?: base = URLBase(base: b, relative: rel)
                case .string(let s, _)?: base = URLBase(base: nil, relative: s)
                default: throw .malformed(uid: uid, "NS.base is not a URL")
                }
            }
            return .url(base: base, relative: relative)
        case .list(let kind, let refs):
            var items: [ArchiveValue] = []
            items.reserveCapacity(refs.count)
            for r in refs { items.append(try value(r) ?? .null) }
            switch kind {
            case .array(let mutable): return .array(items, mutable: mutable)
            case .set(let mutable): return .set(items, mutable: mutable)
            case .orderedSet(let mutable): return .orderedSet(items, mutable: mutable)
            }
        case .dictionary(let keyRefs, let valueRefs, let mutable):
            var entries: [ArchiveEntry] = []
            entries.reserveCapacity(keyRefs.count)
            for (k, v) in zip(keyRefs, valueRefs) {
                entries.append(ArchiveEntry(key: try value(k) ?? .null, value: try value(v) ?? .null))
            }
            return .dictionary(entries, mutable: mutable)
        case .object(let chain, let fields):
            let object = ArchiveObject(classChain: chain)
            object.archiveUID = uid
            done[Int(uid)] = .object(object)
            var decoded: [PlistKey: ArchiveValue] = [:]
            decoded.reserveCapacity(fields.count)
            for (key, raw) in fields where key.string != "$class" {
                if case .uid(let ref) = raw {
                    if let v = try value(ref) { decoded[key] = v }
                } else {
                    decoded[key] = try inlineValue(raw, owner: uid)
                    object.inlineKeys.insert(key)
                }
            }
            object.fields = decoded
            return .object(object)
        }
    }

    /// What an entry of `$objects` holds, with what it refers to as UIDs: the one
    /// reading of Foundation's classes, shared by the decoder and the graph form.
    enum Shape {
        enum ListKind { case array(Bool), set(Bool), orderedSet(Bool) }
        /// A value that refers to nothing: a string, number, data, date, `NSNull`, `NSUUID`.
        case leaf(ArchiveValue)
        /// `NSURL`: its relative string and the UID of its base (0: none).
        case url(relative: String, base: UInt64)
        /// An array, set or ordered set: its members' UIDs (never 0).
        case list(ListKind, [UInt64])
        /// A dictionary: its keys' and values' UIDs (never 0), as many of each.
        case dictionary(keys: [UInt64], values: [UInt64], mutable: Bool)
        /// An object of any other class: its class chain and its fields as stored.
        case object([String], [PlistKey: PlistValue])
    }

    /// The shape of the entry `uid` (not 0, in range).
    mutating func shape(_ uid: UInt64) throws(KeyedArchiveError) -> Shape {
        switch objects[Int(uid)] {
        case .string(let s): return .leaf(.string(s))
        case .integer(let n): return .leaf(.integer(n))
        case .real(let r): return .leaf(.real(r))
        case .bool(let b): return .leaf(.bool(b))
        case .data(let d): return .leaf(.data(d))
        case .date(let d): return .leaf(.date(d))
        case .uid: throw .malformed(uid: uid, "a UID where an object was expected")
        case .array: throw .malformed(uid: uid, "an array where an object was expected")
        case .dictionary(let fields):
            guard let classRef = fields["$class"] else { throw .malformed(uid: uid, "a dictionary without $class") }
            guard case .uid(let classUID) = classRef else { throw .malformed(uid: uid, "$class is a \(classRef.typeName), not a UID") }
            let chain = try classChain(classUID, of: uid)
            return try objectShape(uid, chain, fields)
        }
    }

    /// The number of entries in `$objects`.
    var objectCount: Int { objects.count }

    /// The `$top` entries as stored.
    var top: [PlistKey: PlistValue] { topEntries }

    /// The class chain of the class record at `classUID`.
    private mutating func classChain(_ classUID: UInt64, of uid: UInt64) throws(KeyedArchiveError) -> [String] {
        if let chain = classes[classUID] { return chain }
        guard classUID != uid else { throw .malformed(uid: uid, "the object is its own class") }
        guard classUID != 0 else { throw .malformed(uid: uid, "$class is $null") }
        guard classUID < UInt64(objects.count) else { throw .referenceOutOfRange(uid: classUID, objectCount: objects.count) }
        guard case .dictionary(let record) = objects[Int(classUID)] else {
            throw .malformed(uid: classUID, "a class record that is not a dictionary")
        }
        guard record["$class"] == nil else { throw .malformed(uid: classUID, "a class record that is itself an object") }
        guard case .string(let name)? = record["$classname"] else {
            throw .malformed(uid: classUID, "a class record without a $classname string")
        }
        guard case .array(let chainValues)? = record["$classes"] else {
            throw .malformed(uid: classUID, "a class record without a $classes array")
        }
        var chain: [String] = []
        chain.reserveCapacity(chainValues.count)
        for v in chainValues {
            guard case .string(let s) = v else { throw .malformed(uid: classUID, "$classes holds a \(v.typeName), not a class name") }
            chain.append(s)
        }
        // `$classname` is the class; `$classes` may be a longer or an empty list.
        if chain.first != name { chain.insert(name, at: 0) }
        classes[classUID] = chain
        return chain
    }

    private mutating func objectShape(_ uid: UInt64, _ chain: [String], _ fields: [PlistKey: PlistValue]) throws(KeyedArchiveError) -> Shape {
        let name = chain[0]
        switch name {
        case "NSString", "NSMutableString":
            return .leaf(.string(try string(fields, "NS.string", uid), mutable: name == "NSMutableString"))
        case "NSData", "NSMutableData":
            let key = fields["NS.data"] != nil ? "NS.data" : "NS.bytes"
            return .leaf(.data(try data(fields, key, uid), mutable: name == "NSMutableData"))
        case "NSDate":
            switch fields["NS.time"] {
            case .real(let t)?: return .leaf(.date(PlistDate(secondsSinceReferenceDate: t)))
            case .integer(let t)?: return .leaf(.date(PlistDate(secondsSinceReferenceDate: Double(t))))
            default: throw .malformed(uid: uid, "NSDate without an NS.time number")
            }
        case "NSNull":
            return .leaf(.null)
        case "NSUUID":
            let bytes = try data(fields, "NS.uuidbytes", uid)
            guard bytes.count == 16 else { throw .malformed(uid: uid, "NS.uuidbytes holds \(bytes.count) bytes, not 16") }
            return .leaf(.uuid(bytes))
        case "NSURL":
            let relative = try string(fields, "NS.relative", uid)
            if case .uid(let r)? = fields["NS.base"] {
                guard r < UInt64(objects.count) else { throw .referenceOutOfRange(uid: r, objectCount: objects.count) }
                return .url(relative: relative, base: r)
            }
            return .url(relative: relative, base: 0)
        case "NSArray", "NSMutableArray":
            return .list(.array(name == "NSMutableArray"), try members(fields, "NS.objects", uid))
        case "NSSet", "NSMutableSet":
            return .list(.set(name == "NSMutableSet"), try members(fields, "NS.objects", uid))
        case "NSOrderedSet", "NSMutableOrderedSet":
            var items: [UInt64] = []
            var k = 0
            while k < fields.count, let ref = fields[PlistKey("NS.object.\(k)")] {
                items.append(try member(ref, uid))
                k += 1
            }
            return .list(.orderedSet(name == "NSMutableOrderedSet"), items)
        case "NSDictionary", "NSMutableDictionary":
            let keys = try members(fields, "NS.keys", uid)
            let values = try members(fields, "NS.objects", uid)
            guard keys.count == values.count else {
                throw .malformed(uid: uid, "NS.keys has \(keys.count) entries and NS.objects \(values.count)")
            }
            return .dictionary(keys: keys, values: values, mutable: name == "NSMutableDictionary")
        default:
            return .object(chain, fields)
        }
    }

    /// A value stored in an object itself rather than by UID.
    private mutating func inlineValue(_ raw: PlistValue, owner: UInt64) throws(KeyedArchiveError) -> ArchiveValue {
        if let scalar = ArchiveValue(scalar: raw) { return scalar }
        switch raw {
        case .string, .integer, .real, .bool, .data, .date: return .null   // scalars: above
        case .uid(let ref): return try value(ref) ?? .null
        case .array(let items):
            var out: [ArchiveValue] = []
            out.reserveCapacity(items.count)
            for item in items { out.append(try inlineValue(item, owner: owner)) }
            return .array(out)
        case .dictionary(let d):
            var entries: [ArchiveEntry] = []
            for key in d.keys.sorted() { entries.append(ArchiveEntry(key.string, try inlineValue(d[key]!, owner: owner))) }
            return .dictionary(entries)
        }
    }

    private func member(_ ref: PlistValue, _ uid: UInt64) throws(KeyedArchiveError) -> UInt64 {
        guard case .uid(let r) = ref else { throw .malformed(uid: uid, "a collection member that is a \(ref.typeName), not a UID") }
        guard r != 0 else { throw .malformed(uid: uid, "a collection holds $null") }
        guard r < UInt64(objects.count) else { throw .referenceOutOfRange(uid: r, objectCount: objects.count) }
        return r
    }

    private func members(_ fields: [PlistKey: PlistValue], _ key: String, _ uid: UInt64) throws(KeyedArchiveError) -> [UInt64] {
        guard let raw = fields[key] else { throw .malformed(uid: uid, "no \(key)") }
        guard case .array(let refs) = raw else { throw .malformed(uid: uid, "\(key) is a \(raw.typeName), not an array") }
        var out: [UInt64] = []
        out.reserveCapacity(refs.count)
        for ref in refs { out.append(try member(ref, uid)) }
        return out
    }

    /// A string stored inline or by UID.
    private mutating func string(_ fields: [PlistKey: PlistValue], _ key: String, _ uid: UInt64) throws(KeyedArchiveError) -> String {
        switch fields[key] {
        case .string(let s)?: return s
        case .uid(let r)?:
            if case .string(let s, _)? = try value(r) { return s }
        default: break
        }
        throw .malformed(uid: uid, "\(key) is missing or not a string")
    }

    private mutating func data(_ fields: [PlistKey: PlistValue], _ key: String, _ uid: UInt64) throws(KeyedArchiveError) -> [UInt8] {
        switch fields[key] {
        case .data(let d)?: return d
        case .uid(let r)?:
            if case .data(let d, _)? = try value(r) { return d }
        default: break
        }
        throw .malformed(uid: uid, "\(key) is missing or not data")
    }
}
