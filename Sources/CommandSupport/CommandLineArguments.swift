#if canImport(Glibc)
import Glibc
#endif
import AppHomeSystem

/// The command line as the kernel hands it over: bytes, read as UTF-8
/// strictly.
///
/// Swift's `CommandLine.arguments` repairs invalid UTF-8 (each bad byte
/// becomes U+FFFD), so two different byte names would reach a command as one
/// and be stored under a name nobody typed. Every main takes its arguments
/// through ``run(_:command:console:secretAfter:_:)`` instead: an argument
/// that is not valid UTF-8 (a stray byte, a truncated or overlong sequence,
/// an encoded UTF-16 surrogate, a value past U+10FFFF) stops the command
/// before it does anything.
public enum CommandLineArguments {
    /// The arguments after the program name, byte for byte, from
    /// `CommandLine.unsafeArgv`.
    public static func processBytes() -> [[UInt8]] {
        let argv = CommandLine.unsafeArgv
        return (1..<Int(CommandLine.argc)).map { i in
            guard let p = argv[i] else { return [] }
            return Array(UnsafeBufferPointer(start: UnsafeRawPointer(p).assumingMemoryBound(to: UInt8.self), count: strlen(p)))
        }
    }

    /// Decodes `arguments` as UTF-8 without repairing anything.
    ///
    /// - Parameters:
    ///   - arguments: the arguments after the program name.
    ///   - secretAfter: options whose next argument is a secret (`security`'s
    ///     `-w`): an invalid secret is named by its position only, never shown.
    /// - Returns: the arguments as strings, in order.
    /// - Throws: ``CommandFailure/failure(_:)`` naming the first argument
    ///   that is not valid UTF-8 by its position (1 is the first after the
    ///   program name) and showing it with each byte that is not part of a
    ///   valid printable character as `\xNN`.
    public static func decode(_ arguments: [[UInt8]], secretAfter: Set<String> = []) throws(CommandFailure) -> [String] {
        var decoded: [String] = []
        decoded.reserveCapacity(arguments.count)
        for (index, bytes) in arguments.enumerated() {
            guard let text = String(validating: bytes, as: UTF8.self) else {
                let position = index + 1
                if let previous = decoded.last, secretAfter.contains(previous) {
                    throw .failure("argument \(position) (the value of \(previous), not shown) is not valid UTF-8")
                }
                throw .failure("argument \(position) is not valid UTF-8: \(render(bytes))")
            }
            decoded.append(text)
        }
        return decoded
    }

    /// Runs `body` with the decoded `arguments`, or reports why they cannot
    /// be decoded as the command's failure (`<command>: …`, status 1)
    /// through ``CommandFailure/report(command:help:to:)``
    /// and returns its status without calling `body`.
    ///
    /// An argument that is no text is a failure rather than a usage error:
    /// the usage text would not help with it.
    public static func run(_ arguments: [[UInt8]], command: String, console: Console, secretAfter: Set<String> = [],
                           _ body: ([String]) -> Int32) -> Int32 {
        do throws(CommandFailure) {
            return body(try decode(arguments, secretAfter: secretAfter))
        } catch {
            return error.report(command: command, help: "", to: console)
        }
    }

    /// At most this many bytes of an invalid argument are shown.
    static let shownBytes = 160

    /// `bytes` in double quotes: valid printable characters as they are,
    /// `"` and `\` escaped, every other byte as `\xNN`. A long argument is
    /// shown around its first invalid byte, with `…` where it is cut, then
    /// its length and that byte's offset.
    static func render(_ bytes: [UInt8]) -> String {
        let units = ArgumentUnit.split(bytes)
        guard bytes.count > shownBytes else { return "\"" + units.map(\.unit.rendered).joined() + "\"" }
        let firstInvalid = units.first { $0.unit.isInvalid }?.offset ?? 0
        // Whole units in a window around the first invalid byte.
        let start = max(0, min(firstInvalid - shownBytes / 2, bytes.count - shownBytes))
        let shown = units.filter { $0.offset >= start && $0.offset < start + shownBytes }
        let cutFront = (shown.first?.offset ?? 0) > 0
        let cutBack = shown.last.map { $0.offset + $0.unit.length < bytes.count } ?? false
        return "\"" + (cutFront ? "…" : "") + shown.map(\.unit.rendered).joined() + (cutBack ? "…" : "") + "\""
            + " (\(bytes.count) bytes; the first invalid byte is at offset \(firstInvalid))"
    }
}

/// One character of an argument, or one byte that begins none.
private enum ArgumentUnit {
    case character(Unicode.Scalar, length: Int)
    case invalid(UInt8)

    var length: Int {
        switch self {
        case .character(_, let length): return length
        case .invalid: return 1
        }
    }

    var rendered: String {
        switch self {
        case .invalid(let byte):
            return Self.escape(byte)
        case .character(let scalar, _):
            if scalar == "\"" { return "\\\"" }
            if scalar == "\\" { return "\\\\" }
            // Controls (C0, DEL, C1) are shown as bytes: they could move a terminal's cursor.
            if scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) {
                return String(scalar).utf8.map(Self.escape).joined()
            }
            return String(scalar)
        }
    }

    var isInvalid: Bool {
        if case .invalid = self { return true } else { return false }
    }

    static func escape(_ byte: UInt8) -> String { "\\x" + Hex.encode([byte], uppercase: true) }

    /// `bytes` as characters where they form valid UTF-8, else one byte at a
    /// time, each with the offset it starts at.
    static func split(_ bytes: [UInt8]) -> [(offset: Int, unit: ArgumentUnit)] {
        var units: [(offset: Int, unit: ArgumentUnit)] = []
        var parser = Unicode.UTF8.ForwardParser()
        var iterator = bytes.makeIterator()
        var offset = 0
        while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid(let encoded):
                units.append((offset, .character(Unicode.UTF8.decode(encoded), length: encoded.count)))
                offset += encoded.count
            case .error(let length):
                for k in offset..<(offset + length) { units.append((k, .invalid(bytes[k]))) }
                offset += length
            case .emptyInput:
                return units
            }
        }
    }
}
