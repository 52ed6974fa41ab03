#if canImport(Glibc)
import Glibc
#endif
import AppHomeSystem
import Containers
import Synchronization

/// The object directories of a store held open while a backup writes to
/// it: `objects/` and `objects/.incoming` as descriptors, so that the calls
/// made once per object (`fstatat`, `openat`, `renameat`) name it relative
/// to them instead of walking the store's path each time; and which
/// `objects/<2 hex>/` directories exist, so that a new store (or a new
/// prefix) costs no look-up at all.
///
/// Opened on first use, closed when the store goes away. Only the holder
/// of the store's lock writes there, so what it read of `objects/` stays
/// true but for its own `mkdir`s, which it records (the writer's threads
/// make them too: the record is under a lock).
final class ObjectDirectories: @unchecked Sendable {
    let objectsPath: String
    let incomingPath: String
    private var objectsFD: Int32 = -1
    private var incomingFD: Int32 = -1
    /// Which `objects/<2 hex>` directories exist, by their byte; `nil` until read.
    private let prefixes = Mutex<[Bool]?>(nil)
    /// The thread writing new objects into `.incoming`, while one runs.
    private var writer: ObjectWriter?
    /// The batch of objects the writer puts in place together
    /// (``BackupOptions/objectsPerCommit``).
    var objectsPerCommit = ObjectWriter.commitBatch

    init(objects: String, incoming: String) {
        objectsPath = objects
        incomingPath = incoming
    }

    deinit {
        writer?.stop()
        if objectsFD >= 0 { close(objectsFD) }
        if incomingFD >= 0 { close(incomingFD) }
    }

    /// Forgets what it read (the store's `open()` runs before a backup).
    func reset() {
        writer?.stop()
        writer = nil
        if objectsFD >= 0 { close(objectsFD) }
        if incomingFD >= 0 { close(incomingFD) }
        objectsFD = -1
        incomingFD = -1
        prefixes.withLock { $0 = nil }
    }

    /// `objects/`, open.
    func objects() throws -> Int32 {
        if objectsFD < 0 { objectsFD = try Self.openDirectory(objectsPath) }
        return objectsFD
    }

    /// `objects/.incoming`, open.
    func incoming() throws -> Int32 {
        if incomingFD < 0 { incomingFD = try Self.openDirectory(incomingPath) }
        return incomingFD
    }

    /// The thread writing new objects into `.incoming` (started on first use).
    ///
    /// - Parameter durable: whether the objects are made durable before
    ///   they are put in place (`syncfs`).
    func objectWriter(durable: Bool) throws -> ObjectWriter {
        if let writer { return writer }
        _ = try hasPrefix(0)   // read before the threads may make some
        let made = ObjectWriter(directories: self, incoming: try incoming(), objects: try objects(), durable: durable,
                                commitBatch: objectsPerCommit)
        writer = made
        return made
    }

    /// Waits until every object handed to the writer is written, and ends its threads.
    ///
    /// - Returns: the objects the writer already made durable and put in place.
    /// - Throws: the first write's error.
    func finishWriting() throws -> Set<ContentHash> {
        guard let writer else { return [] }
        self.writer = nil
        return try writer.finish()
    }

    /// Ends the writer's thread without waiting for what it has not
    /// started writing (a backup that failed).
    func stopWriting() {
        writer?.stop()
        writer = nil
    }

    /// Waits until what was handed to the writer is written or failed.
    func flushWriting() {
        writer?.flush()
    }

