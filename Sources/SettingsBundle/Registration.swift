import AppHomeSystem
import Preferences
import PropertyList

/// The defaults a bundle registers: every editable row's `DefaultValue`,
/// walking pages depth first from Root in row order, the last of a key
/// winning, rows hidden on the idiom left out.
public enum Registration {
    /// The kinds whose `DefaultValue` is registered.
    static func editableKinds(_ profile: Profile) -> Set<String> {
        profile == .iask ? ["toggle", "multiValue", "radioGroup", "slider", "textField", "datePicker", "custom"]
                         : ["toggle", "multiValue", "radioGroup", "slider", "textField"]
    }

    /// Cocoa's `boolValue` of a scalar.
    static func boolValue(_ v: PlistValue) -> Bool {
        switch v {
        case .bool(let b): return b
        case .integer(let i): return i != 0
        case .real(let d): return d != 0
        case .string(let s):
            guard let c = s.trimmingPrefixSpaces.first else { return false }
            return "YyTt123456789".contains(c)
        default: return false
        }
    }

    /// The registration domain of `bundle` on `idiom`.
    ///
    /// - Parameters:
    ///   - includeReadOnly: also register `PSTitleValueSpecifier` defaults.
    public static func defaults(of bundle: SettingsBundle, idiom: Idiom = .phone, profile: Profile = .apple,
                                includeReadOnly: Bool = false, schema: Schema = .builtInKinds) -> [PlistKey: PlistValue] {
        var walk = PageWalk(bundle: bundle, idiom: idiom, schema: schema, profile: profile)
        walk.run()
        return Dictionary(stringKeys: rows(walk.pages, idiom: idiom, schema: schema, profile: profile, includeReadOnly: includeReadOnly)
            .mapValues { $0["DefaultValue"]! })
    }

    /// ``defaults(of:idiom:profile:includeReadOnly:schema:)`` from pages already walked.
    public static func defaults(pages: [Page], idiom: Idiom = .phone, profile: Profile = .apple,
                                includeReadOnly: Bool = false, schema: Schema = .builtInKinds) -> [PlistKey: PlistValue] {
        Dictionary(stringKeys: rows(pages, idiom: idiom, schema: schema, profile: profile, includeReadOnly: includeReadOnly)
            .mapValues { $0["DefaultValue"]! })
    }

    /// The rows that register a default on `idiom`, by key, the last in walk order winning.
    static func rows(_ pages: [Page], idiom: Idiom, schema: Schema, profile: Profile, includeReadOnly: Bool = false) -> [String: Specifier] {
        var kinds = editableKinds(profile)
        if includeReadOnly { kinds.insert("titleValue") }
        var out: [String: Specifier] = [:]
        for page in pages {
            for s in page.specifiers where s.isShown(on: idiom) {
                guard let k = s.key, let kind = schema.types[s.type]?.kind, kinds.contains(kind), s["DefaultValue"] != nil else { continue }
                out[k] = s
            }
        }
        return out
    }
}

extension UserDefaults {
    /// Registers a settings bundle's defaults, so that ``resolve(_:)``
    /// falls back to them after the argument, application and global layers.
    public mutating func register(settingsBundle bundle: SettingsBundle, idiom: Idiom = .phone, profile: Profile = .apple) {
        register(Registration.defaults(of: bundle, idiom: idiom, profile: profile))
    }
}

extension String {
    var trimmingPrefixSpaces: Substring { drop { $0 == " " || $0 == "\t" } }
}
