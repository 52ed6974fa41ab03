import AppHomeSystem
import Preferences
import PropertyList

/// One row of a page, as read from the bundle.
public struct Specifier: Sendable, Equatable {
    /// The page file it is on, relative to the bundle.
    public var file: String
    /// Its index in `PreferenceSpecifiers`.
    public var index: Int
    /// Its `Type` (empty when missing or not a string).
    public var type: String
    /// Its non-empty `Key`, if any.
    public var key: String?
    /// Every key of the row.
    public var entries: [PlistKey: PlistValue]

    /// `PreferenceSpecifiers[3] (Key "sort")`.
    public var location: String {
        "PreferenceSpecifiers[\(index)]" + (key.map { " (Key \"\($0)\")" } ?? "")
    }

    public subscript(_ name: String) -> PlistValue? { entries[name] }

    /// Whether the row is shown on `idiom` (no list, or an empty one, means every idiom).
    public func isShown(on idiom: Idiom) -> Bool {
        guard case .array(let list)? = entries["SupportedUserInterfaceIdioms"], !list.isEmpty else { return true }
        return list.contains(.string(idiom.schemaName))
    }

    /// The string under `name`, or `nil` when absent or not a string.
    func string(_ name: String) -> String? {
        if case .string(let s)? = entries[name] { return s }
        return nil
    }
}

/// A page reached from Root.
public struct Page: Sendable, Equatable {
    /// The file, relative to the bundle (`Root~ipad.plist`).
    public var file: String
    /// The page's root dictionary.
    public var contents: [PlistKey: PlistValue]
    /// Its rows, in order (non-dictionary rows left out).
    public var specifiers: [Specifier]
    /// Its `StringsTable`.
    public var stringsTable: String? {
        if case .string(let s)? = contents["StringsTable"] { return s }
        return nil
    }
}

/// The pages of a bundle for one idiom, depth first from Root in row
/// order, each page once; problems met on the way are handed to a sink.
struct PageWalk {
    let bundle: SettingsBundle
    let idiom: Idiom
    let schema: Schema
    let profile: Profile
    var pages: [Page] = []
    var findings: [Finding] = []
    var visited: Set<String> = []
    /// Look for duplicate keys in XML pages (SB207): the linter does, the write path does not.
    var checkDuplicates = false

    init(bundle: SettingsBundle, idiom: Idiom, schema: Schema, profile: Profile) {
        self.bundle = bundle
        self.idiom = idiom
        self.schema = schema
        self.profile = profile
    }

    mutating func report(_ rule: String, variant: String? = nil, file: String, location: String = "", _ args: [String: String]) {
        findings.append(schema.finding(rule, variant: variant, file: file, location: location, profile: profile, args))
    }

    mutating func run() {
        guard let root = bundle.readPage("Root", idiom: idiom) else {
            report("SB100", file: "", ["idiom": idiom == .phone ? "iphone" : "ipad", "bundle": FileSystem.lastComponent(bundle.path)])
            return
        }
        visit(file: root.file, bytes: root.bytes, trail: ["Root"])
    }

    /// Reads a page file, reporting parse and shape problems.
    mutating func load(_ file: String, _ bytes: [UInt8]) -> [PlistKey: PlistValue]? {
        let value: PlistValue
        do { value = try PlistCodec.decode(bytes) } catch {
            // JSON is never guessed by the codec (a `{` also opens OpenStep): say so when it is JSON.
            if (try? PlistCodec.decode(bytes, format: .json)) != nil {
                report("SB103", file: file, ["file": file, "format": "JSON"])
            } else {
                report("SB101", file: file, ["file": file, "detail": "\(error)"])
            }
            return nil
        }
        guard case .dictionary(let d) = value else {
            report("SB102", file: file, ["file": file, "type": ValueText.typeName(value)])
            return nil
        }
        if checkDuplicates && PlistCodec.detectFormat(bytes) == .xml {
            for dup in DuplicateKeys.inXML(bytes) {
                var container: PlistValue? = value
                var path = ""
                for step in dup.path {
                    switch step {
                    case .key(let k):
                        container = container?.dictionaryValue?[k]
                        path += path.isEmpty ? k : "." + k
                    case .index(let n):
                        container = container?.arrayValue.flatMap { n < $0.count ? $0[n] : nil }
                        path += "[\(n)]"
                    }
                }
                let last = container?.dictionaryValue?[dup.key]
                report("SB207", file: file, ["k": dup.key, "path": path.isEmpty ? "the top level" : path,
                                             "v": last.map(ValueText.describe) ?? "?"])
            }
        }
        return d
    }

