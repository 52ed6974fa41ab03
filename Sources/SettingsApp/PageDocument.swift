import AppHomeSystem
import Preferences
import PropertyList
import SettingsBundle

/// What the page draws for one app: its pages as iOS draws them (sections
/// of rows, titles localised), the values shown (stored, else forced by
/// the administrator, else registered), the managed keys, and the raw
/// domain, as one JSON document.
public struct PageDocument {
    public let app: InstalledApp
    public let bundle: SettingsBundle
    public let idiom: Idiom
    /// The domain's stored contents.
    public let stored: [PlistKey: PlistValue]
    /// The keys the administrator forces, with their values.
    public let forced: [PlistKey: PlistValue]
    /// The browser's languages, best first.
    public let languages: [String]
    /// Where the bundle's pages and strings tables are read (kept between requests by the server).
    public let cache: SettingsCache

    public init(app: InstalledApp, bundle: SettingsBundle, idiom: Idiom = .phone, stored: [PlistKey: PlistValue],
                forced: [PlistKey: PlistValue], languages: [String], cache: SettingsCache = SettingsCache()) {
        self.app = app
        self.bundle = bundle
        self.idiom = idiom
        self.stored = stored
        self.forced = forced
        self.languages = languages
        self.cache = cache
    }

    /// The editable rows of every page, by key (the first row of a key wins):
    /// what a change is checked against before it reaches the write policy.
    public static func editableRows(_ pages: [Page], idiom: Idiom) -> [String: Specifier] {
        var out: [String: Specifier] = [:]
        for page in pages {
            for s in page.specifiers where s.isShown(on: idiom) {
                guard let key = s.key, Self.editableTypes.contains(s.type), out[key] == nil else { continue }
                out[key] = s
            }
        }
        return out
    }

    static let editableTypes: Set<String> = ["PSToggleSwitchSpecifier", "PSSliderSpecifier", "PSTextFieldSpecifier",
                                             "PSMultiValueSpecifier", "PSRadioGroupSpecifier"]

    /// The value a row shows: the forced one, the stored one, else the registered default.
    func shown(_ key: String, defaults: [PlistKey: PlistValue]) -> PlistValue? {
        forced[PlistKey(key)] ?? stored[PlistKey(key)] ?? defaults[PlistKey(key)]
    }

    /// The whole document.
    public func json() -> JSON {
        let schema = cache.schema(bundle, idiom: idiom)
        let pages = schema.pages
        let lproj = Localization.choose(available: schema.localizations, preferred: languages, developmentRegion: developmentRegion)
        func strings(_ table: String) -> [String: String] {
            guard let lproj else { return [:] }
            return cache.strings(bundle, lproj: lproj, table: table, idiom: idiom)
        }
        let defaults = schema.defaults
        var domain = Domain.named(app.id)
        if let group = schema.groupContainerIdentifier, app.groups.contains(group) { domain = .named(group) }
        var pageTitles: [String: String] = [:]
        var pageJSON: [JSON] = []
        // A child page's title is its row's title, localised on the parent page.
        for page in pages {
            let table = strings(page.stringsTable ?? "Root")
            for s in page.specifiers where s.type == "PSChildPaneSpecifier" {
                if case .string(let file)? = s["File"], let found = bundle.pageFile(file, idiom: idiom), pageTitles[found] == nil {
                    pageTitles[found] = Self.string(s["Title"]).map { table[$0] ?? $0 } ?? file
                }
            }
        }
        for page in pages {
            let table = strings(page.stringsTable ?? "Root")
            pageJSON.append(.object([
                ("file", .string(page.file)),
                ("title", .string(page.file == pages.first?.file ? app.name : pageTitles[page.file] ?? page.file)),
                ("sections", .array(sections(page, table: table, defaults: defaults))),
            ]))
        }
        let editable = schema.editable
        var values: [(String, JSON)] = []
        for key in (Set(editable.keys).union(defaults.keys.map(\.string))).sorted(by: { PlistKey($0) < PlistKey($1) }) {
            values.append((key, JSON(value: shown(key, defaults: defaults))))
        }
        var raw: [JSON] = []
        for key in stored.keys.sorted() {
            raw.append(Self.rawEntry(key, stored[key]!, declared: editable[key.string] != nil))
        }
        return .object([
            ("id", .string(app.id)),
            ("name", .string(app.name)),
            ("version", .string(app.version)),
            ("domain", .string(domain.description)),
            ("language", lproj.map { .string(String($0.dropLast(6))) } ?? .null),
            ("pages", .array(pageJSON)),
            ("values", .object(values)),
            ("managed", .array(forced.keys.sorted().map { .string($0.string) })),
            ("raw", .array(raw)),
        ])
    }

