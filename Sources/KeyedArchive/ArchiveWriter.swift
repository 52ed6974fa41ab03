import PropertyList

/// Writes a graph as Foundation's `NSKeyedArchiver` does.
///
/// `$objects[0]` is `$null`; strings, numbers and immutable data are plain
/// values in `$objects`, each distinct one written once (a boolean never
/// merges with the integers 0 and 1); class records are written once per
/// class chain; each ``ArchiveObject`` is written once, its UID taken before
/// its fields so that a field may lead back to it. An object's number is
/// always lower than those of what it holds, as Foundation numbers them.
struct ArchiveWriter {
    private var objects: [PlistValue] = [.string("$null")]
    private var scalars: [PlistValue: UInt64] = [:]
    private var classRecords: [[String]: UInt64] = [:]
    private var written: [ObjectIdentifier: UInt64] = [:]
    private var depth = 0
    private var count = 0
    private let limit: Int

    init(limit: Int = KeyedArchive.maximumExpansion) {
        self.limit = limit
    }

    mutating func archive(_ archive: KeyedArchive) throws(KeyedArchiveError) -> PlistValue {
        var top: [PlistKey: PlistValue] = [:]
        for key in archive.top.keys.sorted() {
            let value = archive.top[key]!
            if archive.inlineTopKeys.contains(key), let inline = try inlineForm(value) {
                top[key] = inline
            } else {
                top[key] = .uid(try reference(value))
            }
        }
        return .dictionary([
            "$archiver": .string(KeyedArchive.archiverName),
            "$version": .integer(KeyedArchive.version),
            "$top": .dictionary(top),
            "$objects": .array(objects),
        ])
    }

    /// A scalar as it is stored inside an object (`encodeInteger:forKey:` and kin), or `nil`
    /// for a value that is always stored by UID.
    private mutating func inlineForm(_ value: ArchiveValue) throws(KeyedArchiveError) -> PlistValue? {
        switch value {
        case .bool(let b): return .bool(b)
        case .integer(let n): return try integer(n)
        case .real(let r): return .real(r)
        case .data(let d, false): return .data(d)
        case .array(let items, false):
            var refs: [PlistValue] = []
            refs.reserveCapacity(items.count)
            for item in items { refs.append(.uid(try reference(item))) }
            return .array(refs)
        default: return nil
        }
    }

    private func integer(_ n: Int128) throws(KeyedArchiveError) -> PlistValue {
        guard PlistValue.integerRange.contains(n) else { throw .unrepresentable("the integer \(n) (outside a property list's range)") }
        return .integer(n)
    }

    /// The UID of a value, writing it (and what it holds) if it is not written yet.
    private mutating func reference(_ value: ArchiveValue) throws(KeyedArchiveError) -> UInt64 {
        count += 1
        guard count <= limit else { throw .tooLarge(limit: limit) }
        switch value {
        case .string(let s, false): return scalar(.string(s))
        case .bool(let b): return scalar(.bool(b))
        case .integer(let n): return scalar(try integer(n))
        case .real(let r): return scalar(.real(r))
        case .data(let d, false): return scalar(.data(d))
        case .reference(let uid):
            throw .unrepresentable("a cycle through Foundation collections (the reference to object \(uid))")
        case .object(let object):
            if let uid = written[ObjectIdentifier(object)] { return uid }
            return try nested { (w: inout ArchiveWriter) throws(KeyedArchiveError) -> UInt64 in try w.write(object) }
        case .shared(let box):
            if let uid = written[ObjectIdentifier(box)] { return uid }
            switch box.value {
            case .array, .set, .orderedSet, .dictionary:
                // The slot is the box's before its members are written: a member may lead back to it.
                return try nested { (w: inout ArchiveWriter) throws(KeyedArchiveError) -> UInt64 in
                    try w.writeFoundation(box.value, sharedAs: ObjectIdentifier(box))
                }
            case .shared:
                throw .unrepresentable("a shared value that is only another shared value")
            default:
                let uid = try nested { (w: inout ArchiveWriter) throws(KeyedArchiveError) -> UInt64 in try w.reference(box.value) }
                written[ObjectIdentifier(box)] = uid
                return uid
            }
        default:
            return try nested { (w: inout ArchiveWriter) throws(KeyedArchiveError) -> UInt64 in try w.writeFoundation(value) }
        }
    }

    private mutating func nested(_ body: (inout ArchiveWriter) throws(KeyedArchiveError) -> UInt64) throws(KeyedArchiveError) -> UInt64 {
        depth += 1
        defer { depth -= 1 }
        guard depth <= KeyedArchive.maximumDepth else { throw .tooDeep(limit: KeyedArchive.maximumDepth) }
        return try body(&self)
    }

    private mutating func scalar(_ value: PlistValue) -> UInt64 {
        if let uid = scalars[value] { return uid }
        let uid = UInt64(objects.count)
        objects.append(value)
        scalars[value] = uid
        return uid
    }

