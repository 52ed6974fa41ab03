#if canImport(Glibc)
import Glibc
#endif

/// Encodes a value as a `bplist00` file in one walk over the value.
///
/// Objects are numbered in pre-order, so the top object is number 0 as in
/// files Core Foundation and Python write. Scalars go straight into the
/// output as they are met; arrays and dictionaries only reserve their
/// numbers and a run of reference slots, and are written after the walk,
/// once the object count — and so the reference width — is known. The
/// offset table does not require objects to appear in number order, and no
/// reader expects it.
///
/// Strings (values and keys alike) are written once and shared; booleans
/// too. Dictionary keys are sorted by code point (UTF-8 byte order), so the
/// same value always gives the same bytes.
struct BinaryPlistWriter: ~Copyable {
    private var out: ByteBuffer
    /// Where each object starts, by object number.
    private var offsets: [Int] = []
    /// Object references of every container, each container's in one run.
    private var refs: [UInt32] = []
    private var containers: [PendingContainer] = []
    private var strings = StringTable()
    private var trueObject = -1
    private var falseObject = -1

    private struct PendingContainer {
        var object: Int
        /// 0xA0 for an array, 0xD0 for a dictionary.
        var marker: UInt8
        var count: Int
        var refsStart: Int
    }

    /// Encodes `value`.
    ///
    /// - Throws: ``PlistError/tooDeep(limit:)`` or
    ///   ``PlistError/unrepresentable(_:)`` for an integer outside
    ///   ``PlistValue/integerRange``.
    static func encode(_ value: PlistValue) throws(PlistError) -> [UInt8] {
        var writer = BinaryPlistWriter()
        return try writer.run(value)
    }

    private init() {
        out = ByteBuffer(capacity: 1 << 10)
        offsets.reserveCapacity(16)
        refs.reserveCapacity(32)
        containers.reserveCapacity(4)
    }

    private mutating func run(_ value: PlistValue) throws(PlistError) -> [UInt8] {
        out.append(contentsOf: BinaryPlistReader.magic)
        let top = try object(value, depth: 0)
        guard offsets.count < Int(UInt32.max) else {
            throw .unrepresentable("a property list of more than \(UInt32.max) objects")
        }
        let objectCount = offsets.count
        let refSize = Self.width(UInt64(objectCount - 1))
        for c in containers {
            offsets[c.object] = out.count
            writeHeader(c.marker, count: c.count)
            let n = c.marker == 0xD0 ? 2 * c.count : c.count
            out.reserve(n * refSize)
            refs.withUnsafeBufferPointer { r in
                for i in c.refsStart..<(c.refsStart + n) {
                    out.appendUnchecked(bigEndian: UInt64(r[i]), size: refSize)
                }
            }
        }
        let tableStart = out.count
        let offsetSize = Self.width(UInt64(tableStart))
        out.reserve(objectCount * offsetSize + 32)
        for o in offsets {
            out.appendUnchecked(bigEndian: UInt64(o), size: offsetSize)
        }
        for _ in 0..<6 { out.append(0) }
        out.append(UInt8(offsetSize))
        out.append(UInt8(refSize))
        out.append(bigEndian: UInt64(objectCount), size: 8)
        out.append(bigEndian: UInt64(top), size: 8)
        out.append(bigEndian: UInt64(tableStart), size: 8)
        return out.array()
    }

    /// The fewest of 1, 2, 4 or 8 bytes that hold `v`.
    private static func width(_ v: UInt64) -> Int {
        v <= 0xFF ? 1 : v <= 0xFFFF ? 2 : v <= 0xFFFF_FFFF ? 4 : 8
    }

    // MARK: - Objects

    private mutating func object(_ value: PlistValue, depth: Int) throws(PlistError) -> Int {
        switch value {
        case .string(let s):
            return string(s)
        case .array(let items):
            return try array(items, depth: depth + 1)
        case .dictionary(let entries):
            return try dictionary(entries, depth: depth + 1)
        default:
            return try scalar(value)
        }
    }

    @inline(never)
    private mutating func array(_ items: [PlistValue], depth: Int) throws(PlistError) -> Int {
        guard depth <= PlistValue.maximumDepth else { throw .tooDeep(limit: PlistValue.maximumDepth) }
        let index = offsets.count
        offsets.append(0)
        let start = refs.count
        refs.append(contentsOf: repeatElement(0, count: items.count))
        containers.append(PendingContainer(object: index, marker: 0xA0, count: items.count, refsStart: start))
        var slot = start
        for item in items {
            let child = try object(item, depth: depth)
            refs[slot] = UInt32(truncatingIfNeeded: child)
            slot += 1
        }
        return index
    }