    /// A row of the raw view: a stored key, typed, as `defaults read` shows it.
    static func rawEntry(_ key: PlistKey, _ v: PlistValue, declared: Bool) -> JSON {
        .object([("key", .string(key.string)), ("type", .string(v.typeName)),
                 ("text", .string(OldStylePrinter.describe(v))), ("value", JSON(value: v)), ("declared", .bool(declared))])
    }

    /// The `change` event of `app` whose domain had `set` stored and
    /// `removed` removed: what an open page needs to show the change without
    /// reading the whole document again. `{"id", "values": {key: shown},
    /// "raw": [rows of the keys set], "removed": [keys], "managed": [keys]}`;
    /// `values` holds the changed keys the page shows (declared by a row or
    /// registered), each as the page shows it (forced, else stored, else
    /// registered). Only `{"id"}` for an app without a bundle: read it all again.
    public static func changeEvent(_ app: InstalledApp, set: [PlistKey: PlistValue], removed: Set<String>,
                                   managed: ManagedPreferences, idiom: Idiom = .phone, cache: SettingsCache) -> JSON {
        guard let bundle = app.settingsBundle else { return .object([("id", .string(app.id))]) }
        let schema = cache.schema(bundle, idiom: idiom)
        var domain = Domain.named(app.id)
        if let group = schema.groupContainerIdentifier, app.groups.contains(group) { domain = .named(group) }
        let forced = managed.forcedValues(in: domain)
        var values: [(String, JSON)] = []
        for key in (Set(set.keys.map(\.string)).union(removed)).sorted(by: { PlistKey($0) < PlistKey($1) })
        where schema.editable[key] != nil || schema.defaults[PlistKey(key)] != nil {
            values.append((key, JSON(value: forced[PlistKey(key)] ?? set[PlistKey(key)] ?? schema.defaults[PlistKey(key)])))
        }
        return .object([
            ("id", .string(app.id)),
            ("values", .object(values)),
            ("raw", .array(set.keys.sorted().map { rawEntry($0, set[$0]!, declared: schema.editable[$0.string] != nil) })),
            ("removed", .array(removed.sorted().map { .string($0) })),
            ("managed", .array(forced.keys.sorted().map { .string($0.string) })),
        ])
    }

    var developmentRegion: String {
        if case .string(let r)? = app.infoPlist["CFBundleDevelopmentRegion"], !r.isEmpty { return r }
        return "en"
    }

    static func string(_ v: PlistValue?) -> String? {
        if case .string(let s)? = v { return s }
        return nil
    }

