#if canImport(Glibc)
import Glibc
#endif

/// Decodes `bplist00` files.
///
/// Layout: an 8-byte magic, the objects, an offset table (one big-endian
/// offset per object) and a 32-byte trailer naming the offset and reference
/// widths, the object count, the top object and where the offset table
/// starts. The reader validates the trailer once, then reads straight from
/// the raw buffer; every read is bounds-checked against the object area
/// (`8 ..< offsetTableStart`) by explicit comparisons, never by trapping.
///
/// Each object is decoded once: strings and collections are remembered by
/// object number, so a shared string (writers unique them) is validated and
/// allocated once, and a file whose objects are referenced many times costs
/// no more than the objects it holds. An object met again while it is still
/// being decoded is a reference cycle and is rejected.
struct BinaryPlistReader: ~Copyable {
    static let magic: [UInt8] = Array("bplist00".utf8)

    private let base: UnsafeRawPointer
    /// End of the object area: the offset table's start.
    private let objectEnd: Int
    private let offsetSize: Int
    private let refSize: Int
    private let objectCount: Int
    private let offsetTableStart: Int
    /// Per object: 0 not seen, 1 being decoded, 2 decoded and cached.
    private let state: UnsafeMutablePointer<UInt8>
    /// Decoded values; slot `i` is initialised exactly when `state[i] == 2`.
    private let cache: UnsafeMutablePointer<PlistValue>

    private enum State {
        static let unseen: UInt8 = 0
        static let inProgress: UInt8 = 1
        static let cached: UInt8 = 2
    }