    private mutating func visit(file: String, bytes: [UInt8], trail: [String]) {
        visited.insert(file)
        guard let contents = load(file, bytes) else { return }
        var specifiers: [Specifier] = []
        var children: [(Specifier, String)] = []
        if case .array(let rows)? = contents["PreferenceSpecifiers"] {
            for (i, row) in rows.enumerated() {
                guard case .dictionary(let d) = row else { continue }
                var key: String?
                if case .string(let k)? = d["Key"], !k.isEmpty { key = k }
                var type = ""
                if case .string(let t)? = d["Type"] { type = t }
                let s = Specifier(file: file, index: i, type: type, key: key, entries: d)
                specifiers.append(s)
                if schema.types[type]?.kind == "childPane" || (profile == .iask && type == "IASKCustomViewSpecifier"),
                   case .string(let child)? = d["File"] {
                    children.append((s, child))
                }
            }
        }
        pages.append(Page(file: file, contents: contents, specifiers: specifiers))
        for (s, child) in children where s.isShown(on: idiom) {
            followChild(s, child, trail: trail)
        }
    }

    private mutating func followChild(_ s: Specifier, _ file: String, trail: [String]) {
        let title = s.string("Title") ?? ""
        let location = s.location
        let isIASKCustom = s.type == "IASKCustomViewSpecifier"
        if file.hasPrefix("/") || file.contains("://") || file.split(separator: "/").contains("..") {
            report("SB405", file: s.file, location: location, ["title": title, "File": file])
            return
        }
        var name = file
        if name.hasSuffix(".plist") {
            if !isIASKCustom { report("SB403", file: s.file, location: location, ["title": title]) }
            name.removeLast(6)
        }
        if name.contains("/") && !isIASKCustom { report("SB404", file: s.file, location: location, ["title": title, "File": file]) }
        guard let resolved = bundle.readPage(name, idiom: idiom) else {
            if isIASKCustom { return }  // a custom view's File may name anything
            report("SB402", file: s.file, location: location, ["title": title, "File": name, "idiom": idiom == .phone ? "iphone" : "ipad"])
            return
        }
        if trail.contains(name) {
            report("SB406", file: s.file, location: location, ["cycle": (trail + [name]).joined(separator: " → ")])
            return
        }
        if visited.contains(resolved.file) { return }
        visit(file: resolved.file, bytes: resolved.bytes, trail: trail + [name])
    }
}

extension SettingsBundle {
    /// The pages reached from Root on `idiom`, depth first in row order,
    /// each once (what the Settings app draws); pages that cannot be read
    /// are left out (`lint` reports them).
    public func pages(idiom: Idiom = .phone, profile: Profile = .apple, schema: Schema = .builtInKinds) -> [Page] {
        var walk = PageWalk(bundle: self, idiom: idiom, schema: schema, profile: profile)
        walk.run()
        return walk.pages
    }

    /// ``pages(idiom:profile:schema:)`` and every page file the walk read,
    /// relative to the bundle (a page that failed to parse included): what
    /// a cache of the pages must see unchanged to stay valid.
    public func pagesAndFiles(idiom: Idiom = .phone, profile: Profile = .apple, schema: Schema = .builtInKinds) -> (pages: [Page], files: [String]) {
        var walk = PageWalk(bundle: self, idiom: idiom, schema: schema, profile: profile)
        walk.run()
        return (walk.pages, walk.visited.sorted())
    }
}