    @inline(never)
    private mutating func dictionary(_ entries: [PlistKey: PlistValue], depth: Int) throws(PlistError) -> Int {
        guard depth <= PlistValue.maximumDepth else { throw .tooDeep(limit: PlistValue.maximumDepth) }
        let index = offsets.count
        offsets.append(0)
        let n = entries.count
        let start = refs.count
        refs.append(contentsOf: repeatElement(0, count: 2 * n))
        containers.append(PendingContainer(object: index, marker: 0xD0, count: n, refsStart: start))
        // The keys' UTF-8 goes into one arena so that sorting and uniquing
        // compare bytes, without String comparison or reference counting.
        var arena: [UInt8] = []
        arena.reserveCapacity(n * 16)
        var keys: [KeySpan] = []
        keys.reserveCapacity(n)
        var values: [PlistValue] = []
        values.reserveCapacity(n)
        for (key, value) in entries {
            let keyStart = arena.count
            if key.string.utf8.withContiguousStorageIfAvailable({ arena.append(contentsOf: $0) }) == nil {
                arena.append(contentsOf: key.string.utf8)
            }
            keys.append(KeySpan(start: keyStart, count: arena.count - keyStart, prefix: 0))
            values.append(value)
        }
        var order = Array(0..<n)
        arena.withUnsafeBufferPointer { a in
            let base = a.baseAddress
            for k in 0..<n {
                // First eight bytes, big-endian, zero-padded: orders like the bytes.
                var prefix: UInt64 = 0
                for j in 0..<8 {
                    prefix <<= 8
                    if j < keys[k].count { prefix |= UInt64(a[keys[k].start + j]) }
                }
                keys[k].prefix = prefix
            }
            keys.withUnsafeBufferPointer { spans in
                order.sort { x, y in
                    let (l, r) = (spans[x], spans[y])
                    if l.prefix != r.prefix { return l.prefix < r.prefix }
                    let common = min(l.count, r.count)
                    if common > 8 {
                        let c = memcmp(base! + l.start + 8, base! + r.start + 8, common - 8)
                        if c != 0 { return c < 0 }
                    }
                    return l.count < r.count
                }
            }
            var slot = start
            for k in order {
                refs[slot] = UInt32(truncatingIfNeeded: string(UnsafeBufferPointer(start: base.map { $0 + keys[k].start }, count: keys[k].count)))
                slot += 1
            }
        }
        var slot = start + n
        for k in order {
            let child = try object(values[k], depth: depth)
            refs[slot] = UInt32(truncatingIfNeeded: child)
            slot += 1
        }
        return index
    }

    private struct KeySpan {
        var start: Int
        var count: Int
        var prefix: UInt64
    }

    @inline(never)
    private mutating func scalar(_ value: PlistValue) throws(PlistError) -> Int {
        switch value {
        case .bool(let b):
            if b, trueObject >= 0 { return trueObject }
            if !b, falseObject >= 0 { return falseObject }
            let index = newObject()
            out.append(b ? 0x09 : 0x08)
            if b { trueObject = index } else { falseObject = index }
            return index
        case .integer(let v):
            guard PlistValue.integerRange.contains(v) else {
                throw .unrepresentable("integer \(v) in a property list (outside \(Int64.min)...\(UInt64.max))")
            }
            let index = newObject()
            out.reserve(17)
            if v < 0 {
                out.appendUnchecked(0x13)
                out.appendUnchecked(bigEndian: UInt64(bitPattern: Int64(v)), size: 8)
            } else if v > Int128(Int64.max) {
                out.appendUnchecked(0x14)
                out.appendUnchecked(bigEndian: 0, size: 8)
                out.appendUnchecked(bigEndian: UInt64(v), size: 8)
            } else {
                let u = UInt64(v)
                let size = Self.width(u)
                out.appendUnchecked(0x10 | UInt8(size.trailingZeroBitCount))
                out.appendUnchecked(bigEndian: u, size: size)
            }
            return index
        case .real(let d):
            let index = newObject()
            out.reserve(9)
            out.appendUnchecked(0x23)
            out.appendUnchecked(bigEndian: d.bitPattern, size: 8)
            return index
        case .date(let date):
            let index = newObject()
            out.reserve(9)
            out.appendUnchecked(0x33)
            out.appendUnchecked(bigEndian: date.secondsSinceReferenceDate.bitPattern, size: 8)
            return index
        case .data(let bytes):
            let index = newObject()
            writeHeader(0x40, count: bytes.count)
            out.append(contentsOf: bytes)
            return index
        case .uid(let v):
            let index = newObject()
            let size = Self.width(v)
            out.reserve(9)
            out.appendUnchecked(0x80 | UInt8(size - 1))
            out.appendUnchecked(bigEndian: v, size: size)
            return index
        case .string, .array, .dictionary:
            preconditionFailure("containers and strings are handled by object(_:depth:)")
        }
    }

