import PropertyList

/// The checks of one page and its rows: root keys, common keys, every key
/// against the schema, and each type's semantics.
struct PageChecker {
    let schema: Schema
    let profile: Profile
    let bundle: SettingsBundle
    let page: Page
    var findings: [Finding] = []

    init(schema: Schema, profile: Profile, bundle: SettingsBundle, page: Page) {
        self.schema = schema
        self.profile = profile
        self.bundle = bundle
        self.page = page
    }

    mutating func report(_ rule: String, variant: String? = nil, location: String = "", _ args: [String: String]) {
        findings.append(schema.finding(rule, variant: variant, file: page.file, location: location, profile: profile, args))
    }

    mutating func check(isChild: Bool, rootGroup: PlistValue?) {
        let contents = page.contents
        for name in contents.sortedKeyStrings {
            let value = contents[name]!
            guard let spec = schema.rootKeys[name], spec.profile == .apple || profile == .iask else {
                report("SB202", ["k": name])
                continue
            }
            if let rule = spec.ignoredRule { report(rule, ["k": name]) }
            if !ValueText.matches(value, spec.type) {
                report(spec.typeRule ?? "SB307", ["k": name, "type": ValueText.typeName(value), "expected": ValueText.expected(spec.type),
                                                 "v": ValueText.describe(value)])
            }
        }
        for (name, spec) in schema.rootKeys where spec.required && contents[name] == nil {
            report(spec.requiredRule ?? "SB306", ["k": name, "Type": "page"])
        }
        if case .string(let g)? = contents["ApplicationGroupContainerIdentifier"], !g.hasPrefix("group.") {
            report("SB205", ["v": ValueText.describe(.string(g))])
        }
        if isChild, let mine = contents["ApplicationGroupContainerIdentifier"], mine != rootGroup {
            report("SB206", ["file": page.file, "a": ValueText.bare(mine), "b": rootGroup.map(ValueText.bare) ?? ""])
        }
        guard case .array(let rows)? = contents["PreferenceSpecifiers"] else { return }
        for (i, row) in rows.enumerated() where row.dictionaryValue == nil {
            report("SB300", location: "PreferenceSpecifiers[\(i)]", ["i": "\(i)", "type": ValueText.typeName(row), "aType": ValueText.withArticle(row)])
        }
        if isChild, let first = page.specifiers.first, first.index == 0,
           !["group", "radioGroup"].contains(schema.types[first.type]?.kind ?? "") {
            report("SB407", ["file": page.file])
        }
        for s in page.specifiers { checkSpecifier(s) }
        // A group hidden on an idiom does not hide the rows after it (InAppSettingsKit PR #384).
        for (n, s) in page.specifiers.enumerated() where schema.types[s.type]?.kind == "group" {
            guard case .array(let idioms)? = s["SupportedUserInterfaceIdioms"], !idioms.isEmpty,
                  n + 1 < page.specifiers.count, page.specifiers[n + 1]["SupportedUserInterfaceIdioms"] == nil else { continue }
            report("SB308", variant: "group", location: s.location,
                   ["title": s.string("Title") ?? "", "idioms": idioms.map(ValueText.bare).joined(separator: ", ")])
        }
    }

    /// An InAppSettingsKit type under the `apple` profile: the row is not
    /// shown (SB303), and each key that is unknown for the type or read
    /// only by InAppSettingsKit is still named (SB304), as for the
    /// standard types, so that one lint run lists everything to fix.
    private mutating func checkKeysOfUnshownType(_ s: Specifier, _ type: Schema.TypeSpec, _ typeName: String) {
        for name in s.entries.sortedKeyStrings where name != "Type" && name != "Key" {
            if let spec = type.keys[name] ?? schema.commonKeys[name], spec.profile == .apple { continue }
            report("SB304", location: s.location, ["k": name, "Type": typeName])
        }
    }