    private static func openDirectory(_ path: String) throws -> Int32 {
        let fd = Glibc.open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw SystemError("open", path: path, errno: errno) }
        return fd
    }

    /// Whether `objects/<2 hex>` exists for the first byte `byte`.
    private func hasPrefix(_ byte: UInt8) throws -> Bool {
        if let known = prefixes.withLock({ $0?[Int(byte)] }) { return known }
        var found = [Bool](repeating: false, count: 256)
        let dir = try objects()
        for raw in try FileNames.rawEntries(objectsPath) where raw.count == 2 {
            guard let hi = Self.lowerHexDigit(raw[0]), let lo = Self.lowerHexDigit(raw[1]) else { continue }
            var st = stat()
            let name = [CChar(bitPattern: raw[0]), CChar(bitPattern: raw[1]), 0]
            if fstatat(dir, name, &st, 0) == 0 && st.st_mode & S_IFMT == S_IFDIR { found[Int(hi << 4 | lo)] = true }
        }
        prefixes.withLock { $0 = found }
        return found[Int(byte)]
    }

    private static func lowerHexDigit(_ c: UInt8) -> UInt8? {
        switch c {
        case 0x30...0x39: return c - 0x30
        case 0x61...0x66: return c - 0x61 + 10
        default: return nil
        }
    }

    /// `lstat` of the object `hash` in `objects/`, or `nil` when there is none.
    func objectStatus(_ hash: ContentHash) throws -> stat? {
        guard try hasPrefix(hash.bytes[0]) else { return nil }
        let dir = try objects()
        var st = stat()
        let found = hash.withFileNames { _, object in fstatat(dir, object, &st, AT_SYMLINK_NOFOLLOW) == 0 }
        return found ? st : nil
    }

    /// Renames the temp files `.incoming/<64 hex>` of `hashes` to their
    /// places `objects/<2 hex>/<62 hex>`, making the prefix directories
    /// they need, a prefix after the other.
    ///
    /// - Throws: the first failure (what is renamed stays renamed).
    func putInPlace(_ hashes: [ContentHash]) throws {
        var byPrefix = [[ContentHash]](repeating: [], count: 256)
        for hash in hashes { byPrefix[Int(hash.bytes[0])].append(hash) }
        let incoming = try incoming()
        let target = try objects()
        for prefix in 0..<256 where !byPrefix[prefix].isEmpty {
            try makePrefix(UInt8(prefix))
            for hash in byPrefix[prefix] {
                try hash.withFileNames { (name, object) throws(SystemError) in
                    guard renameat(incoming, name, target, object) == 0 else {
                        throw SystemError("rename", path: incomingPath + "/" + hash.hex, errno: errno)
                    }
                }
            }
        }
    }

    /// Creates `objects/<2 hex>` for `byte` unless it exists.
    ///
    /// - Throws: `mkdir`'s error, `EEXIST` when the name is taken by
    ///   something that is no directory.
    func makePrefix(_ byte: UInt8) throws {
        guard try !hasPrefix(byte) else { return }
        let dir = try objects()
        let name = Hex.encode([byte])
        if mkdirat(dir, name, 0o700) != 0 {
            let e = errno
            var st = stat()
            guard e == EEXIST, fstatat(dir, name, &st, 0) == 0, st.st_mode & S_IFMT == S_IFDIR else {
                throw SystemError("mkdir", path: objectsPath + "/" + name, errno: e)
            }
        }
        prefixes.withLock { $0?[Int(byte)] = true }
    }
}

extension ContentHash {
    /// Calls `body` with the object's two file names as C strings, made
    /// without a `String`: `<64 hex>`, its temp file in `.incoming`, and
    /// `<2 hex>/<62 hex>`, its place under `objects/`.
    func withFileNames<R, E: Error>(_ body: (_ incoming: UnsafePointer<CChar>, _ object: UnsafePointer<CChar>) throws(E) -> R) throws(E) -> R {
        // 65 bytes for the first name (with its NUL), 66 for the second.
        var names: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64,
                    UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        return try withUnsafeMutableBytes(of: &names) { (raw) throws(E) -> R in
            let out = raw.bindMemory(to: CChar.self)
            bytes.withUnsafeBufferPointer { digest in
                for i in 0..<ContentHash.byteCount {
                    let hi = digest[i] >> 4, lo = digest[i] & 15
                    let h = CChar(bitPattern: hi < 10 ? 0x30 + hi : 0x57 + hi), l = CChar(bitPattern: lo < 10 ? 0x30 + lo : 0x57 + lo)
                    out[2 * i] = h
                    out[2 * i + 1] = l
                    // The second name: the same digits with a "/" after the first two.
                    let j = 2 * i + (i == 0 ? 0 : 1)
                    out[65 + j] = h
                    out[65 + j + 1] = l
                }
            }
            out[64] = 0
            out[65 + 2] = 0x2F
            out[65 + 65] = 0
            let base = UnsafePointer(out.baseAddress!)
            return try body(base, base + 65)
        }
    }
}
