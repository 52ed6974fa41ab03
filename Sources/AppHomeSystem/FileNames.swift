#if canImport(Glibc)
import Glibc
#endif

/// File names as the kernel gives them: bytes. A name decides trust or
/// identity (what a signature seals, what an install copies, what a backup
/// holds) only when it is valid UTF-8, read strictly: a name that is not
/// is refused with its bytes shown escaped, never repaired into another
/// name (a lossy decoding would make `\xFFx` the same text as `U+FFFD x`).
public enum FileNames {
    /// `bytes` as text when they are valid UTF-8, else `nil` (no repair).
    public static func text(_ bytes: some Collection<UInt8>) -> String? {
        String(validating: bytes, as: UTF8.self)
    }

    /// Whether `name` is one entry of a directory, judged by its bytes: not
    /// empty, not `.` or `..`, and without a `/` or NUL. `String.contains("/")`
    /// compares characters, and a `/` followed by a combining mark is one
    /// character that it does not find, though the kernel sees the slash.
    public static func isSingleComponent(_ name: String) -> Bool {
        let bytes = name.utf8
        let dotsOnly = bytes.count <= 2 && bytes.allSatisfy { $0 == UInt8(ascii: ".") }
        return !bytes.isEmpty && !dotsOnly && !bytes.contains(UInt8(ascii: "/")) && !bytes.contains(0)
    }

    /// How ``escaped(_:notation:)-(Sequence<UInt8>)`` writes what it escapes.
    public enum Notation: Sendable {
        /// For messages: `\\` for a backslash, `\xNN` for each byte of a control
        /// character or of invalid UTF-8.
        case message
        /// For a terminal showing a value (`plutil -p`): `\u001b` for a control
        /// character, `\xNN` for a byte of invalid UTF-8; backslashes as they are.
        case terminal
    }

    /// `bytes` for a message (or a terminal): valid printable characters as they
    /// are, control characters (C0, DEL, C1) and every byte of invalid UTF-8
    /// escaped, so a name from another machine, an archive or a snapshot can
    /// neither hide nor fake a line, nor send a terminal an escape sequence.
    /// The one helper for every such name in every message.
    public static func escaped(_ bytes: some Sequence<UInt8>, notation: Notation = .message) -> String {
        var out = ""
        var parser = Unicode.UTF8.ForwardParser()
        let all = Array(bytes)
        if !all.contains(where: { $0 < 0x20 || $0 >= 0x7F || (notation == .message && $0 == 0x5C) }) {
            return String(decoding: all, as: UTF8.self)
        }
        var iterator = all.makeIterator()
        var offset = 0
        func hex(_ b: UInt8) -> String { "\\x" + Hex.encode([b], uppercase: true) }
        while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid(let encoded):
                let scalar = Unicode.UTF8.decode(encoded)
                if scalar == "\\" && notation == .message { out += "\\\\" } else if scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) {
                    switch notation {
                    case .message: out += String(scalar).utf8.map(hex).joined()
                    case .terminal: out += "\\u00" + Hex.encode([UInt8(scalar.value)])
                    }
                } else {
                    out.unicodeScalars.append(scalar)
                }
                offset += encoded.count
            case .error(let length):
                for k in offset..<(offset + length) { out += hex(all[k]) }
                offset += length
            case .emptyInput:
                return out
            }
        }
    }

    /// `text` for a message, escaped as ``escaped(_:notation:)-(Sequence<UInt8>)``.
    public static func escaped(_ text: String, notation: Notation = .message) -> String {
        escaped(Array(text.utf8), notation: notation)
    }

    /// The names in the directory `path` as bytes (without `.` and `..`);
    /// empty when it does not exist.
    public static func rawEntries(_ path: String) throws(SystemError) -> [[UInt8]] {
        guard let dir = opendir(path) else {
            if errno == ENOENT || errno == ENOTDIR { return [] }
            throw SystemError("opendir", path: path, errno: errno)
        }
        defer { closedir(dir) }
        var names: [[UInt8]] = []
        while let entry = readdir(dir) {
            let name: [UInt8] = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                Array(raw[..<(raw.firstIndex(of: 0) ?? raw.count)])
            }
            if name != [0x2E] && name != [0x2E, 0x2E] { names.append(name) }
        }
        return names
    }

    /// The names in the directory open as `fd` as bytes (without `.` and
    /// `..`); `fd` stays open, its position is left at the end. `path`
    /// names it in messages.
    public static func rawEntries(directory fd: Int32, path: String) throws(SystemError) -> [[UInt8]] {
        let copy = dup(fd)
        guard copy >= 0, let dir = fdopendir(copy) else {
            let e = errno
            if copy >= 0 { close(copy) }
            throw SystemError("opendir", path: path, errno: e)
        }
        defer { closedir(dir) }
        rewinddir(dir)
        var names: [[UInt8]] = []
        while let entry = readdir(dir) {
            let name: [UInt8] = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                let length = strnlen(raw.baseAddress!.assumingMemoryBound(to: CChar.self), raw.count)
                return Array(raw[..<length])
            }
            if name != [0x2E] && name != [0x2E, 0x2E] { names.append(name) }
        }
        return names
    }

    /// The names in the directory `path` as text (without `.` and `..`;
    /// empty when it does not exist).
    ///
    /// - Throws: ``SystemError`` with `EILSEQ` naming the first name that
    ///   is not valid UTF-8, escaped (see ``invalidName(directory:name:)``).
    public static func entries(_ path: String) throws(SystemError) -> [String] {
        var out: [String] = []
        for raw in try rawEntries(path) {
            guard let name = text(raw) else { throw invalidName(directory: path, name: raw) }
            out.append(name)
        }
        return out
    }

    /// The error for the entry `name` of `directory` that is not valid UTF-8.
    public static func invalidName(directory: String, name: [UInt8]) -> SystemError {
        SystemError("readdir", path: escaped(directory) + "/" + escaped(name), errno: EILSEQ,
                    detail: "the name is not valid UTF-8 (shown with its bytes escaped); AppHome refuses it")
    }

    /// `lstat` of the entry `name` (bytes) of `directory`.
    public static func lstatEntry(directory: String, name: [UInt8]) -> stat? {
        var path = Array(directory.utf8) + [0x2F] + name
        path.append(0)
        var st = stat()
        let ok = path.withUnsafeBufferPointer { p in
            p.baseAddress!.withMemoryRebound(to: CChar.self, capacity: p.count) { lstat($0, &st) == 0 }
        }
        return ok ? st : nil
    }
}