    @inline(__always)
    private mutating func newObject() -> Int {
        offsets.append(out.count)
        return offsets.count - 1
    }

    /// The object number of `s`, writing it on first use.
    private mutating func string(_ s: String) -> Int {
        if let index = s.utf8.withContiguousStorageIfAvailable({ string($0) }) { return index }
        return string(Array(s.utf8))
    }

    private mutating func string(_ utf8: [UInt8]) -> Int {
        utf8.withUnsafeBufferPointer { string($0) }
    }

    /// The object number of the string with these (valid) UTF-8 bytes.
    private mutating func string(_ utf8: UnsafeBufferPointer<UInt8>) -> Int {
        let candidate = offsets.count
        let index = strings.find(utf8, orInsert: candidate)
        if index == candidate {
            offsets.append(out.count)
            writeString(utf8)
        }
        return index
    }

    private mutating func writeString(_ utf8: UnsafeBufferPointer<UInt8>) {
        do {
            let n = utf8.count
            guard let p = utf8.baseAddress, n > 0 else {
                out.append(0x50)
                return
            }
            var bits: UInt8 = 0
            for b in utf8 { bits |= b }
            if bits < 0x80 {
                writeHeader(0x50, count: n)
                out.append(UnsafeRawBufferPointer(start: p, count: n))
                return
            }
            // Valid UTF-8: one UTF-16 unit per scalar, two for 4-byte sequences.
            var units = 0
            for b in utf8 {
                if b & 0xC0 != 0x80 { units += 1 }
                if b >= 0xF0 { units += 1 }
            }
            writeHeader(0x60, count: units)
            out.reserve(2 * units)
            var i = 0
            while i < n {
                let b0 = UInt32(p[i])
                var scalar: UInt32
                if b0 < 0x80 {
                    scalar = b0; i += 1
                } else if b0 < 0xE0 {
                    scalar = (b0 & 0x1F) << 6 | UInt32(p[i + 1] & 0x3F); i += 2
                } else if b0 < 0xF0 {
                    scalar = (b0 & 0x0F) << 12 | UInt32(p[i + 1] & 0x3F) << 6 | UInt32(p[i + 2] & 0x3F); i += 3
                } else {
                    scalar = (b0 & 0x07) << 18 | UInt32(p[i + 1] & 0x3F) << 12 | UInt32(p[i + 2] & 0x3F) << 6 | UInt32(p[i + 3] & 0x3F); i += 4
                }
                if scalar >= 0x10000 {
                    scalar -= 0x10000
                    out.appendUnchecked(bigEndian: UInt64(0xD800 | scalar >> 10), size: 2)
                    out.appendUnchecked(bigEndian: UInt64(0xDC00 | scalar & 0x3FF), size: 2)
                } else {
                    out.appendUnchecked(bigEndian: UInt64(scalar), size: 2)
                }
            }
        }
    }

    /// A marker byte with its count: in the low nibble below 15, else as a
    /// following integer object.
    private mutating func writeHeader(_ marker: UInt8, count: Int) {
        out.reserve(10)
        if count < 15 {
            out.appendUnchecked(marker | UInt8(count))
        } else {
            out.appendUnchecked(marker | 0x0F)
            let size = Self.width(UInt64(count))
            out.appendUnchecked(0x10 | UInt8(size.trailingZeroBitCount))
            out.appendUnchecked(bigEndian: UInt64(count), size: size)
        }
    }
}

/// A growable byte buffer with unchecked appends for the hot paths.
///
/// `reserve(_:)` first, then `appendUnchecked`; the checked `append`
/// variants reserve for themselves.
struct ByteBuffer: ~Copyable {
    private var base: UnsafeMutablePointer<UInt8>
    private(set) var count = 0
    private var capacity: Int

    init(capacity: Int) {
        self.capacity = max(capacity, 16)
        base = .allocate(capacity: self.capacity)
    }

    deinit { base.deallocate() }

    @inline(__always)
    mutating func reserve(_ n: Int) {
        if count + n > capacity { grow(count + n) }
    }

    @inline(never)
    private mutating func grow(_ needed: Int) {
        var newCapacity = capacity * 2
        while newCapacity < needed { newCapacity *= 2 }
        let newBase = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        newBase.update(from: base, count: count)
        base.deallocate()
        base = newBase
        capacity = newCapacity
    }

    /// The address of byte `offset`; valid until the next append.
    func pointer(at offset: Int) -> UnsafeRawPointer {
        UnsafeRawPointer(base + offset)
    }

    @inline(__always)
    mutating func appendUnchecked(_ b: UInt8) {
        base[count] = b
        count += 1
    }