    private mutating func classRecord(_ chain: [String]) -> UInt64 {
        if let uid = classRecords[chain] { return uid }
        let uid = UInt64(objects.count)
        objects.append(.dictionary([
            "$classname": .string(chain.first ?? ""),
            "$classes": .array(chain.map { .string($0) }),
        ]))
        classRecords[chain] = uid
        return uid
    }

    private mutating func reserve() -> Int {
        objects.append(.string("$null"))
        return objects.count - 1
    }

    private mutating func write(_ object: ArchiveObject) throws(KeyedArchiveError) -> UInt64 {
        guard !object.classChain.isEmpty, !object.className.isEmpty else {
            throw .unrepresentable("an object without a class name")
        }
        let slot = reserve()
        written[ObjectIdentifier(object)] = UInt64(slot)
        var record: [PlistKey: PlistValue] = [:]
        record.reserveCapacity(object.fields.count + 1)
        for key in object.fields.keys.sorted() {
            guard key.string != "$class" else { throw .unrepresentable("a field named $class (a coder key starting with $ is stored as $$…)") }
            let value = object.fields[key]!
            if object.inlineKeys.contains(key), let inline = try inlineForm(value) {
                record[key] = inline
            } else {
                record[key] = .uid(try reference(value))
            }
        }
        record["$class"] = .uid(classRecord(object.classChain))
        objects[slot] = .dictionary(record)
        return UInt64(slot)
    }

    private static let chains: [String: [String]] = [
        "NSNull": ["NSNull", "NSObject"],
        "NSMutableString": ["NSMutableString", "NSString", "NSObject"],
        "NSMutableData": ["NSMutableData", "NSData", "NSObject"],
        "NSDate": ["NSDate", "NSObject"],
        "NSArray": ["NSArray", "NSObject"],
        "NSMutableArray": ["NSMutableArray", "NSArray", "NSObject"],
        "NSDictionary": ["NSDictionary", "NSObject"],
        "NSMutableDictionary": ["NSMutableDictionary", "NSDictionary", "NSObject"],
        "NSSet": ["NSSet", "NSObject"],
        "NSMutableSet": ["NSMutableSet", "NSSet", "NSObject"],
        "NSOrderedSet": ["NSOrderedSet", "NSObject"],
        "NSMutableOrderedSet": ["NSMutableOrderedSet", "NSOrderedSet", "NSObject"],
        "NSUUID": ["NSUUID", "NSObject"],
        "NSURL": ["NSURL", "NSObject"],
    ]

    private mutating func writeFoundation(_ value: ArchiveValue, sharedAs box: ObjectIdentifier? = nil) throws(KeyedArchiveError) -> UInt64 {
        let slot = reserve()
        if let box { written[box] = UInt64(slot) }
        var record: [PlistKey: PlistValue] = [:]
        switch value {
        case .null: break
        case .string(let s, _): record["NS.string"] = .string(s)
        case .data(let d, _): record["NS.data"] = .data(d)
        case .date(let d): record["NS.time"] = .real(d.secondsSinceReferenceDate)
        case .uuid(let bytes):
            guard bytes.count == 16 else { throw .unrepresentable("a UUID of \(bytes.count) bytes") }
            record["NS.uuidbytes"] = .data(bytes)
        case .url(let base, let relative):
            record["NS.base"] = .uid(try base.map { (b: URLBase) throws(KeyedArchiveError) -> UInt64 in try urlBase(b) } ?? 0)
            record["NS.relative"] = .uid(try reference(.string(relative)))
        case .array(let items, _), .set(let items, _):
            record["NS.objects"] = .array(try refs(items))
        case .orderedSet(let items, _):
            for (k, item) in items.enumerated() { record[PlistKey("NS.object.\(k)")] = .uid(try reference(item)) }
        case .dictionary(let entries, _):
            record["NS.keys"] = .array(try refs(entries.map(\.key)))
            record["NS.objects"] = .array(try refs(entries.map(\.value)))
        case .bool, .integer, .real, .object, .reference, .shared:
            throw .unrepresentable("\(value.className) as a Foundation object")
        }
        record["$class"] = .uid(classRecord(Self.chains[value.className] ?? [value.className, "NSObject"]))
        objects[slot] = .dictionary(record)
        return UInt64(slot)
    }

    private mutating func urlBase(_ base: URLBase) throws(KeyedArchiveError) -> UInt64 {
        try reference(.url(base: base.base, relative: base.relative))
    }

    private mutating func refs(_ items: [ArchiveValue]) throws(KeyedArchiveError) -> [PlistValue] {
        var out: [PlistValue] = []
        out.reserveCapacity(items.count)
        for item in items { out.append(.uid(try reference(item))) }
        return out
    }
}
