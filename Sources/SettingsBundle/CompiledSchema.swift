#if canImport(Glibc)
import Glibc
#endif
import AppHomeSystem
import Preferences
import PropertyList

/// Settings bundles compiled for write validation, as `glib-compile-schemas`
/// compiles `.gschema.xml`: one file per bundle and idiom in a cache
/// directory, so a validated `defaults write` reads one small file instead of
/// decoding every page.
///
/// File format (text, version 1): a header of lines, `end`, a `buckets` line,
/// then one line per declared key: the key as a JSON string literal, a tab,
/// and the declaring row as a binary property list in hexadecimal
/// (`{file = …; index = …; hidden = …; kind = …; row = {…}; }`). Keys are
/// grouped in 64 buckets by FNV-1a of the key; `buckets` gives the 65 offsets
/// (from the first key line) where each bucket starts and the last ends, so a
/// write reads the header and one bucket, not the whole file.
///
/// ```
/// apphome-settings-compiled 1
/// schema <FNV-1a of the kinds schema, hex>
/// bundle <path>
/// idiom phone
/// source <size> <mtime seconds> <mtime nanoseconds> <inode> <path>
/// end
/// buckets 0 0 118 118 … 5120
/// ```
///
/// A file is used only when its version, schema, bundle and idiom match and
/// every `source` (the bundle directory, each page read and the directory it
/// is in) still has the recorded size, modification time and inode; anything
/// else, including a damaged file, means "compile again". The cache is only
/// an accelerator: when it cannot be written, validation walks the bundle.
public struct CompiledSchemaCache: Sendable {
    /// The cache directory, e.g. `<root>/Library/Caches/SettingsSchemas`.
    public let directory: String

    public init(directory: String) {
        self.directory = directory
    }

    static let magic = "apphome-settings-compiled 1"
    static let bucketCount = 64

    static func bucket(_ key: String) -> Int { Int(fnv1a(Array(key.utf8)) % UInt64(bucketCount)) }

    /// The keys of a row that ``WriteValidator`` reads.
    static let validationKeys: Set<String> = ["Type", "Key", "TrueValue", "FalseValue", "MinimumValue", "MaximumValue", "Values", "Titles"]

    /// A validator for writes of `keys` to a domain whose schema is `bundle`.
    ///
    /// Only `keys` are looked up; the validator knows nothing of other keys.
    public func validator(for bundle: SettingsBundle, idiom: Idiom, keys: [String]) -> WriteValidator {
        let file = path(for: bundle, idiom: idiom)
        if let reader = RangeReader(path: file), let found = lookUp(reader, bundle: bundle, idiom: idiom, keys: keys) {
            return found
        }
        let validator = WriteValidator(bundle: bundle, idiom: idiom)
        try? write(validator, bundle: bundle, idiom: idiom, to: file)
        return validator
    }

    func path(for bundle: SettingsBundle, idiom: Idiom) -> String {
        // FNV-1a of "<bundle path>\0<idiom>", hashed as it is read (no string put together first).
        var h = Self.fnv1aBasis
        for b in bundle.path.utf8 { h = Self.fnv1aStep(h, b) }
        h = Self.fnv1aStep(h, 0)
        for b in idiom.rawValue.utf8 { h = Self.fnv1aStep(h, b) }
        return directory + "/" + Self.hex(h) + ".compiled"
    }

    static let fnv1aBasis: UInt64 = 0xcbf2_9ce4_8422_2325

    @inline(__always)
    static func fnv1aStep(_ h: UInt64, _ b: UInt8) -> UInt64 { (h ^ UInt64(b)) &* 0x100_0000_01b3 }

