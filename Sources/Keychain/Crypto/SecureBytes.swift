import CSodium
#if canImport(Glibc)
import Glibc
#endif

/// Key or secret bytes in secure memory from ``SecureArena``: `mlock`ed
/// where the limit allows, left out of core dumps, zeroed when released
/// (small buffers are slots of `sodium_malloc` slabs, large ones a
/// `sodium_malloc` region each, with guard pages and a canary).
///
/// Swift arrays and strings copy themselves and cannot be wiped reliably,
/// so every key and every secret lives in one of these. It prints
/// `<redacted>`, never its contents.
public final class SecureBytes: @unchecked Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    // @unchecked: the buffer is written only while it is being built and
    // read-only afterwards.
    private let pointer: UnsafeMutableRawPointer
    /// The arena's size class of the buffer (`nil`: a region of its own).
    private let sizeClass: Int?
    /// The number of bytes.
    public let count: Int

    /// Uninitialised secure memory of `count` bytes.
    init(uninitializedCount count: Int) {
        Sodium.ensureInitialized()
        (pointer, sizeClass) = SecureArena.shared.allocate(count)
        self.count = count
    }

    /// A copy of `bytes` in secure memory.
    public convenience init(copying bytes: UnsafeRawBufferPointer) {
        self.init(uninitializedCount: bytes.count)
        if bytes.count > 0 { pointer.copyMemory(from: bytes.baseAddress!, byteCount: bytes.count) }
    }

    /// A copy of `bytes` in secure memory; the caller wipes its own copy.
    public convenience init(_ bytes: [UInt8]) {
        self.init(uninitializedCount: bytes.count)
        bytes.withUnsafeBytes { if $0.count > 0 { pointer.copyMemory(from: $0.baseAddress!, byteCount: $0.count) } }
    }

    /// `count` bytes of secure memory filled by `body` (for readers at the C
    /// boundary, which write a secret straight into it).
    public convenience init(count: Int, initializingWith body: (UnsafeMutableRawBufferPointer) -> Void) {
        self.init(uninitializedCount: count)
        memset(pointer, 0, max(count, 1))
        body(UnsafeMutableRawBufferPointer(start: pointer, count: count))
    }

    /// A copy of a string's UTF-8 bytes.
    public convenience init(utf8 text: String) {
        var bytes = Array(text.utf8)
        self.init(bytes)
        Sodium.wipe(&bytes)
    }

    /// `count` random bytes from the system generator.
    public static func random(count: Int) -> SecureBytes {
        let s = SecureBytes(uninitializedCount: count)
        randombytes_buf(s.pointer, count)
        return s
    }

    deinit { SecureArena.shared.free(pointer, sizeClass: sizeClass) }

    /// Calls `body` with the bytes.
    public func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try body(UnsafeRawBufferPointer(start: pointer, count: count))
    }

    func withUnsafeMutableBytes<R, E: Error>(_ body: (UnsafeMutableRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try body(UnsafeMutableRawBufferPointer(start: pointer, count: count))
    }

    /// A copy in an ordinary array, for output at the very edge (printing
    /// a secret the user asked for); the caller wipes it after use.
    public func exposedCopy() -> [UInt8] {
        Array(UnsafeRawBufferPointer(start: pointer, count: count))
    }

    /// Constant-time equality.
    public func constantTimeEquals(_ other: SecureBytes) -> Bool {
        count == other.count && sodium_memcmp(pointer, other.pointer, count) == 0
    }

    public var description: String { "<redacted>" }
    public var debugDescription: String { "<redacted>" }
}

extension SecureBytes {
    /// Sets one byte (for readers filling a buffer).
    public func storeByte(_ byte: UInt8, at index: Int) {
        precondition(index >= 0 && index < count)
        withUnsafeMutableBytes { $0[index] = byte }
    }

    /// A copy of the first `n` bytes, in secure memory.
    public func prefix(_ n: Int) -> SecureBytes {
        withUnsafeBytes { SecureBytes(copying: UnsafeRawBufferPointer(rebasing: $0[0..<min(n, count)])) }
    }

    /// Zeroes an ordinary array that held secret bytes (at the edges, where
    /// a secret must pass through one).
    public static func wipe(_ bytes: inout [UInt8]) {
        Sodium.wipe(&bytes)
    }

}
