#if canImport(Glibc)
import Glibc
#endif

/// Where a command writes its output and reads its input. Commands never
/// touch the process's streams directly, so they run in process in tests.
public protocol Console: AnyObject {
    /// Writes to standard output.
    func out(_ text: String)
    /// Writes `bytes` to standard output as they are (for secrets that need not be text).
    func out(bytes: [UInt8])
    /// Writes to standard error.
    func err(_ text: String)
    /// Reads all of standard input.
    func readStandardInput() -> [UInt8]
    /// Sends buffered output on its way now (for output that streams, such as `defaults watch`).
    func flushOutput()
    /// Whether standard output is a terminal (text from a file is then shown with its
    /// control characters escaped, ``FileNames/escaped(_:notation:)``).
    var outputIsTerminal: Bool { get }
}

extension Console {
    public func flushOutput() {}
    public var outputIsTerminal: Bool { false }
}

/// The process's own streams. Standard output is buffered and written in
/// large blocks; call ``flush()`` before exiting.
public final class ProcessConsole: Console {
    private var buffer: [UInt8] = []

    public init() {}

    public func out(_ text: String) {
        buffer.append(contentsOf: text.utf8)
        if buffer.count >= 1 << 16 { flush() }
    }

    public func out(bytes: [UInt8]) {
        buffer.append(contentsOf: bytes)
        if buffer.count >= 1 << 16 { flush() }
    }

    public func err(_ text: String) {
        flush()
        Self.writeAll(2, Array(text.utf8))
    }

    public func readStandardInput() -> [UInt8] {
        var result: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(0, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            result.append(contentsOf: chunk[0..<n])
        }
        return result
    }

    public func flushOutput() { flush() }

    public var outputIsTerminal: Bool { isatty(1) == 1 }

    /// Writes out what is buffered for standard output.
    public func flush() {
        guard !buffer.isEmpty else { return }
        Self.writeAll(1, buffer)
        buffer.removeAll(keepingCapacity: true)
    }

    private static func writeAll(_ fd: Int32, _ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return }
            offset += n
        }
    }
}

/// A console that records what a command wrote, for tests.
public final class CapturingConsole: Console {
    /// Standard output as text (bytes that are not UTF-8 read as U+FFFD).
    public private(set) var standardOutput = ""
    public private(set) var standardError = ""
    private let input: [UInt8]
    /// What was written to standard output, byte for byte.
    public private(set) var standardOutputBytes: [UInt8] = []

    /// What ``outputIsTerminal`` answers (a test of what a terminal is shown).
    public var outputIsTerminal = false

    public init(input: [UInt8] = []) { self.input = input }

    public func out(_ text: String) {
        standardOutput += text
        standardOutputBytes += text.utf8
    }

    public func out(bytes: [UInt8]) {
        standardOutput += String(decoding: bytes, as: UTF8.self)
        standardOutputBytes += bytes
    }
    public func err(_ text: String) { standardError += text }
    public func readStandardInput() -> [UInt8] { input }
}