    static func fnv1a(_ bytes: [UInt8]) -> UInt64 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in bytes { h = (h ^ UInt64(b)) &* 0x100_0000_01b3 }
        return h
    }

    static func hex(_ v: UInt64) -> String { Hex.digits(v, width: 16) }

    static let schemaStamp = hex(fnv1a(PackageResources.settings_bundle_kinds_bplist))

    /// `size mtime-s mtime-ns inode` of a path, or `nil` when it cannot be read.
    static func stamp(_ path: String) -> String? {
        stampBytes(path).map { String(decoding: $0, as: UTF8.self) }
    }

    /// ``stamp(_:)`` as bytes, formatted by hand: every validated write
    /// checks each source, and string interpolation costs ten times more.
    static func stampBytes(_ path: String) -> [UInt8]? {
        var st = stat()
        guard stat(path, &st) == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(64)
        appendDecimal(Int64(st.st_size), to: &out)
        out.append(0x20)
        appendDecimal(Int64(st.st_mtim.tv_sec), to: &out)
        out.append(0x20)
        appendDecimal(Int64(st.st_mtim.tv_nsec), to: &out)
        out.append(0x20)
        appendDecimal(UInt64(st.st_ino), negative: false, to: &out)
        return out
    }

    static func appendDecimal(_ value: Int64, to out: inout [UInt8]) {
        appendDecimal(value.magnitude, negative: value < 0, to: &out)
    }

    static func appendDecimal(_ magnitude: UInt64, negative: Bool, to out: inout [UInt8]) {
        if negative { out.append(UInt8(ascii: "-")) }
        var divisor: UInt64 = 1
        while magnitude / divisor >= 10 { divisor *= 10 }
        var m = magnitude
        while divisor > 0 {
            out.append(UInt8(truncatingIfNeeded: 48 + m / divisor))
            m %= divisor
            divisor /= 10
        }
    }

    func header(_ bundle: SettingsBundle, _ idiom: Idiom) -> String {
        String(decoding: headerBytes(bundle, idiom), as: UTF8.self)
    }

    /// ``header(_:_:)`` as bytes, put together without string interpolation (read on every validated write).
    func headerBytes(_ bundle: SettingsBundle, _ idiom: Idiom) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(Self.magic.utf8.count + bundle.path.utf8.count + 64)
        out.append(contentsOf: Self.magic.utf8)
        out.append(contentsOf: "\nschema ".utf8)
        out.append(contentsOf: Self.schemaStamp.utf8)
        out.append(contentsOf: "\nbundle ".utf8)
        out.append(contentsOf: bundle.path.utf8)
        out.append(contentsOf: "\nidiom ".utf8)
        out.append(contentsOf: idiom.rawValue.utf8)
        out.append(0x0A)
        return out
    }

    /// Reads a compiled file; `nil` when it is stale or damaged.
    func lookUp(_ reader: RangeReader, bundle: SettingsBundle, idiom: Idiom, keys: [String]) -> WriteValidator? {
        // The header is small; a file whose header does not fit in the first read is compiled again.
        guard let head = reader.read(at: 0, count: 16_384) else { return nil }
        let expected = headerBytes(bundle, idiom)
        guard head.starts(with: expected) else { return nil }
        // Byte-level parsing: this runs on every validated write, and each
        // generic type used for the first time costs the runtime a look-up.
        var i = expected.count
        while true {
            guard let end = Self.lineEnd(head, from: i) else { return nil }
            let line = head[i..<end]
            i = end + 1
            if line.elementsEqual("end".utf8) { break }
            let prefix = Array("source ".utf8)
            guard line.starts(with: prefix) else { return nil }
            // "source SIZE MTIME-S MTIME-NS INODE PATH": the path follows the fifth space.
            var spaces = 0, pathStart = line.startIndex
            for j in line.indices where line[j] == 0x20 {
                spaces += 1
                if spaces == 5 { pathStart = j + 1; break }
            }
            guard spaces == 5, let stamp = Self.stampBytes(String(decoding: head[pathStart..<end], as: UTF8.self)),
                  head[(line.startIndex + prefix.count)..<(pathStart - 1)].elementsEqual(stamp) else { return nil }
        }
        guard let end = Self.lineEnd(head, from: i), head[i..<end].starts(with: "buckets ".utf8) else { return nil }
        var offsets: [Int] = []
        offsets.reserveCapacity(Self.bucketCount + 1)
        var number = -1
        for c in head[(i + 8)..<end] {
            if c == 0x20 {
                guard number >= 0 else { return nil }
                offsets.append(number)
                number = -1
            } else if c >= 0x30 && c <= 0x39 {
                number = max(number, 0) * 10 + Int(c - 0x30)
            } else {
                return nil
            }
        }
        guard number >= 0 else { return nil }
        offsets.append(number)
        guard offsets.count == Self.bucketCount + 1 else { return nil }
        for b in 0..<Self.bucketCount where offsets[b] > offsets[b + 1] { return nil }
        i = end + 1
        let bodyStart = i
        guard reader.size == bodyStart + offsets[Self.bucketCount] else { return nil }  // cut short or grown
        // Sized once: a first insert that grows the storage costs more than the look-up.
        var declarations = [String: Specifier](minimumCapacity: keys.count)
        var hidden: Set<String> = []
        var kinds = [String: String](minimumCapacity: keys.count)
        for key in keys {
            let b = Self.bucket(key)
            guard offsets[b] < offsets[b + 1] else { continue }
            let lines: [UInt8]
            if head.count == reader.size {
                // A small file was read whole with the header: no second read.
                lines = [0x0A] + head[(bodyStart + offsets[b])..<(bodyStart + offsets[b + 1])]
            } else {
                guard let slice = reader.read(at: bodyStart + offsets[b], count: offsets[b + 1] - offsets[b]),
                      slice.count == offsets[b + 1] - offsets[b] else { return nil }
                lines = [0x0A] + slice
            }
            let needle = [0x0A] + Array(PlistCodec.jsonStringLiteral(key).utf8) + [0x09]
            guard let start = Self.find(needle, in: lines, from: 0) else { continue }
            let valueStart = start + needle.count
            guard let end = Self.lineEnd(lines, from: valueStart), let record = Self.unhex(lines[valueStart..<end]),
                  case .dictionary(let d)? = try? PlistCodec.decode(record, format: .binary),
                  case .string(let file)? = d["file"], case .integer(let index)? = d["index"], case .bool(let isHidden)? = d["hidden"],
                  case .string(let kind)? = d["kind"], case .dictionary(let row)? = d["row"], case .string(let type)? = row["Type"]
            else { return nil }
            if isHidden { hidden.insert(key); continue }
            declarations[key] = Specifier(file: file, index: Int(index), type: type, key: key, entries: row)
            kinds[type] = kind
        }
        return WriteValidator(declarations: declarations, hidden: hidden, idiom: idiom, kinds: kinds)
    }

    /// The first index of `needle` in `haystack` at or after `start`. The
    /// needle starts with a newline, so candidates are found with `memchr`
    /// (the compiled file of a large bundle is scanned once per key).
    static func find(_ needle: [UInt8], in haystack: [UInt8], from start: Int) -> Int? {
        var i = max(start, 0)
        guard let first = needle.first else { return nil }
        return haystack.withUnsafeBytes { h -> Int? in
            while i + needle.count <= h.count {
                guard let hit = memchr(h.baseAddress! + i, Int32(first), h.count - i) else { return nil }
                let at = UnsafeRawPointer(hit) - UnsafeRawPointer(h.baseAddress!)
                guard at + needle.count <= h.count else { return nil }
                if memcmp(h.baseAddress! + at, needle, needle.count) == 0 { return at }
                i = at + 1
            }
            return nil
        }
    }

    /// The index of the next newline at or after `start`.
    static func lineEnd(_ bytes: [UInt8], from start: Int) -> Int? {
        guard start < bytes.count else { return nil }
        return bytes.withUnsafeBytes { b in
            guard let hit = memchr(b.baseAddress! + start, 0x0A, b.count - start) else { return nil }
            return UnsafeRawPointer(hit) - UnsafeRawPointer(b.baseAddress!)
        }
    }

    static func hex(_ bytes: [UInt8]) -> String { Hex.encode(bytes) }

    static func unhex(_ text: ArraySlice<UInt8>) -> [UInt8]? {
        guard text.count % 2 == 0 else { return nil }
        // Lower-case digits only (as written); 0xFF for anything else.
        @inline(__always) func nibble(_ c: UInt8) -> UInt8 {
            let d = c &- UInt8(ascii: "0")
            if d < 10 { return d }
            let a = c &- UInt8(ascii: "a")
            return a < 6 ? a + 10 : 0xFF
        }
        var bad = false
        let out = [UInt8](unsafeUninitializedCapacity: text.count / 2) { buffer, initialized in
            text.withUnsafeBufferPointer { t in
                var j = 0
                while j < t.count / 2 {
                    let hi = nibble(t[2 * j]), lo = nibble(t[2 * j + 1])
                    if hi > 15 || lo > 15 { bad = true; break }
                    buffer[j] = hi << 4 | lo
                    j += 1
                }
                initialized = j
            }
        }
        return bad ? nil : out
    }

    func write(_ validator: WriteValidator, bundle: SettingsBundle, idiom: Idiom, to file: String) throws {
        var text = header(bundle, idiom)
        var sources = [bundle.path]
        for page in validator.pageFiles {
            let full = bundle.path + "/" + page
            sources.append(full)
            let dir = FileSystem.parentDirectory(full)
            if !sources.contains(dir) { sources.append(dir) }
        }
        for s in sources {
            guard let stamp = Self.stamp(s) else { return }
            text += "source \(stamp) \(s)\n"
        }
        text += "end\n"
        var rows: [(String, Specifier, Bool)] = validator.declarations.map { ($0.key, $0.value, false) }
        rows += validator.hiddenRows.map { ($0.key, $0.value, true) }
        var buckets = [[UInt8]](repeating: [], count: Self.bucketCount)
        for (key, s, isHidden) in rows.sorted(by: { $0.0 < $1.0 }) {
            // Only what write checks and `range` read: the file stays small for large bundles.
            let row = s.entries.filter { Self.validationKeys.contains($0.key.string) }
            let record: PlistValue = .dictionary(["file": .string(s.file), "index": .integer(Int128(s.index)), "hidden": .bool(isHidden),
                                                  "kind": .string(validator.kinds[s.type] ?? ""), "row": .dictionary(row)])
            buckets[Self.bucket(key)] += Array((PlistCodec.jsonStringLiteral(key) + "\t" + Self.hex(try PlistCodec.encode(record, format: .binary)) + "\n").utf8)
        }
        var offsets = [0]
        for b in buckets { offsets.append(offsets.last! + b.count) }
        text += "buckets " + offsets.map(String.init).joined(separator: " ") + "\n"
        guard text.utf8.count <= 16_384 else { return }  // a header too long to read back: do not cache
        let bytes = Array(text.utf8) + buckets.flatMap { $0 }
        try FileSystem.makeDirectories(directory)
        try FileSystem.writeAtomically(bytes, to: file)
    }
}

