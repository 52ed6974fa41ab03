import AppHomeSystem
import Preferences
import PropertyList

/// The device a bundle is read for: it picks `~iphone` or `~ipad` variants
/// and filters rows by `SupportedUserInterfaceIdioms`.
public enum Idiom: String, Sendable, CaseIterable {
    case phone, pad

    /// The file-name modifier, `~iphone` or `~ipad`.
    public var fileSuffix: String { self == .phone ? "~iphone" : "~ipad" }
    /// The name in `SupportedUserInterfaceIdioms`.
    public var schemaName: String { self == .phone ? "Phone" : "Pad" }
}

/// A `Settings.bundle` directory on disk.
///
/// Holds only the path; pages and tables are read when asked for, so
/// looking a bundle up costs one `stat`.
public struct SettingsBundle: Sendable {
    /// The bundle directory.
    public let path: String

    /// - Throws: ``SettingsBundleError/notABundle(_:)`` when `path` is not a directory.
    public init(path: String) throws(SettingsBundleError) {
        let p = Paths.trimmingTrailingSlashes(path)
        guard FileSystem.isDirectory(p) else { throw .notABundle(path) }
        self.path = p
    }

    /// The bytes of a file given relative to the bundle, or `nil`.
    func read(_ relative: String) -> [UInt8]? {
        (try? FileSystem.readFileIfPresent(path + "/" + relative)) ?? nil
    }

    func exists(_ relative: String) -> Bool { FileSystem.exists(path + "/" + relative) }

    /// The names in the bundle's top directory, sorted.
    func entries(_ relative: String = "") -> [String] {
        let dir = relative.isEmpty ? path : path + "/" + relative
        return ((try? FileSystem.directoryEntries(dir)) ?? []).sorted()
    }

    /// The `.lproj` directories, sorted.
    public var localizations: [String] {
        entries().filter { $0.hasSuffix(".lproj") && FileSystem.isDirectory(path + "/" + $0) }
    }

    /// The page file for `name` on `idiom`: `name~<idiom>.plist`, then `name.plist`.
    public func pageFile(_ name: String, idiom: Idiom) -> String? {
        for candidate in [name + idiom.fileSuffix + ".plist", name + ".plist"] where exists(candidate) { return candidate }
        return nil
    }

    /// Like ``pageFile(_:idiom:)`` but also returns the bytes: one `open`
    /// per candidate instead of a `stat` and then an `open`.
    func readPage(_ name: String, idiom: Idiom) -> (file: String, bytes: [UInt8])? {
        for candidate in [name + idiom.fileSuffix + ".plist", name + ".plist"] {
            if let bytes = read(candidate) { return (candidate, bytes) }
        }
        return nil
    }

    /// The app group whose suite the bundle's values go to: Root's
    /// `ApplicationGroupContainerIdentifier` on `idiom`, or `nil` (the
    /// app's own domain; also for a Root that cannot be read).
    public func groupContainerIdentifier(idiom: Idiom) -> String? {
        guard let root = readPage("Root", idiom: idiom) else { return nil }
        // Every validated write asks: decode the page only when the key's
        // name is in its bytes (binary, XML and OpenStep plists all keep an
        // ASCII key as its plain bytes).
        guard Self.contains(root.bytes, Self.groupKey), let page = try? PlistCodec.decode(root.bytes),
              case .string(let group)? = page.dictionaryValue?["ApplicationGroupContainerIdentifier"], !group.isEmpty else { return nil }
        return group
    }

    static let groupKey = Array("ApplicationGroupContainerIdentifier".utf8)

    /// Whether `needle` (not empty) occurs in `bytes`.
    static func contains(_ bytes: [UInt8], _ needle: [UInt8]) -> Bool {
        bytes.withUnsafeBufferPointer { hay in
            needle.withUnsafeBufferPointer { n in
                guard n.count <= hay.count else { return false }
                let first = n[0]
                var i = 0
                let last = hay.count - n.count
                while i <= last {
                    if hay[i] == first {
                        var j = 1
                        while j < n.count && hay[i + j] == n[j] { j += 1 }
                        if j == n.count { return true }
                    }
                    i += 1
                }
                return false
            }
        }
    }

    /// The strings file of `table` in `lproj` on `idiom` (relative to the
    /// bundle, `nil` when there is none) and its strings (empty when it
    /// cannot be read), as ``Localization/strings(table:)`` reads them.
    public func stringsTable(_ table: String, lproj: String, idiom: Idiom) -> (file: String?, strings: [String: String]) {
        guard let file = stringsFile(table, lproj: lproj, idiom: idiom) else { return (nil, [:]) }
        guard let bytes = read(file), let decoded = try? StringsTable.decode(bytes) else { return (file, [:]) }
        return (file, decoded.strings)
    }

