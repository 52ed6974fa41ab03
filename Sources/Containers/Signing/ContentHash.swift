import AppHomeSystem
import CSodium

/// A BLAKE2b-256 digest of a file's contents (libsodium's
/// `crypto_generichash`, 32 bytes, no key): the name of an object in a
/// backup store and the checksum of a manifest.
public struct ContentHash: Hashable, Sendable, CustomStringConvertible {
    /// The digest's length in bytes.
    public static let byteCount = 32
    /// The name written in manifests for the algorithm.
    public static let algorithm = "BLAKE2b-256"

    /// The 32 digest bytes.
    public let bytes: [UInt8]

    /// Wraps digest bytes; `nil` unless there are exactly 32.
    public init?(bytes: [UInt8]) {
        guard bytes.count == Self.byteCount else { return nil }
        self.bytes = bytes
    }

    /// The digest of `data` (in one call: no hashing state to allocate).
    public init(of data: [UInt8]) {
        self = data.withUnsafeBytes { ContentHash(of: $0) }
    }

    /// The digest of the bytes at `data`.
    public init(of data: UnsafeRawBufferPointer) {
        precondition(ContentHasher.initialised, "libsodium could not be initialised")
        bytes = [UInt8](unsafeUninitializedCapacity: Self.byteCount) { out, count in
            _ = crypto_generichash(out.baseAddress!, Self.byteCount, data.baseAddress?.assumingMemoryBound(to: UInt8.self),
                                   UInt64(data.count), nil, 0)
            count = Self.byteCount
        }
    }

    /// Hashes the digest's bytes in one call (not byte by byte, as an
    /// array's elements would be): a backup keeps them in dictionaries.
    public func hash(into hasher: inout Hasher) {
        bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
    }

    public static func == (a: ContentHash, b: ContentHash) -> Bool { a.bytes == b.bytes }

    /// Lowercase hexadecimal, 64 characters.
    public var hex: String { Hex.encode(bytes) }

    public var description: String { hex }
}

/// Feeds bytes to BLAKE2b-256 incrementally, so large files are hashed in
/// small buffers.
///
/// A class because libsodium's state must stay at one 64-byte-aligned
/// address between calls.
public final class ContentHasher {
    private let state: UnsafeMutableRawPointer
    private var finished = false

    /// `sodium_init` once per process; it is safe to call again, but costs a lock.
    static let initialised: Bool = sodium_init() >= 0

    public init() {
        precondition(Self.initialised, "libsodium could not be initialised")
        state = UnsafeMutableRawPointer.allocate(byteCount: crypto_generichash_statebytes(), alignment: 64)
        _ = crypto_generichash_init(OpaquePointer(state), nil, 0, ContentHash.byteCount)
    }

    deinit { state.deallocate() }

    public func update(_ buffer: UnsafeRawBufferPointer) {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return }
        _ = crypto_generichash_update(OpaquePointer(state),
                                      base.assumingMemoryBound(to: UInt8.self), UInt64(buffer.count))
    }

    public func update(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { update($0) }
    }

    /// The digest of everything fed so far. Call once.
    public func finish() -> ContentHash {
        precondition(!finished, "ContentHasher.finish called twice")
        finished = true
        var out = [UInt8](repeating: 0, count: ContentHash.byteCount)
        _ = crypto_generichash_final(OpaquePointer(state), &out, out.count)
        return ContentHash(bytes: out)!
    }
}
