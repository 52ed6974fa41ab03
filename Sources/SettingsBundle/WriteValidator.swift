import PropertyList

/// Checks values against a bundle's schema before they are stored, as
/// `gsettings set` checks a key's type and range.
///
/// Built once per bundle (it walks the pages for one idiom); each
/// ``check(domain:key:value:)`` is a dictionary look-up and a comparison.
public struct WriteValidator: Sendable {
    /// The schema given to ``init(bundle:idiom:profile:schema:)`` when it is
    /// not the built-in one; messages come from it, else from ``Schema/builtIn``,
    /// read only when a value is refused.
    let customSchema: Schema?
    /// `Type` → kind of the rows this validator knows.
    let kinds: [String: String]
    /// The row that declares each key, the last one in walk order winning.
    public let declarations: [String: Specifier]
    /// Keys declared only by rows hidden on ``idiom``.
    public let hidden: Set<String>
    public let idiom: Idiom
    /// The page files the walk read (for ``CompiledSchemaCache``).
    let pageFiles: [String]
    /// A hidden row of each key in ``hidden``.
    let hiddenRows: [String: Specifier]

    /// - Parameter schema: the schema; by default the built-in one, read
    ///   without keys and rules (messages come from the full schema, which is
    ///   only read when a value is refused).
    public init(bundle: SettingsBundle, idiom: Idiom = .phone, profile: Profile = .apple, schema: Schema = .builtInKinds) {
        var walk = PageWalk(bundle: bundle, idiom: idiom, schema: schema, profile: profile)
        walk.run()
        // Every file the walk read, a page that failed to parse included, so
        // that fixing it makes the compiled form stale.
        self.init(pages: walk.pages, pageFiles: walk.visited.sorted(), idiom: idiom, schema: schema)
    }

    /// A validator from pages already walked (``SettingsBundle/pagesAndFiles(idiom:profile:schema:)``
    /// with the same `schema`): a reader that keeps a bundle's pages checks writes without reading them again.
    public init(pages: [Page], pageFiles: [String], idiom: Idiom = .phone, schema: Schema = .builtInKinds) {
        self.customSchema = schema.kindsOnly ? nil : schema
        self.kinds = schema.types.mapValues(\.kind)
        var table: [String: Specifier] = [:]
        var hiddenTable: [String: Specifier] = [:]
        for page in pages {
            for s in page.specifiers {
                guard let k = s.key, schema.types[s.type] != nil else { continue }
                if s.isShown(on: idiom) { table[k] = s } else { hiddenTable[k] = s }
            }
        }
        declarations = table
        hiddenRows = hiddenTable.filter { table[$0.key] == nil }
        hidden = Set(hiddenRows.keys)
        self.idiom = idiom
        self.pageFiles = pageFiles
    }

    /// A validator from rows already looked up (``CompiledSchemaCache``).
    init(declarations: [String: Specifier], hidden: Set<String>, idiom: Idiom, kinds: [String: String]) {
        self.customSchema = nil
        self.kinds = kinds
        self.declarations = declarations
        self.hidden = hidden
        self.idiom = idiom
        self.pageFiles = []
        self.hiddenRows = [:]
    }

    /// Why a key no row declares is stored without validation: SB708 when
    /// only rows hidden on this idiom declare it, else SB704.
    public func undeclared(domain: String, key: String) -> Finding {
        let messages = customSchema ?? .builtIn
        if hidden.contains(key) {
            return messages.finding("SB708", file: "", ["domain": domain, "key": key, "idiom": idiom.rawValue])
        }
        return messages.finding("SB704", file: "", ["domain": domain, "key": key])
    }

