import PropertyList

/// The result of linting one bundle.
public struct LintReport: Sendable, Equatable {
    /// Every finding, in the order found (files in walk order).
    public var findings: [Finding]

    /// The findings with warnings raised to errors, as `--strict` asks.
    public func strict() -> LintReport {
        LintReport(findings: findings.map { f in
            var f = f
            if f.severity == .warning { f.severity = .error }
            return f
        })
    }

    public func count(_ severity: Severity) -> Int { findings.filter { $0.severity == severity }.count }
    public var hasErrors: Bool { findings.contains { $0.severity == .error } }
}

/// Checks a settings bundle against a ``Schema`` and reports every problem.
///
/// Both idioms are walked (a `Root~ipad.plist` is linted as well as
/// `Root.plist`); a page reached on both is checked once. Nothing stops at
/// the first problem.
public struct Linter: Sendable {
    public var schema: Schema
    public var profile: Profile

    public init(schema: Schema = .builtIn, profile: Profile = .apple) {
        self.schema = schema
        self.profile = profile
    }

    /// Lints `bundle` for every idiom in `idioms`.
    public func lint(_ bundle: SettingsBundle, idioms: [Idiom] = Idiom.allCases) -> LintReport {
        var findings: [Finding] = []
        var seen: Set<Finding> = []
        var checkedPages: Set<String> = []
        var visited: Set<String> = []
        var pagesByTable: [String: [Page]] = [:]
        var tableOrder: [String] = []
        var registeredByIdiom: [(Idiom, [String: Specifier])] = []
        func add(_ list: [Finding]) {
            for f in list where seen.insert(f).inserted { findings.append(f) }
        }
        for idiom in idioms {
            var walk = PageWalk(bundle: bundle, idiom: idiom, schema: schema, profile: profile)
            walk.checkDuplicates = true
            walk.run()
            add(walk.findings)
            visited.formUnion(walk.visited)
            let rootGroup = walk.pages.first.flatMap { $0.contents["ApplicationGroupContainerIdentifier"] }
            for (n, page) in walk.pages.enumerated() where checkedPages.insert(page.file).inserted {
                var checker = PageChecker(schema: schema, profile: profile, bundle: bundle, page: page)
                checker.check(isChild: n > 0, rootGroup: rootGroup)
                add(checker.findings)
                if let t = page.stringsTable {
                    if pagesByTable[t] == nil { tableOrder.append(t) }
                    pagesByTable[t, default: []].append(page)
                }
            }
            add(crossPage(walk.pages, idiom: idiom))
            registeredByIdiom.append((idiom, Registration.rows(walk.pages, idiom: idiom, schema: schema, profile: profile)))
        }
        if registeredByIdiom.count == 2 { add(compareIdioms(registeredByIdiom[0], registeredByIdiom[1])) }
        // Variants without a base page.
        for name in bundle.entries() {
            for idiom in Idiom.allCases where name.hasSuffix(idiom.fileSuffix + ".plist") {
                let base = String(name.dropLast(idiom.fileSuffix.count + 6))
                if !bundle.exists(base + ".plist") {
                    add([schema.finding("SB105", file: name, profile: profile, ["file": name, "base": base, "idiom": idiom.rawValue])])
                }
            }
        }
        // Page files nothing links to (variants of an idiom not linted are not looked at).
        let skipped = Idiom.allCases.filter { !idioms.contains($0) }.map { $0.fileSuffix + ".plist" }
        for name in bundle.entries() where name.hasSuffix(".plist") && !visited.contains(name) && !skipped.contains(where: { name.hasSuffix($0) }) {
            add([schema.finding("SB108", file: name, profile: profile, ["file": name])])
        }
        add(LocalizationChecker(schema: schema, profile: profile, bundle: bundle).check(tables: tableOrder, pages: pagesByTable))
        return LintReport(findings: findings)
    }

    /// Keys whose default differs in type between the idioms' variants
    /// (SB603), and keys that only a device variant declares (SB604).
    func compareIdioms(_ a: (Idiom, [String: Specifier]), _ b: (Idiom, [String: Specifier])) -> [Finding] {
        var out: [Finding] = []
        for k in Set(a.1.keys).union(b.1.keys).sorted() {
            switch (a.1[k], b.1[k]) {
            case let (x?, y?):
                let tx = ValueText.typeName(x["DefaultValue"]!), ty = ValueText.typeName(y["DefaultValue"]!)
                if tx != ty && !(ValueText.number(x["DefaultValue"]!) != nil && ValueText.number(y["DefaultValue"]!) != nil) {
                    out.append(schema.finding("SB603", file: y.file, location: y.location, profile: profile,
                                              ["k": k, "type1": tx, "variantA": x.file, "type2": ty, "variantB": y.file]))
                }
            case let (x?, nil) where x.file.contains("~"):
                out.append(schema.finding("SB604", file: x.file, location: x.location, profile: profile, ["k": k, "variant": x.file, "idiom": a.0.rawValue]))
            case let (nil, y?) where y.file.contains("~"):
                out.append(schema.finding("SB604", file: y.file, location: y.location, profile: profile, ["k": k, "variant": y.file, "idiom": b.0.rawValue]))
            default: break
            }
        }
        return out
    }

    /// Keys used more than once: on one page (SB601), across pages with
    /// different defaults (SB602), and registration order conflicts (SB605).
    func crossPage(_ pages: [Page], idiom: Idiom) -> [Finding] {
        var out: [Finding] = []
        for page in pages {
            var byKey: [String: [Int]] = [:]
            var order: [String] = []
            for s in page.specifiers {
                guard let k = s.key, let t = schema.types[s.type], t.key != "unused" else { continue }
                if byKey[k] == nil { order.append(k) }
                byKey[k, default: []].append(s.index)
            }
            for k in order where byKey[k]!.count > 1 {
                let idx = byKey[k]!
                let whereText = "PreferenceSpecifiers[\(idx[0])]" + idx.dropFirst().map { ", [\($0)]" }.joined()
                out.append(schema.finding("SB601", file: page.file, profile: profile,
                                          ["k": k, "n": "\(idx.count)", "file": page.file, "where": whereText]))
            }
        }
        var firstSeen: [String: Specifier] = [:]
        var registered: [PlistKey: PlistValue] = [:]
        for page in pages {
            for s in page.specifiers where s.isShown(on: idiom) {
                guard let k = s.key, let kind = schema.types[s.type]?.kind, Registration.editableKinds(profile).contains(kind),
                      let dv = s["DefaultValue"] else { continue }
                if let first = firstSeen[k], first.file != s.file, let fv = first["DefaultValue"], !ValueText.same(fv, dv) {
                    out.append(schema.finding("SB602", file: s.file, location: s.location, profile: profile,
                                              ["k": k, "fileA": first.file, "TypeA": first.type, "fileB": s.file, "TypeB": s.type]))
                }
                if let old = registered[k], !ValueText.same(old, dv) {
                    out.append(schema.finding("SB605", file: s.file, location: s.location, profile: profile,
                                              ["k": k, "v1": ValueText.describe(old), "v2": ValueText.describe(dv)]))
                }
                if firstSeen[k] == nil { firstSeen[k] = s }
                registered[k] = dv
            }
        }
        return out
    }
}
