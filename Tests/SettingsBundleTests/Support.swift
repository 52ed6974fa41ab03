import Foundation
import TestSupport
import PropertyList
@testable import SettingsBundle

/// A temporary directory holding one `Settings.bundle`, removed when the test is done.
final class BundleDirectory: Sendable {
    let base: String
    let forProcess: Bool
    var path: String { base + "/Settings.bundle" }

    /// Writes `files` (path relative to the bundle → contents) into a new bundle.
    ///
    /// A dictionary or array is written as an XML property list (binary when
    /// `binary`), a string as UTF-8 text, data as raw bytes.
    /// `forProcess`: for a `static let`, whose `deinit` never runs; the
    /// directory is removed when the test process exits.
    init(_ files: [String: PlistValue], binary: Bool = false, forProcess: Bool = false) {
        self.forProcess = forProcess
        base = forProcess ? ScratchDirectory.makeForProcess("apphome-sb") : ScratchDirectory.make("apphome-sb")
        try! FileManager.default.createDirectory(atPath: base + "/Settings.bundle", withIntermediateDirectories: true)
        for (relative, value) in files {
            let bytes: [UInt8]
            switch value {
            case .dictionary, .array: bytes = try! PlistCodec.encode(value, format: binary ? .binary : .xml)
            case .string(let s): bytes = Array(s.utf8)
            case .data(let d): bytes = d
            default: bytes = Array(ValueText.bare(value).utf8)
            }
            write(relative, bytes)
        }
    }

    deinit { if !forProcess { ScratchDirectory.remove(base) } }

    func write(_ relative: String, _ bytes: [UInt8]) {
        let full = path + "/" + relative
        try! FileManager.default.createDirectory(atPath: (full as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try! Data(bytes).write(to: URL(fileURLWithPath: full))
    }

    var bundle: SettingsBundle { try! SettingsBundle(path: path) }
}

enum Fixtures {
    /// `Tests/SettingsBundleTests/Fixtures`.
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures").path
    /// The repository root.
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

    static func json(_ path: String) throws -> PlistValue {
        try PlistCodec.decode([UInt8](try Data(contentsOf: URL(fileURLWithPath: path))), format: .json)
    }
}

/// Shorthands for building pages in tests.
enum Rows {
    static func page(_ rows: [PlistValue], _ extra: [PlistKey: PlistValue] = [:]) -> PlistValue {
        .dictionary(["PreferenceSpecifiers": .array(rows)].merging(extra) { _, n in n })
    }
    static func group(_ title: String = "G", _ extra: [PlistKey: PlistValue] = [:]) -> PlistValue {
        .dictionary(["Type": "PSGroupSpecifier", "Title": .string(title)].merging(extra) { _, n in n })
    }
    static func toggle(_ key: String, _ extra: [PlistKey: PlistValue] = [:]) -> PlistValue {
        .dictionary(["Type": "PSToggleSwitchSpecifier", "Title": "T", "Key": .string(key), "DefaultValue": true].merging(extra) { _, n in n })
    }
    static func child(_ file: String, title: String = "More") -> PlistValue {
        .dictionary(["Type": "PSChildPaneSpecifier", "Title": .string(title), "File": .string(file)])
    }
}

extension PlistValue: ExpressibleByStringLiteral, ExpressibleByBooleanLiteral,
                      ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral {
    public init(stringLiteral v: String) { self = .string(v) }
    public init(booleanLiteral v: Bool) { self = .bool(v) }
    public init(integerLiteral v: Int) { self = .integer(Int128(v)) }
    public init(floatLiteral v: Double) { self = .real(v) }
}

extension PlistValue: ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral {
    public init(arrayLiteral items: PlistValue...) { self = .array(items) }
    public init(dictionaryLiteral entries: (PlistKey, PlistValue)...) { self = .dictionary(Dictionary(entries) { _, n in n }) }
}