    /// The low `size` bytes of `v`, most significant first.
    @inline(__always)
    mutating func appendUnchecked(bigEndian v: UInt64, size: Int) {
        switch size {
        case 1: base[count] = UInt8(truncatingIfNeeded: v)
        case 2: UnsafeMutableRawPointer(base + count).storeBytes(of: UInt16(truncatingIfNeeded: v).bigEndian, as: UInt16.self)
        case 4: UnsafeMutableRawPointer(base + count).storeBytes(of: UInt32(truncatingIfNeeded: v).bigEndian, as: UInt32.self)
        case 8: UnsafeMutableRawPointer(base + count).storeBytes(of: v.bigEndian, as: UInt64.self)
        default:
            for i in 0..<size { base[count + i] = UInt8(truncatingIfNeeded: v >> UInt64(8 * (size - 1 - i))) }
        }
        count += size
    }

    @inline(__always)
    mutating func append(_ b: UInt8) {
        reserve(1)
        appendUnchecked(b)
    }

    mutating func append(bigEndian v: UInt64, size: Int) {
        reserve(size)
        appendUnchecked(bigEndian: v, size: size)
    }

    mutating func append(_ bytes: UnsafeRawBufferPointer) {
        reserve(bytes.count)
        if let p = bytes.baseAddress, bytes.count > 0 {
            UnsafeMutableRawPointer(base + count).copyMemory(from: p, byteCount: bytes.count)
        }
        count += bytes.count
    }

    mutating func append(contentsOf bytes: [UInt8]) {
        bytes.withUnsafeBytes { append($0) }
    }

    /// The bytes written so far, as an array.
    func array() -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            if count > 0 { buffer.baseAddress!.update(from: base, count: count) }
            initialized = count
        }
    }
}

/// Uniques strings by their UTF-8 bytes: open addressing over a byte arena.
///
/// Faster than `[String: Int]` for the writer's purpose because it hashes
/// raw bytes with a cheap multiplicative hash (seeded per table, so keys
/// cannot be chosen to collide in advance) and compares with `memcmp`.
struct StringTable: ~Copyable {
    private struct Slot {
        var hash: UInt64
        var start: Int
        var count: Int
        /// -1 for an empty slot.
        var object: Int
    }

    private var slots: UnsafeMutablePointer<Slot>
    private var mask: Int
    private var used = 0
    private var arena = ByteBuffer(capacity: 1 << 8)
    private let seed = Self.processSeed
    /// One random seed a process (a `getrandom` per table cost each encode a system call).
    private static let processSeed = UInt64.random(in: .min ... .max)

    init() {
        mask = 15
        slots = .allocate(capacity: mask + 1)
        slots.initialize(repeating: Slot(hash: 0, start: 0, count: 0, object: -1), count: mask + 1)
    }

    deinit { slots.deallocate() }

    private func hash(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
        var h = seed ^ UInt64(bytes.count)
        guard let p = bytes.baseAddress else { return h }
        let raw = UnsafeRawPointer(p)
        var i = 0
        while i + 8 <= bytes.count {
            h = (h ^ raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)) &* 0x9E37_79B9_7F4A_7C15
            h ^= h >> 32
            i += 8
        }
        var tail: UInt64 = 0
        while i < bytes.count {
            tail = tail << 8 | UInt64(p[i])
            i += 1
        }
        h = (h ^ tail) &* 0xBF58_476D_1CE4_E5B9
        return h ^ (h >> 29)
    }

    /// The object number stored for `bytes`, or `object` after storing it.
    mutating func find(_ bytes: UnsafeBufferPointer<UInt8>, orInsert object: Int) -> Int {
        let h = hash(bytes)
        var i = Int(truncatingIfNeeded: h) & mask
        while true {
            let slot = slots[i]
            if slot.object < 0 { break }
            if slot.hash == h, slot.count == bytes.count,
               bytes.count == 0 || memcmp(arena.pointer(at: slot.start), bytes.baseAddress!, bytes.count) == 0 {
                return slot.object
            }
            i = (i + 1) & mask
        }
        let start = arena.count
        arena.append(UnsafeRawBufferPointer(bytes))
        slots[i] = Slot(hash: h, start: start, count: bytes.count, object: object)
        used += 1
        if used * 2 > mask { grow() }
        return object
    }

    private mutating func grow() {
        let oldSlots = slots
        let oldCount = mask + 1
        mask = oldCount * 2 - 1
        slots = .allocate(capacity: mask + 1)
        slots.initialize(repeating: Slot(hash: 0, start: 0, count: 0, object: -1), count: mask + 1)
        for k in 0..<oldCount where oldSlots[k].object >= 0 {
            var i = Int(truncatingIfNeeded: oldSlots[k].hash) & mask
            while slots[i].object >= 0 { i = (i + 1) & mask }
            slots[i] = oldSlots[k]
        }
        oldSlots.deallocate()
    }
}