    mutating func checkSpecifier(_ s: Specifier) {
        let loc = s.location
        guard let typeValue = s["Type"] else {
            report("SB309", location: loc, [:])
            return
        }
        guard case .string(let typeName) = typeValue else {
            report("SB307", location: loc, ["k": "Type", "expected": "a string", "type": ValueText.typeName(typeValue)])
            return
        }
        guard let type = schema.types[typeName], type.profile == .apple || profile == .iask else {
            report("SB303", location: loc, ["t": typeName])
            if let iaskType = schema.types[typeName] { checkKeysOfUnshownType(s, iaskType, typeName) }
            return
        }
        let keyText = s.key ?? ""
        var args = ["Type": typeName, "Key": keyText]
        // Key.
        if let key = s["Key"] {
            if case .string(let k) = key, !k.isEmpty {
                if type.key == "unused" && profile == .apple { report("SB305", location: loc, args) }
            } else {
                report("SB302", location: loc, args)
            }
        } else if type.key == "required" {
            report("SB301", location: loc, args)
        }
        // Every other key against the schema.
        for name in s.entries.sortedKeyStrings where name != "Type" && name != "Key" {
            let value = s[name]!
            guard let spec = type.keys[name] ?? schema.commonKeys[name], spec.profile == .apple || profile == .iask else {
                report("SB304", location: loc, ["k": name, "Type": typeName])
                continue
            }
            args["k"] = name
            if !ValueText.matches(value, spec.type) {
                args["expected"] = ValueText.expected(spec.type)
                args["type"] = ValueText.typeName(value)
                args["aType"] = ValueText.withArticle(value)
                args["v"] = ValueText.describe(value)
                report(spec.typeRule ?? "SB307", location: loc, args)
                continue
            }
            if let allowed = spec.allowedValues(profile) {
                for item in value.arrayValue ?? [value] {
                    if case .string(let v) = item, allowed.contains(v) { continue }
                    var a = args
                    a["v"] = ValueText.bare(item)
                    a["list"] = allowed.joined(separator: ", ")
                    // A key without its own rule falls back to SB307 ("must be one of …").
                    a["expected"] = "one of " + allowed.joined(separator: ", ")
                    a["type"] = ValueText.describe(item)
                    report(spec.valuesRule ?? "SB307", location: loc, a)
                }
            }
        }
        // Required keys.
        let replacesFile = profile == .iask && type.keys.contains { $0.value.replacesFile && s[$0.key] != nil }
        for name in type.keys.keys.sorted() {
            let spec = type.keys[name]!
            guard spec.required, s[name] == nil, spec.profile == .apple || profile == .iask else { continue }
            if name == "File" && replacesFile { continue }
            var a = args
            a["k"] = name
            a["title"] = s.string("Title") ?? ""
            report(spec.requiredRule ?? "SB306", location: loc, a)
        }
        switch type.kind {
        case "toggle": checkToggle(s, loc)
        case "slider": checkSlider(s, loc)
        case "multiValue", "radioGroup": checkChoices(s, loc, typeName)
        case "titleValue": checkTitleValue(s, loc)
        case "textField":
            if s["DefaultValue"] == nil, let k = s.key { report("SB606", location: loc, ["k": k]) }
        default: break
        }
    }

    mutating func checkToggle(_ s: Specifier, _ loc: String) {
        let key = s.key ?? ""
        let tv = s["TrueValue"], fv = s["FalseValue"]
        var scalarProblem = false
        for (name, v) in [("TrueValue", tv), ("FalseValue", fv)] {
            if let v, v.arrayValue != nil || v.dictionaryValue != nil {
                report("SB425", location: loc, ["Key": key, "k": name])
                scalarProblem = true
            }
        }
        if scalarProblem { return }
        if (tv == nil) != (fv == nil) {
            report("SB426", location: loc, ["Key": key, "k": tv != nil ? "TrueValue" : "FalseValue", "other": tv != nil ? "NO" : "YES"])
        }
        if let tv, let fv {
            if ValueText.same(tv, fv) {
                report("SB424", location: loc, ["Key": key, "v": ValueText.describe(tv)])
            } else if ValueText.typeName(tv) != ValueText.typeName(fv) {
                report("SB427", location: loc, ["Key": key, "t1": ValueText.typeName(tv), "t2": ValueText.typeName(fv)])
            }
        }
        guard let dv = s["DefaultValue"] else { return }
        let t = tv ?? .bool(true), f = fv ?? .bool(false)
        if ValueText.same(dv, t) || ValueText.same(dv, f) { return }
        if tv == nil && fv == nil {
            switch dv {
            case .string, .integer, .real:
                report("SB421", location: loc, ["Key": key, "v": ValueText.describe(dv), "type": ValueText.typeName(dv), "aType": ValueText.withArticle(dv),
                                                "bool": Registration.boolValue(dv) ? "YES" : "NO"])
                return
            default: break
            }
        }
        if ValueText.coercedEqual(dv, t) || ValueText.coercedEqual(dv, f) {
            report("SB422", location: loc, ["Key": key, "v": ValueText.describe(dv)])
        } else {
            report("SB423", location: loc, ["Key": key, "v": ValueText.describe(dv), "t": ValueText.describe(t), "f": ValueText.describe(f)])
        }
    }