    /// The strings file of `table` in `lproj` on `idiom`: `table~<idiom>.strings`, then `table.strings`.
    func stringsFile(_ table: String, lproj: String, idiom: Idiom) -> String? {
        for candidate in [table + idiom.fileSuffix + ".strings", table + ".strings"] where exists(lproj + "/" + candidate) {
            return lproj + "/" + candidate
        }
        return nil
    }
}

/// Reads `.strings` tables: `"key" = "value";` text in UTF-8 (with or
/// without a byte-order mark) or UTF-16 with a byte-order mark, or a
/// property-list dictionary (XML or binary).
public enum StringsTable {
    /// The outcome of decoding a table.
    public struct Decoded: Equatable, Sendable {
        public var strings: [String: String]
        /// Set when no byte-order mark said what the encoding was and a guess was made.
        public var guessedEncoding: String?
        /// Keys of a text table defined more than once (the last one wins).
        public var duplicateKeys: [String] = []
    }

    /// Decodes a table. A file holding only a byte-order mark (or only
    /// white space and comments) is an empty table.
    ///
    /// - Throws: ``PlistError`` with the line of the first problem.
    public static func decode(_ bytes: [UInt8]) throws(PlistError) -> Decoded {
        var guessed: String?
        var utf8: [UInt8]
        if bytes.starts(with: [0xFF, 0xFE]) {
            utf8 = transcodeUTF16(bytes.dropFirst(2), littleEndian: true)
        } else if bytes.starts(with: [0xFE, 0xFF]) {
            utf8 = transcodeUTF16(bytes.dropFirst(2), littleEndian: false)
        } else if PlistCodec.detectFormat(bytes) == .binary {
            return Decoded(strings: try stringsOnly(PlistCodec.decode(bytes, format: .binary)), guessedEncoding: nil)
        } else if bytes.starts(with: [0xEF, 0xBB, 0xBF]) {
            utf8 = Array(bytes.dropFirst(3))
        } else if bytes.count >= 2 && (bytes[0] == 0 || bytes[1] == 0) {
            // No mark but NUL bytes in the first pair: UTF-16 without a BOM.
            let little = bytes[1] == 0
            guessed = little ? "UTF-16LE" : "UTF-16BE"
            utf8 = transcodeUTF16(bytes[...], littleEndian: little)
        } else {
            utf8 = bytes
        }
        if PlistCodec.detectFormat(utf8) == .xml {
            return Decoded(strings: try stringsOnly(PlistCodec.decode(utf8, format: .xml)), guessedEncoding: guessed)
        }
        if isBlank(utf8) { return Decoded(strings: [:], guessedEncoding: guessed) }
        let strings = try stringsOnly(PlistCodec.decode(utf8, format: .openStep))
        return Decoded(strings: strings, guessedEncoding: guessed, duplicateKeys: DuplicateKeys.inStrings(utf8))
    }

    private static func stringsOnly(_ value: PlistValue) throws(PlistError) -> [String: String] {
        guard case .dictionary(let d) = value else {
            throw .malformed(format: "strings", detail: "the table is a \(ValueText.typeName(value)), expected a dictionary")
        }
        var out: [String: String] = [:]
        for (k, v) in d.stringEntries {
            guard case .string(let s) = v else { throw .malformed(format: "strings", detail: "the value of \"\(k)\" is not a string") }
            out[k] = s
        }
        return out
    }

    /// True when the text holds nothing but white space and comments.
    static func isBlank(_ b: [UInt8]) -> Bool {
        var i = 0
        while i < b.count {
            switch b[i] {
            case 0x20, 0x09, 0x0A, 0x0D: i += 1
            case UInt8(ascii: "/") where i + 1 < b.count && b[i + 1] == UInt8(ascii: "/"):
                while i < b.count && b[i] != 0x0A { i += 1 }
            case UInt8(ascii: "/") where i + 1 < b.count && b[i + 1] == UInt8(ascii: "*"):
                i += 2
                while i + 1 < b.count && !(b[i] == UInt8(ascii: "*") && b[i + 1] == UInt8(ascii: "/")) { i += 1 }
                i += 2
            default: return false
            }
        }
        return true
    }

    static func transcodeUTF16(_ bytes: ArraySlice<UInt8>, littleEndian: Bool) -> [UInt8] {
        var units: [UInt16] = []
        units.reserveCapacity(bytes.count / 2)
        var i = bytes.startIndex
        while i + 1 < bytes.endIndex {
            let a = UInt16(bytes[i]), b = UInt16(bytes[i + 1])
            units.append(littleEndian ? a | b << 8 : a << 8 | b)
            i += 2
        }
        return Array(String(decoding: units, as: UTF16.self).utf8)
    }
}