    /// A page's rows in sections: a group (or a radio group) starts one,
    /// rows before the first group form an untitled one.
    func sections(_ page: Page, table: [String: String], defaults: [PlistKey: PlistValue]) -> [JSON] {
        func text(_ v: PlistValue?) -> JSON {
            guard let s = Self.string(v) else { return .null }
            return .string(table[s] ?? s)
        }
        func list(_ v: PlistValue?, localised: Bool) -> JSON {
            guard case .array(let items)? = v else { return .array([]) }
            return .array(items.map { item in
                if localised, case .string(let s) = item { return .string(table[s] ?? s) }
                return JSON(value: item)
            })
        }
        var out: [JSON] = []
        var title: JSON = .null, footer: JSON = .null
        var rows: [JSON] = []
        var started = false
        func close() {
            if started || !rows.isEmpty {
                out.append(.object([("title", title), ("footer", footer), ("rows", .array(rows))]))
            }
            rows = []
        }
        for s in page.specifiers where s.isShown(on: idiom) {
            var row: [(String, JSON)] = [("key", s.key.map { .string($0) } ?? .null), ("title", text(s["Title"]))]
            switch s.type {
            case "PSGroupSpecifier":
                close()
                started = true
                title = text(s["Title"])
                footer = text(s["FooterText"])
                continue
            case "PSRadioGroupSpecifier":
                close()
                started = true
                title = text(s["Title"])
                footer = text(s["FooterText"])
                row += [("kind", .string("radio")), ("titles", list(s["Titles"], localised: true)), ("values", list(s["Values"], localised: false))]
            case "PSToggleSwitchSpecifier":
                row += [("kind", .string("toggle")), ("trueValue", JSON(value: s["TrueValue"])), ("falseValue", JSON(value: s["FalseValue"]))]
            case "PSSliderSpecifier":
                row += [("kind", .string("slider")), ("min", Self.number(s["MinimumValue"]) ?? .number(0)),
                        ("max", Self.number(s["MaximumValue"]) ?? .number(1)),
                        ("minImage", image(s["MinimumValueImage"])), ("maxImage", image(s["MaximumValueImage"]))]
            case "PSTextFieldSpecifier":
                row += [("kind", .string("text")), ("secure", .bool(s["IsSecure"].map(Self.isTrue) ?? false)),
                        ("keyboard", JSON(value: s["KeyboardType"])), ("autocapitalization", JSON(value: s["AutocapitalizationType"])),
                        ("autocorrection", JSON(value: s["AutocorrectionType"]))]
            case "PSMultiValueSpecifier":
                row += [("kind", .string("multi")), ("titles", list(s["Titles"], localised: true)),
                        ("shortTitles", list(s["ShortTitles"], localised: true)), ("values", list(s["Values"], localised: false)),
                        ("sorted", .bool(s["DisplaySortedByTitle"].map(Self.isTrue) ?? false))]
            case "PSTitleValueSpecifier":
                row += [("kind", .string("title")), ("titles", list(s["Titles"], localised: true)), ("values", list(s["Values"], localised: false)),
                        ("text", .string(shown(s.key ?? "", defaults: defaults).map(OldStylePrinter.describeTopLevel) ?? ""))]
            case "PSChildPaneSpecifier":
                guard case .string(let file)? = s["File"], let found = bundle.pageFile(file, idiom: idiom) else { continue }
                row += [("kind", .string("child")), ("page", .string(found))]
            default:
                continue   // kinds iOS does not draw on Linux (IASK custom views) are left out
            }
            rows.append(.object(row))
            if s.type == "PSRadioGroupSpecifier" { close(); started = false; title = .null; footer = .null }
        }
        close()
        return out
    }

    /// A slider image: a plain file name in the bundle, served by the image route.
    func image(_ v: PlistValue?) -> JSON {
        guard let name = Self.string(v), Catalog.isPlainFileName(name) else { return .null }
        for candidate in [name, name + ".png"] where Catalog.regularFileSize(bundle.path + "/" + candidate) != nil {
            return .string(candidate)
        }
        return .null
    }

    static func number(_ v: PlistValue?) -> JSON? {
        switch v {
        case .integer(let i)?: return .number(Double(i))
        case .real(let d)?: return .number(d)
        default: return nil
        }
    }

    static func isTrue(_ v: PlistValue) -> Bool {
        switch v {
        case .bool(let b): return b
        case .integer(let i): return i != 0
        case .string(let s): return ["yes", "true", "1"].contains(s.lowercased())
        default: return false
        }
    }
}
