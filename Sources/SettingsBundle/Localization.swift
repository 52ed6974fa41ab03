import PropertyList

/// Picks the `.lproj` for the user's languages and looks strings up in it,
/// as Settings does.
///
/// Languages are walked in order; `en-GB` falls back to `en`; `_` and `-`
/// are the same and case does not matter (`zh_CN` matches `zh-cn.lproj`);
/// with no match the development region is used, then `Base`. A key
/// missing from the table shows the key itself.
public struct Localization: Sendable {
    public let bundle: SettingsBundle
    /// The chosen `.lproj` (`en.lproj`), or `nil` when the bundle has none that fits.
    public let lproj: String?
    public let idiom: Idiom

    public init(bundle: SettingsBundle, preferredLanguages: [String], developmentRegion: String = "en", idiom: Idiom = .phone) {
        self.bundle = bundle
        self.idiom = idiom
        self.lproj = Self.choose(available: bundle.localizations, preferred: preferredLanguages, developmentRegion: developmentRegion)
    }

    static func normalise(_ s: String) -> String {
        String(s.lowercased().map { $0 == "_" ? "-" : $0 })
    }

    /// The `.lproj` directory for the preferred languages.
    public static func choose(available: [String], preferred: [String], developmentRegion: String) -> String? {
        var byName: [String: String] = [:]
        for dir in available { byName[normalise(String(dir.dropLast(6)))] = dir }
        for language in preferred {
            var candidate = normalise(language)
            while true {
                if let dir = byName[candidate] { return dir }
                guard let dash = candidate.lastIndex(of: "-") else { break }
                candidate = String(candidate[..<dash])
            }
        }
        return byName[normalise(developmentRegion)] ?? byName["base"]
    }

    /// The strings of `table` in the chosen language (`table~<idiom>.strings`
    /// first); empty when there is none or it cannot be read. Fetch a table
    /// once when translating many strings.
    public func strings(table: String) -> [String: String] {
        guard let lproj, let file = bundle.stringsFile(table, lproj: lproj, idiom: idiom),
              let bytes = bundle.read(file), let decoded = try? StringsTable.decode(bytes) else { return [:] }
        return decoded.strings
    }

    /// `string` translated through `table`, or `string` itself (Settings
    /// shows the raw string when a table or a key is missing).
    public func localized(_ string: String, table: String?) -> String {
        guard let table else { return string }
        return strings(table: table)[string] ?? string
    }
}

/// The localisation checks of the linter (SB5xx).
struct LocalizationChecker {
    let schema: Schema
    let profile: Profile
    let bundle: SettingsBundle

    func check(tables: [String], pages: [String: [Page]]) -> [Finding] {
        var out: [Finding] = []
        func report(_ rule: String, file: String, location: String = "", _ args: [String: String]) {
            out.append(schema.finding(rule, file: file, location: location, profile: profile, args))
        }
        let lprojs = bundle.localizations
        for name in bundle.entries() where name.hasSuffix(".xcstrings") {
            report("SB509", file: name, ["table": String(name.dropLast(10))])
        }
        for table in tables {
            let users = pages[table] ?? []
            let withTable = lprojs.filter { bundle.exists($0 + "/" + table + ".strings") }
            if withTable.isEmpty {
                for page in users { report("SB501", file: page.file, ["table": table]) }
                continue
            }
            let without = lprojs.filter { !withTable.contains($0) }
            if !without.isEmpty {
                report("SB502", file: "", ["table": table, "missing": without.joined(separator: ", "), "present": withTable.joined(separator: ", ")])
            }
            // Strings the pages show, in order.
            var wanted: [String] = []
            var wantedSet: Set<String> = []
            for page in users {
                for s in page.specifiers {
                    guard let type = schema.types[s.type] else { continue }
                    for name in s.entries.sortedKeyStrings where (type.keys[name]?.localizable ?? false) {
                        let items: [PlistValue] = s[name]!.arrayValue ?? [s[name]!]
                        for case .string(let text) in items where wantedSet.insert(text).inserted { wanted.append(text) }
                    }
                }
            }
            for lproj in withTable {
                let file = lproj + "/" + table + ".strings"
                let lang = String(lproj.dropLast(6))
                guard let bytes = bundle.read(file) else { continue }
                let decoded: StringsTable.Decoded
                do { decoded = try StringsTable.decode(bytes) } catch {
                    report("SB500", file: file, ["lproj": lproj, "table": table, "detail": "\(error)"])
                    continue
                }
                if let enc = decoded.guessedEncoding { report("SB107", file: file, ["file": file, "enc": enc]) }
                for k in decoded.duplicateKeys { report("SB505", file: file, ["lang": lang, "table": table, "k": k]) }
                for idiom in Idiom.allCases where bundle.exists(lproj + "/" + table + idiom.fileSuffix + ".strings") {
                    report("SB506", file: lproj + "/" + table + idiom.fileSuffix + ".strings",
                           ["lang": lang, "table": table, "suffix": idiom.fileSuffix, "idiom": idiom.rawValue])
                }
                for text in wanted where decoded.strings[text] == nil {
                    report("SB503", file: file, ["lang": lang, "string": text, "table": table])
                }
                for k in decoded.strings.keys.sorted() where !wantedSet.contains(k) {
                    report("SB504", file: file, ["lang": lang, "table": table, "k": k])
                }
            }
        }
        return out
    }
}