/// Reads byte ranges of one file with `pread`; the file is opened once.
final class RangeReader {
    private let fd: Int32
    /// The file's size when it was opened.
    let size: Int

    init?(path: String) {
        // Non-blocking and regular files only: a FIFO in a bundle cannot hang the reader.
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        if fd < 0 { return nil }
        var st = stat()
        guard fstat(fd, &st) == 0, st.st_mode & S_IFMT == S_IFREG else { close(fd); return nil }
        size = Int(st.st_size)
    }

    deinit { close(fd) }

    /// Up to `count` bytes at `offset` (fewer at the end of the file), or `nil` on an error.
    func read(at offset: Int, count wanted: Int) -> [UInt8]? {
        // No read past the size the file had when opened (it would only say "end of file").
        let count = max(0, min(wanted, size - offset))
        var failed = false
        // Not zeroed first: the bytes read are all that is kept.
        let out = [UInt8](unsafeUninitializedCapacity: max(count, 1)) { buffer, initialized in
            var done = 0
            while done < count {
                let n = pread(fd, buffer.baseAddress! + done, count - done, off_t(offset + done))
                if n < 0 && errno == EINTR { continue }
                if n < 0 { failed = true; break }
                if n == 0 { break }
                done += n
            }
            initialized = done
        }
        return failed ? nil : out
    }
}
