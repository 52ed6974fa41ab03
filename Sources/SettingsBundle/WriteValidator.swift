import PropertyList

/// Checks values against a bundle's schema before they are stored, as
/// `gsettings set` checks a key's type and range.
///
/// Built once per bundle (it walks the pages for one idiom); each
/// ``check(domain:key:value:)`` is a dictionary look-up and a comparison.
public struct WriteValidator: Sendable {
    public let schema: Schema
    /// The row that declares each key, the last one in walk order winning.
    public let declarations: [String: Specifier]

    public init(bundle: SettingsBundle, idiom: Idiom = .phone, profile: Profile = .apple, schema: Schema = .builtIn) {
        self.schema = schema
        var walk = PageWalk(bundle: bundle, idiom: idiom, schema: schema, profile: profile)
        walk.run()
        var table: [String: Specifier] = [:]
        for page in walk.pages {
            for s in page.specifiers where s.isShown(on: idiom) {
                guard let k = s.key, schema.types[s.type] != nil else { continue }
                table[k] = s
            }
        }
        declarations = table
    }

    /// The problem with storing `value` under `key`, or `nil` when it is fine.
    ///
    /// Errors (SB700–SB703, SB706, SB707) mean "do not write"; SB705 is a
    /// warning and SB704 (a key the schema does not know) is info: both may
    /// be written.
    public func check(domain: String, key: String, value: PlistValue) -> Finding {
        check(domain: domain, key: key, value: value) ?? schema.finding("SB704", file: "", ["domain": domain, "key": key])
    }

    /// Like ``check(domain:key:value:)`` but `nil` for a valid value of a known key.
    public func check(domain: String, key: String, value: PlistValue) -> Finding? {
        var args = ["domain": domain, "key": key]
        func f(_ rule: String, _ extra: [String: String] = [:]) -> Finding {
            schema.finding(rule, file: "", args.merging(extra) { _, n in n })
        }
        guard let s = declarations[key] else { return f("SB704") }
        args["Type"] = s.type
        let kind = schema.types[s.type]?.kind ?? ""
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
    public func violations(domain: String, contents: [String: PlistValue]) -> [Finding] {
        contents.keys.sorted().compactMap { k -> Finding? in
            guard let finding: Finding = check(domain: domain, key: k, value: contents[k]!), finding.severity != .info else { return nil }
            return finding
        }
    }
}