    mutating func checkSlider(_ s: Specifier, _ loc: String) {
        let key = s.key ?? ""
        for name in ["MinimumValueImage", "MaximumValueImage"] {
            if case .string(let f)? = s[name], !bundle.exists(f) { report("SB453", location: loc, ["Key": key, "k": name, "f": f]) }
        }
        guard let lo = s["MinimumValue"].flatMap(ValueText.number), let hi = s["MaximumValue"].flatMap(ValueText.number) else { return }
        if lo > hi {
            report("SB452", location: loc, ["Key": key, "a": ValueText.bare(s["MinimumValue"]!), "b": ValueText.bare(s["MaximumValue"]!)])
            return
        }
        if lo == hi { report("SB452", variant: "equal", location: loc, ["Key": key]) }
        if let dv = s["DefaultValue"], let d = ValueText.number(dv), !(lo...hi).contains(d) {
            report("SB454", location: loc, ["Key": key, "v": ValueText.bare(dv), "min": ValueText.bare(s["MinimumValue"]!),
                                            "max": ValueText.bare(s["MaximumValue"]!)])
        }
    }

    mutating func checkChoices(_ s: Specifier, _ loc: String, _ typeName: String) {
        let base = ["Type": typeName, "Key": s.key ?? ""]
        func r(_ rule: String, variant: String? = nil, _ extra: [String: String]) {
            report(rule, variant: variant, location: loc, base.merging(extra) { _, n in n })
        }
        guard case .array(let values)? = s["Values"] else { return }
        if values.isEmpty { r("SB415", [:]) }
        if case .array(let titles)? = s["Titles"] {
            if titles.count != values.count { r("SB411", ["n": "\(values.count)", "m": "\(titles.count)"]) }
            for (i, t) in titles.enumerated() {
                if case .string = t { continue }
                r("SB416", ["i": "\(i)", "type": ValueText.typeName(t), "aType": ValueText.withArticle(t)])
            }
        }
        if case .array(let short)? = s["ShortTitles"], short.count != values.count {
            r("SB412", ["n": "\(values.count)", "m": "\(short.count)"])
        }
        var reported: [PlistValue] = []
        for (i, v) in values.enumerated() where values[..<i].contains(where: { ValueText.same($0, v) }) {
            if !reported.contains(where: { ValueText.same($0, v) }) {
                reported.append(v)
                r("SB414", ["v": ValueText.describe(v)])
            }
        }
        var families: [String] = []
        for v in values {
            let family = ValueText.number(v) != nil ? "number" : ValueText.typeName(v)
            if !families.contains(family) { families.append(family) }
        }
        if families.count > 1 { r("SB417", ["types": families.joined(separator: ", ")]) }
        guard let dv = s["DefaultValue"], !values.isEmpty else { return }
        if values.contains(where: { ValueText.same($0, dv) }) { return }
        let args = ["v": ValueText.describe(dv), "type": ValueText.typeName(dv)]
        if let match = values.first(where: { ValueText.coercedEqual($0, dv) }) {
            r("SB413", variant: "coercion", args.merging(["match": ValueText.describe(match)]) { _, n in n })
        } else {
            r("SB413", args.merging(["values": values.map(ValueText.bare).joined(separator: ", ")]) { _, n in n })
        }
    }

    mutating func checkTitleValue(_ s: Specifier, _ loc: String) {
        let key = s.key ?? ""
        let values = s["Values"]?.arrayValue, titles = s["Titles"]?.arrayValue
        if (values == nil) != (titles == nil) || (values != nil && values!.count != titles!.count) {
            report("SB441", location: loc, ["Key": key])
        }
        if let values, let dv = s["DefaultValue"], !values.contains(where: { ValueText.same($0, dv) }) {
            report("SB440", location: loc, ["Key": key, "v": ValueText.describe(dv)])
        }
    }
}