    /// Decodes a whole binary property list.
    ///
    /// - Throws: ``PlistError/malformed(format:detail:)`` naming the byte
    ///   offset of the problem, or ``PlistError/tooDeep(limit:)``.
    static func decode(_ bytes: [UInt8]) throws(PlistError) -> PlistValue {
        let result: Result<PlistValue, PlistError> = bytes.withUnsafeBytes { raw in
            do throws(PlistError) {
                let reader = try BinaryPlistReader(raw)
                return .success(try reader.decodeTop())
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    private static func malformed(_ detail: String) -> PlistError {
        .malformed(format: "binary", detail: detail)
    }

    private init(_ raw: UnsafeRawBufferPointer) throws(PlistError) {
        let count = raw.count
        // Header, at least one one-byte object, one offset, trailer.
        guard count >= 8 + 1 + 1 + 32, let base = raw.baseAddress else {
            throw Self.malformed("file of \(count) bytes is too short")
        }
        guard memcmp(base, Self.magic, 8) == 0 else {
            throw Self.malformed("missing bplist00 header at offset 0")
        }
        let t = count - 32
        let offsetSize = Int(base.load(fromByteOffset: t + 6, as: UInt8.self))
        let refSize = Int(base.load(fromByteOffset: t + 7, as: UInt8.self))
        let objectCount = UInt64(bigEndian: base.loadUnaligned(fromByteOffset: t + 8, as: UInt64.self))
        let topObject = UInt64(bigEndian: base.loadUnaligned(fromByteOffset: t + 16, as: UInt64.self))
        let tableStart = UInt64(bigEndian: base.loadUnaligned(fromByteOffset: t + 24, as: UInt64.self))
        guard (1...8).contains(offsetSize) else {
            throw Self.malformed("trailer at offset \(t) has offset size \(offsetSize) (expected 1 to 8)")
        }
        guard (1...8).contains(refSize) else {
            throw Self.malformed("trailer at offset \(t) has object reference size \(refSize) (expected 1 to 8)")
        }
        guard objectCount >= 1 else {
            throw Self.malformed("trailer at offset \(t) declares no objects")
        }
        guard tableStart >= 9, tableStart < UInt64(t) else {
            throw Self.malformed("trailer at offset \(t) places the offset table at \(tableStart), outside the file")
        }
        // Division, not multiplication, so a huge count cannot overflow.
        guard objectCount <= (UInt64(t) - tableStart) / UInt64(offsetSize) else {
            throw Self.malformed("trailer at offset \(t) declares \(objectCount) objects but the offset table at \(tableStart) has room for fewer")
        }
        guard topObject < objectCount else {
            throw Self.malformed("trailer at offset \(t) names top object \(topObject) of \(objectCount)")
        }
        if refSize < 8 && objectCount > UInt64(1) << UInt64(8 * refSize) {
            throw Self.malformed("trailer at offset \(t) declares \(objectCount) objects, more than \(refSize)-byte references can name")
        }
        self.base = base
        self.offsetSize = offsetSize
        self.refSize = refSize
        self.objectCount = Int(objectCount)
        self.offsetTableStart = Int(tableStart)
        self.objectEnd = Int(tableStart)
        self.state = .allocate(capacity: Int(objectCount))
        self.state.initialize(repeating: State.unseen, count: Int(objectCount))
        self.cache = .allocate(capacity: Int(objectCount))
        self.top = Int(topObject)
    }

    private let top: Int

    deinit {
        for i in 0..<objectCount where state[i] == State.cached {
            (cache + i).deinitialize(count: 1)
        }
        cache.deallocate()
        state.deallocate()
    }

    private func decodeTop() throws(PlistError) -> PlistValue {
        try object(top, depth: 0)
    }

    // MARK: - Raw reads

    @inline(__always)
    private func byte(_ at: Int) -> UInt8 {
        base.load(fromByteOffset: at, as: UInt8.self)
    }

    /// A big-endian unsigned integer of `size` (1...8) bytes; the caller
    /// has checked the bounds.
    @inline(__always)
    private func uint(at: Int, size: Int) -> UInt64 {
        switch size {
        case 1: return UInt64(base.load(fromByteOffset: at, as: UInt8.self))
        case 2: return UInt64(UInt16(bigEndian: base.loadUnaligned(fromByteOffset: at, as: UInt16.self)))
        case 4: return UInt64(UInt32(bigEndian: base.loadUnaligned(fromByteOffset: at, as: UInt32.self)))
        case 8: return UInt64(bigEndian: base.loadUnaligned(fromByteOffset: at, as: UInt64.self))
        default:
            var v: UInt64 = 0
            for i in 0..<size { v = v << 8 | UInt64(base.load(fromByteOffset: at + i, as: UInt8.self)) }
            return v
        }
    }

    /// The file offset of object `ref`, checked to lie in the object area.
    @inline(__always)
    private func offset(of ref: Int) throws(PlistError) -> Int {
        let o = uint(at: offsetTableStart + ref * offsetSize, size: offsetSize)
        guard o >= 8, o < UInt64(objectEnd) else {
            throw Self.malformed("object \(ref) has offset \(o), outside the object area 8..<\(objectEnd)")
        }
        return Int(o)
    }

    /// Reads the object count that follows a marker whose low nibble is
    /// `nibble`, returning the count and where the payload starts.
    @inline(__always)
    private func count(marker at: Int, nibble: UInt8) throws(PlistError) -> (count: Int, start: Int) {
        if nibble != 0x0F { return (Int(nibble), at + 1) }
        guard at + 2 <= objectEnd else {
            throw Self.malformed("extended count of object at offset \(at) runs past the object area")
        }
        let intMarker = byte(at + 1)
        guard intMarker & 0xF0 == 0x10, intMarker & 0x0F <= 3 else {
            throw Self.malformed("object at offset \(at) has an extended count whose marker 0x\(Self.hex(intMarker)) is not a 1, 2, 4 or 8-byte integer")
        }
        let size = 1 << Int(intMarker & 0x0F)
        guard at + 2 + size <= objectEnd else {
            throw Self.malformed("extended count of object at offset \(at) runs past the object area")
        }
        let n = uint(at: at + 2, size: size)
        guard n <= UInt64(objectEnd) else {
            throw Self.malformed("object at offset \(at) declares \(n) elements, more than the file holds")
        }
        return (Int(n), at + 2 + size)
    }

    /// Checks that `count` items of `width` bytes from `start` fit in the object area.
    @inline(__always)
    private func checkPayload(_ start: Int, count: Int, width: Int, object at: Int) throws(PlistError) {
        guard count <= (objectEnd - start) / width else {
            throw Self.malformed("object at offset \(at) declares \(count) elements, which run past the object area")
        }
    }

    // MARK: - Objects

    private func object(_ ref: Int, depth: Int) throws(PlistError) -> PlistValue {
        switch state[ref] {
        case State.cached:
            return cache[ref]
        case State.inProgress:
            throw Self.malformed("object \(ref) at offset \((try? offset(of: ref)) ?? 0) contains itself (reference cycle)")
        default:
            break
        }
        let at = try offset(of: ref)
        let marker = byte(at)
        switch marker >> 4 {
        case 0x5, 0x6:
            let value = PlistValue.string(try string(at: at, marker: marker))
            (cache + ref).initialize(to: value)
            state[ref] = State.cached
            return value
        case 0xA:
            return try array(ref, at: at, marker: marker, depth: depth + 1)
        case 0xD:
            return try dictionary(ref, at: at, marker: marker, depth: depth + 1)
        default:
            return try scalar(at: at, marker: marker)
        }
    }

    @inline(never)
    private func array(_ ref: Int, at: Int, marker: UInt8, depth: Int) throws(PlistError) -> PlistValue {
        guard depth <= PlistValue.maximumDepth else { throw .tooDeep(limit: PlistValue.maximumDepth) }
        let (n, start) = try count(marker: at, nibble: marker & 0x0F)
        try checkPayload(start, count: n, width: refSize, object: at)
        state[ref] = State.inProgress
        var items: [PlistValue] = []
        items.reserveCapacity(n)
        var p = start
        for _ in 0..<n {
            let child = try reference(at: p, in: at)
            items.append(try object(child, depth: depth))
            p += refSize
        }
        let value = PlistValue.array(items)
        (cache + ref).initialize(to: value)
        state[ref] = State.cached
        return value
    }

    @inline(never)
    private func dictionary(_ ref: Int, at: Int, marker: UInt8, depth: Int) throws(PlistError) -> PlistValue {
        guard depth <= PlistValue.maximumDepth else { throw .tooDeep(limit: PlistValue.maximumDepth) }
        let (n, start) = try count(marker: at, nibble: marker & 0x0F)
        try checkPayload(start, count: n, width: 2 * refSize, object: at)
        state[ref] = State.inProgress
        var entries: [PlistKey: PlistValue] = [:]
        entries.reserveCapacity(n)
        var k = start
        var v = start + n * refSize
        for _ in 0..<n {
            let key = try self.key(try reference(at: k, in: at), dictionaryAt: at)
            let child = try reference(at: v, in: at)
            entries[key] = try object(child, depth: depth)
            k += refSize
            v += refSize
        }
        let value = PlistValue.dictionary(entries)
        (cache + ref).initialize(to: value)
        state[ref] = State.cached
        return value
    }

    @inline(__always)
    private func reference(at p: Int, in container: Int) throws(PlistError) -> Int {
        let r = uint(at: p, size: refSize)
        guard r < UInt64(objectCount) else {
            throw Self.malformed("object at offset \(container) refers to object \(r), but there are only \(objectCount)")
        }
        return Int(r)
    }

    private func key(_ ref: Int, dictionaryAt: Int) throws(PlistError) -> String {
        if state[ref] == State.cached, case .string(let s) = cache[ref] { return s }
        let at = try offset(of: ref)
        let marker = byte(at)
        guard marker >> 4 == 0x5 || marker >> 4 == 0x6 else {
            throw Self.malformed("dictionary at offset \(dictionaryAt) has a key (object \(ref) at offset \(at), marker 0x\(Self.hex(marker))) that is not a string")
        }
        let s = try string(at: at, marker: marker)
        if state[ref] == State.unseen {
            (cache + ref).initialize(to: .string(s))
            state[ref] = State.cached
        }
        return s
    }

    @inline(never)
    private func scalar(at: Int, marker: UInt8) throws(PlistError) -> PlistValue {
        let low = marker & 0x0F
        switch marker >> 4 {
        case 0x0:
            switch marker {
            case 0x08: return .bool(false)
            case 0x09: return .bool(true)
            case 0x00: throw Self.malformed("null object at offset \(at) is not supported")
            case 0x0F: throw Self.malformed("fill byte at offset \(at) is not an object")
            default: throw Self.malformed("unknown object marker 0x\(Self.hex(marker)) at offset \(at)")
            }
        case 0x1:
            guard low <= 4 else {
                throw Self.malformed("integer at offset \(at) has width 2^\(low) bytes (expected 1, 2, 4, 8 or 16)")
            }
            let size = 1 << Int(low)
            guard at + 1 + size <= objectEnd else {
                throw Self.malformed("integer at offset \(at) runs past the object area")
            }
            switch size {
            case 8:
                return .integer(Int128(Int64(bitPattern: uint(at: at + 1, size: 8))))
            case 16:
                let high = uint(at: at + 1, size: 8)
                guard high == 0 else {
                    throw Self.malformed("16-byte integer at offset \(at) is outside the range of property-list integers")
                }
                return .integer(Int128(uint(at: at + 9, size: 8)))
            default:
                return .integer(Int128(uint(at: at + 1, size: size)))
            }
        case 0x2:
            switch low {
            case 2:
                guard at + 5 <= objectEnd else { throw Self.malformed("real at offset \(at) runs past the object area") }
                return .real(Double(Float(bitPattern: UInt32(truncatingIfNeeded: uint(at: at + 1, size: 4)))))
            case 3:
                guard at + 9 <= objectEnd else { throw Self.malformed("real at offset \(at) runs past the object area") }
                return .real(Double(bitPattern: uint(at: at + 1, size: 8)))
            default:
                throw Self.malformed("real at offset \(at) has width 2^\(low) bytes (expected 4 or 8)")
            }
        case 0x3:
            guard marker == 0x33 else {
                throw Self.malformed("date at offset \(at) has marker 0x\(Self.hex(marker)) (expected 0x33)")
            }
            guard at + 9 <= objectEnd else { throw Self.malformed("date at offset \(at) runs past the object area") }
            return .date(PlistDate(secondsSinceReferenceDate: Double(bitPattern: uint(at: at + 1, size: 8))))
        case 0x4:
            let (n, start) = try count(marker: at, nibble: low)
            try checkPayload(start, count: n, width: 1, object: at)
            return .data([UInt8](UnsafeRawBufferPointer(start: base + start, count: n)))
        case 0x8:
            // A keyed-archiver UID: low nibble + 1 big-endian bytes.
            let size = Int(low) + 1
            guard size <= 8 else {
                throw Self.malformed("UID at offset \(at) is \(size) bytes long (at most 8)")
            }
            guard at + 1 + size <= objectEnd else { throw Self.malformed("UID at offset \(at) runs past the object area") }
            var v: UInt64 = 0
            for k in 0..<size { v = v << 8 | UInt64(byte(at + 1 + k)) }
            return .uid(v)
        case 0xC:
            throw Self.malformed("set object at offset \(at) is not supported")
        default:
            throw Self.malformed("unknown object marker 0x\(Self.hex(marker)) at offset \(at)")
        }
    }

    // MARK: - Strings

    private func string(at: Int, marker: UInt8) throws(PlistError) -> String {
        let (n, start) = try count(marker: at, nibble: marker & 0x0F)
        if marker >> 4 == 0x5 {
            try checkPayload(start, count: n, width: 1, object: at)
            return try ascii(start, n, object: at)
        }
        try checkPayload(start, count: n, width: 2, object: at)
        return try utf16(start, n, object: at)
    }

    private func ascii(_ start: Int, _ n: Int, object at: Int) throws(PlistError) -> String {
        let p = base + start
        // Eight bytes at a time: any high bit means the string is not ASCII.
        var i = 0
        var bits: UInt64 = 0
        while i + 8 <= n {
            bits |= p.loadUnaligned(fromByteOffset: i, as: UInt64.self)
            i += 8
        }
        while i < n {
            bits |= UInt64(p.load(fromByteOffset: i, as: UInt8.self))
            i += 1
        }
        guard bits & 0x8080_8080_8080_8080 == 0 else {
            throw Self.malformed("ASCII string at offset \(at) contains a byte above 0x7F")
        }
        return String(unsafeUninitializedCapacity: n) { buffer in
            buffer.baseAddress!.update(from: p.assumingMemoryBound(to: UInt8.self), count: n)
            return n
        }
    }

    private func utf16(_ start: Int, _ n: Int, object at: Int) throws(PlistError) -> String {
        let p = base + start
        var failure: Int? = nil
        // At most three UTF-8 bytes per UTF-16 unit (a surrogate pair: 4 for 2).
        let s = String(unsafeUninitializedCapacity: n * 3) { buffer in
            let out = buffer.baseAddress!
            var o = 0
            var i = 0
            while i < n {
                let u = UInt16(bigEndian: p.loadUnaligned(fromByteOffset: 2 * i, as: UInt16.self))
                i += 1
                if u < 0x80 {
                    out[o] = UInt8(truncatingIfNeeded: u); o += 1
                } else if u < 0x800 {
                    out[o] = UInt8(truncatingIfNeeded: 0xC0 | u >> 6)
                    out[o + 1] = UInt8(truncatingIfNeeded: 0x80 | u & 0x3F)
                    o += 2
                } else if u & 0xF800 != 0xD800 {
                    out[o] = UInt8(truncatingIfNeeded: 0xE0 | u >> 12)
                    out[o + 1] = UInt8(truncatingIfNeeded: 0x80 | (u >> 6) & 0x3F)
                    out[o + 2] = UInt8(truncatingIfNeeded: 0x80 | u & 0x3F)
                    o += 3
                } else {
                    guard u < 0xDC00, i < n else { failure = i - 1; return 0 }
                    let lowUnit = UInt16(bigEndian: p.loadUnaligned(fromByteOffset: 2 * i, as: UInt16.self))
                    guard lowUnit & 0xFC00 == 0xDC00 else { failure = i - 1; return 0 }
                    i += 1
                    let scalar = 0x10000 + (UInt32(u & 0x3FF) << 10 | UInt32(lowUnit & 0x3FF))
                    out[o] = UInt8(truncatingIfNeeded: 0xF0 | scalar >> 18)
                    out[o + 1] = UInt8(truncatingIfNeeded: 0x80 | (scalar >> 12) & 0x3F)
                    out[o + 2] = UInt8(truncatingIfNeeded: 0x80 | (scalar >> 6) & 0x3F)
                    out[o + 3] = UInt8(truncatingIfNeeded: 0x80 | scalar & 0x3F)
                    o += 4
                }
            }
            return o
        }
        if let unit = failure {
            throw Self.malformed("UTF-16 string at offset \(at) has an unpaired surrogate at unit \(unit)")
        }
        return s
    }

    /// Two uppercase hexadecimal digits.
    private static func hex(_ b: UInt8) -> String {
        let digits = Array("0123456789ABCDEF".utf8)
        return String(decoding: [digits[Int(b >> 4)], digits[Int(b & 0x0F)]], as: UTF8.self)
    }
}
