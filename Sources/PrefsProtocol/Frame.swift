/// The framing of every prefsd message: an 8-byte header, then a binary
/// property list.
///
/// Header: the magic bytes `p` `f`, the protocol version (one byte), a
/// reserved byte that must be 0, and the payload length as a 32-bit
/// big-endian integer. See `Schemas/prefsd-protocol.md`.
public enum Frame {
    /// The protocol version this code speaks (and the only one it reads).
    public static let version: UInt8 = 1
    /// The two bytes every frame starts with.
    public static let magic: [UInt8] = [0x70, 0x66]
    /// Bytes in a header.
    public static let headerSize = 8
    /// The largest payload accepted by default: 64 MiB, room for a domain
    /// of tens of megabytes (a stress test imports a 10 MB one).
    public static let defaultMaximumPayload = 64 << 20

    /// The bytes of a frame carrying `payload`.
    public static func encode(_ payload: [UInt8], version: UInt8 = Frame.version) -> [UInt8] {
        var out: [UInt8] = magic + [version, 0]
        let n = UInt32(truncatingIfNeeded: payload.count)
        out += [UInt8(n >> 24), UInt8((n >> 16) & 0xFF), UInt8((n >> 8) & 0xFF), UInt8(n & 0xFF)]
        out += payload
        return out
    }
}

/// Why bytes on a connection are not a frame this side can read.
public enum FrameError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The header does not start with the magic bytes: the stream is not
    /// prefsd's protocol, or it lost its framing.
    case badMagic
    /// The header names a protocol version this side does not speak.
    case unsupportedVersion(UInt8)
    /// The reserved header byte is not 0.
    case reservedBits(UInt8)
    /// The header announces a payload over the limit.
    case tooLarge(announced: UInt64, limit: Int)

    public var description: String {
        switch self {
        case .badMagic: return "the frame does not start with the prefsd magic bytes"
        case .unsupportedVersion(let v): return "protocol version \(v) is not supported (this side speaks version \(Frame.version))"
        case .reservedBits(let b): return "the reserved header byte is \(b), not 0"
        case .tooLarge(let n, let limit): return "a frame of \(n) bytes is over the limit of \(limit) bytes"
        }
    }
}

/// Collects bytes read from a stream and cuts them into frame payloads.
///
/// Bytes are appended as they arrive; ``next()`` returns each complete
/// payload in order. A header error is reported as soon as the header is
/// complete, before its payload arrives, so an announced 4 GB frame is
/// refused without waiting for (or buffering) any of it.
public struct FrameReader: Sendable {
    private var buffer: [UInt8] = []
    private var start = 0
    /// The largest payload accepted.
    public let maximumPayload: Int

    public init(maximumPayload: Int = Frame.defaultMaximumPayload) {
        self.maximumPayload = maximumPayload
    }

    /// Bytes received but not yet returned as a payload.
    public var pendingByteCount: Int { buffer.count - start }

    /// Whether a whole frame (or a header error) is waiting in the buffer.
    public var hasCompleteFrame: Bool {
        let available = buffer.count - start
        if available >= 1 && buffer[start] != Frame.magic[0] { return true }
        if available >= 2 && buffer[start + 1] != Frame.magic[1] { return true }
        guard available >= Frame.headerSize else { return false }
        var length: UInt64 = 0
        for i in 4..<8 { length = length << 8 | UInt64(buffer[start + i]) }
        return length > UInt64(maximumPayload) || buffer[start + 2] != Frame.version || UInt64(available - Frame.headerSize) >= length
    }

    /// Adds bytes read from the stream.
    public mutating func append<C: Collection>(_ bytes: C) where C.Element == UInt8 {
        if start > 0 && start >= buffer.count / 2 {
            buffer.removeFirst(start)
            start = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// The next complete payload, or `nil` when more bytes are needed.
    ///
    /// - Throws: ``FrameError`` for a header this side cannot accept; the
    ///   stream cannot be resynchronised after one.
    public mutating func next() throws(FrameError) -> [UInt8]? {
        let available = buffer.count - start
        if available >= 2 && (buffer[start] != Frame.magic[0] || buffer[start + 1] != Frame.magic[1]) { throw .badMagic }
        if available == 1 && buffer[start] != Frame.magic[0] { throw .badMagic }
        guard available >= Frame.headerSize else { return nil }
        let version = buffer[start + 2]
        if version != Frame.version { throw .unsupportedVersion(version) }
        if buffer[start + 3] != 0 { throw .reservedBits(buffer[start + 3]) }
        var length: UInt64 = 0
        for i in 4..<8 { length = length << 8 | UInt64(buffer[start + i]) }
        if length > UInt64(maximumPayload) { throw .tooLarge(announced: length, limit: maximumPayload) }
        let total = Frame.headerSize + Int(length)
        guard available >= total else { return nil }
        let payload = Array(buffer[(start + Frame.headerSize)..<(start + total)])
        start += total
        if start == buffer.count { buffer.removeAll(keepingCapacity: buffer.count <= 1 << 20); start = 0 }
        return payload
    }
}