    /// The problem with storing `value` under `key`, or `nil` when it may be
    /// stored: a valid value, or a key no row declares (see ``undeclared(domain:key:)``).
    ///
    /// Errors (SB700–SB703, SB706, SB707) mean "do not write"; SB705 is a
    /// warning: the value may be written.
    public func check(domain: String, key: String, value: PlistValue) -> Finding? {
        guard let s = declarations[key] else { return nil }
        func f(_ rule: String, _ extra: [String: String] = [:]) -> Finding {
            // The full schema (messages) and the arguments are made only when a value is refused.
            var args = extra
            args["domain"] = domain
            args["key"] = key
            args["Type"] = s.type
            return (customSchema ?? .builtIn).finding(rule, file: "", args)
        }
        let kind = kinds[s.type] ?? ""
        switch kind {
        case "group", "childPane", "button":
            return f("SB706")
        case "toggle":
            let t = s["TrueValue"], fv = s["FalseValue"]
            if t == nil && fv == nil {
                if case .bool = value { return nil }
                return f("SB703", ["t": "true", "f": "false"])
            }
            let tv = t ?? .bool(true), ff = fv ?? .bool(false)
            if ValueText.same(value, tv) || ValueText.same(value, ff) { return nil }
            return f("SB703", ["t": ValueText.describe(tv), "f": ValueText.describe(ff)])
        case "slider":
            guard let n = ValueText.number(value) else {
                return f("SB700", ["expected": "a number", "type": ValueText.typeName(value)])
            }
            guard let lo = s["MinimumValue"].flatMap(ValueText.number), let hi = s["MaximumValue"].flatMap(ValueText.number) else { return nil }
            if !(lo...hi).contains(n) {
                return f("SB702", ["v": ValueText.bare(value), "min": ValueText.bare(s["MinimumValue"]!), "max": ValueText.bare(s["MaximumValue"]!)])
            }
            return nil
        case "multiValue", "radioGroup":
            guard case .array(let values)? = s["Values"] else { return nil }
            if values.contains(where: { ValueText.same($0, value) }) { return nil }
            let titles = s["Titles"]?.arrayValue ?? []
            let allowed = values.enumerated().map { i, v -> String in
                if i < titles.count, case .string(let t) = titles[i] { return "\(ValueText.describe(v)) (\(t))" }
                return ValueText.describe(v)
            }
            return f("SB701", ["v": ValueText.describe(value), "allowed": allowed.joined(separator: ", ")])
        case "textField":
            if case .string = value { return nil }
            return f("SB707")
        case "titleValue":
            if case .array(let values)? = s["Values"], !values.contains(where: { ValueText.same($0, value) }) { return f("SB705") }
            return nil
        case "datePicker":
            if case .date = value { return nil }
            return f("SB700", ["expected": "a date", "type": ValueText.typeName(value)])
        default:
            return nil
        }
    }

    /// Every stored value that breaks the schema (errors and warnings), in key order.
    public func violations(domain: String, contents: [PlistKey: PlistValue]) -> [Finding] {
        contents.keys.sorted().compactMap { k -> Finding? in
            check(domain: domain, key: k.string, value: contents[k]!)
        }
    }

    /// What `key` accepts, in the manner of `gsettings range`: `type boolean`,
    /// `type string`, `type any`, `range MIN MAX`, or `enum` followed by one
    /// line per allowed value (with its title); `nil` for an undeclared key.
    public func range(of key: String) -> [String]? {
        guard let s = declarations[key] else { return nil }
        func choices(_ values: [PlistValue], _ titles: [PlistValue]) -> [String] {
            ["enum"] + values.enumerated().map { i, v in
                if i < titles.count, case .string(let t) = titles[i] { return "\(ValueText.describe(v)) (\(t))" }
                return ValueText.describe(v)
            }
        }
        switch kinds[s.type] ?? "" {
        case "toggle":
            if s["TrueValue"] == nil && s["FalseValue"] == nil { return ["type boolean"] }
            return choices([s["TrueValue"] ?? .bool(true), s["FalseValue"] ?? .bool(false)], [])
        case "slider":
            guard let lo = s["MinimumValue"], let hi = s["MaximumValue"] else { return ["type number"] }
            return ["range \(ValueText.bare(lo)) \(ValueText.bare(hi))"]
        case "multiValue", "radioGroup", "titleValue":
            guard case .array(let values)? = s["Values"] else { return ["type any"] }
            return choices(values, s["Titles"]?.arrayValue ?? [])
        case "textField": return ["type string"]
        case "datePicker": return ["type date"]
        case "group", "childPane", "button": return ["none (\(s.type) stores no value)"]
        default: return ["type any"]
        }
    }
}
