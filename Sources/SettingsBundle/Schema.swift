import PropertyList

/// How strictly InAppSettingsKit's extras are treated.
public enum Profile: String, Sendable, CaseIterable {
    /// Apple's documented format only; InAppSettingsKit types and keys are warned about.
    case apple
    /// Apple's format plus InAppSettingsKit's extra types and keys.
    case iask
}

/// A finding's weight.
public enum Severity: String, Sendable, Comparable, CaseIterable {
    case info, warning, error

    public static func < (a: Severity, b: Severity) -> Bool {
        let order: [Severity] = [.info, .warning, .error]
        return order.firstIndex(of: a)! < order.firstIndex(of: b)!
    }
}

/// The machine-readable description of the settings-bundle format, loaded
/// from `Schemas/settings-bundle.schema.json`.
///
/// The linter and the write validator take every type, key, value type,
/// required flag, allowed value, profile and message from here, so a new
/// key or specifier type is a change to that file, not to code. The file
/// is embedded in the binary at build time; ``load(_:)`` reads another one
/// (`defaults lint --schema FILE`).
public struct Schema: Sendable {
    /// The one format version this code reads.
    public static let supportedVersion = 1

    /// What one key of a page or a specifier may hold.
    public struct KeySpec: Sendable, Equatable {
        /// `string`, `integer`, `real`, `number`, `boolean`, `date`, `data`,
        /// `array`, `dictionary`, `scalar` or `any`.
        public var type: String
        public var required: Bool
        public var requiredRule: String?
        public var typeRule: String?
        /// The values allowed under every profile, when the key is an enumeration.
        public var values: [String]?
        /// Extra allowed values per profile.
        public var profileValues: [String: [String]]
        public var valuesRule: String?
        /// Looked up in the page's strings table.
        public var localizable: Bool
        /// The profile that introduces the key (`apple` for documented keys).
        public var profile: Profile
        /// A rule to report whenever the key is present (a key Settings ignores).
        public var ignoredRule: String?
        /// On a child pane, present instead of `File` (InAppSettingsKit).
        public var replacesFile: Bool

        /// The values allowed under `profile`, or `nil` when any value is.
        public func allowedValues(_ p: Profile) -> [String]? {
            guard let values else { return nil }
            return p == .apple ? values : values + (profileValues[p.rawValue] ?? [])
        }
    }

    /// One specifier type.
    public struct TypeSpec: Sendable, Equatable {
        public var name: String
        /// What the type does: `group`, `textField`, `toggle`, `slider`,
        /// `titleValue`, `multiValue`, `radioGroup`, `childPane`, `button`,
        /// `datePicker`, `custom` or `list`.
        public var kind: String
        /// `required`, `optional` or `unused`.
        public var key: String
        public var profile: Profile
        public var keys: [String: KeySpec]
    }

    /// One rule of the catalogue.
    public struct Rule: Sendable, Equatable {
        public var id: String
        public var severity: Severity
        public var template: String
        /// `lint` or `write`.
        public var phase: String
        public var profileSeverity: [String: Severity]
        /// Named variants with their own severity and template (SB413's coercion warning).
        public var variants: [String: (severity: Severity, template: String)]

        public static func == (a: Rule, b: Rule) -> Bool {
            a.id == b.id && a.severity == b.severity && a.template == b.template && a.phase == b.phase
        }
    }

    public var version: Int
    public var rootKeys: [String: KeySpec]
    public var commonKeys: [String: KeySpec]
    public var types: [String: TypeSpec]
    public var rules: [String: Rule]

    /// The schema built into this binary.
    public static let builtIn: Schema = {
        do { return try load(PackageResources.settings_bundle_schema_bplist) } catch {
            fatalError("the built-in settings-bundle schema is invalid: \(error)")
        }
    }()

    /// The built-in schema with only each type's name, kind and Key use:
    /// enough to walk pages and validate writes, at a fraction of the cost
    /// of ``builtIn`` (no keys, no rules).
    public static let builtInKinds: Schema = {
        do { return try load(PackageResources.settings_bundle_kinds_bplist, kindsOnly: true) } catch {
            fatalError("the built-in settings-bundle schema is invalid: \(error)")
        }
    }()

    /// Whether this schema was loaded without keys and rules.
    public private(set) var kindsOnly = false

    /// Reads a schema file: the typed JSON of `Schemas/settings-bundle.schema.json`
    /// or the same content as a binary property list.
    ///
    /// - Parameter kindsOnly: skip keys and rules (see ``builtInKinds``).
    /// - Throws: ``SettingsBundleError/invalidSchema(_:)`` naming what is wrong,
    ///   including a version newer than ``supportedVersion``.
    public static func load(_ bytes: [UInt8], kindsOnly: Bool = false) throws(SettingsBundleError) -> Schema {
        let value: PlistValue
        let format: PlistFormat = PlistCodec.detectFormat(bytes) == .binary ? .binary : .json
        do { value = try PlistCodec.decode(bytes, format: format) } catch { throw .invalidSchema("\(error)") }
        guard let top = value.dictionaryValue else { throw .invalidSchema("the top level is not an object") }
        guard case .string("org.apphome.settings-bundle-schema")? = top["format"] else {
            throw .invalidSchema("\"format\" is not \"org.apphome.settings-bundle-schema\"")
        }
        guard case .integer(let v)? = top["version"] else { throw .invalidSchema("\"version\" is missing") }
        guard v == Int128(supportedVersion) else {
            throw .invalidSchema("version \(v) is not supported (this build reads version \(supportedVersion))")
        }
        func keys(_ name: String, _ v: PlistValue?) throws(SettingsBundleError) -> [String: KeySpec] {
            guard let d = v?.dictionaryValue else { throw .invalidSchema("\"\(name)\" must be an object") }
            var out: [String: KeySpec] = [:]
            for (k, spec) in d.stringEntries { out[k] = try keySpec(spec, "\(name).\(k)") }
            return out
        }
        var schema = Schema(version: Int(v), rootKeys: [:], commonKeys: [:], types: [:], rules: [:])
        schema.kindsOnly = kindsOnly
        guard let types = top["types"]?.dictionaryValue else { throw .invalidSchema("\"types\" must be an object") }
        for (name, t) in types.stringEntries {
            guard let d = t.dictionaryValue, case .string(let kind)? = d["kind"], case .string(let key)? = d["key"] else {
                throw .invalidSchema("types.\(name) needs \"kind\" and \"key\"")
            }
            schema.types[name] = TypeSpec(name: name, kind: kind, key: key, profile: try profile(d["profile"], "types.\(name)"),
                                          keys: kindsOnly ? [:] : try keys("types.\(name).keys", d["keys"] ?? .dictionary([:])))
        }
        if kindsOnly { return schema }
        schema.rootKeys = try keys("rootKeys", top["rootKeys"])
        schema.commonKeys = try keys("commonKeys", top["commonKeys"])
        guard let rules = top["rules"]?.dictionaryValue else { throw .invalidSchema("\"rules\" must be an object") }
        for (id, r) in rules.stringEntries {
            guard let d = r.dictionaryValue, case .string(let template)? = d["template"] else {
                throw .invalidSchema("rules.\(id) needs a \"template\"")
            }
            var rule = Rule(id: id, severity: try severity(d["severity"], "rules.\(id)"), template: template,
                            phase: (d["phase"].flatMap { if case .string(let s) = $0 { s } else { nil } }) ?? "lint",
                            profileSeverity: [:], variants: [:])
            for (p, s) in (d["profileSeverity"]?.dictionaryValue ?? [:]).stringEntries { rule.profileSeverity[p] = try severity(s, "rules.\(id)") }
            for (name, variant) in (d["variants"]?.dictionaryValue ?? [:]).stringEntries {
                guard let vd = variant.dictionaryValue, case .string(let t)? = vd["template"] else {
                    throw .invalidSchema("rules.\(id).variants.\(name) needs a \"template\"")
                }
                rule.variants[name] = (try severity(vd["severity"], "rules.\(id).variants.\(name)"), t)
            }
            schema.rules[id] = rule
        }
        return schema
    }

    private static func severity(_ v: PlistValue?, _ at: String) throws(SettingsBundleError) -> Severity {
        guard case .string(let s)? = v, let sev = Severity(rawValue: s) else { throw .invalidSchema("\(at): \"severity\" must be error, warning or info") }
        return sev
    }

    private static func profile(_ v: PlistValue?, _ at: String) throws(SettingsBundleError) -> Profile {
        guard let v else { return .apple }
        guard case .string(let s) = v, let p = Profile(rawValue: s) else { throw .invalidSchema("\(at): unknown profile") }
        return p
    }

    private static let valueTypes: Set<String> = ["string", "integer", "real", "number", "boolean", "date", "data", "array", "dictionary", "scalar", "any"]

    private static func keySpec(_ v: PlistValue, _ at: String) throws(SettingsBundleError) -> KeySpec {
        guard let d = v.dictionaryValue else { throw .invalidSchema("\(at) must be an object") }
        func string(_ k: String) -> String? { if case .string(let s)? = d[k] { return s }; return nil }
        func bool(_ k: String) -> Bool { if case .bool(let b)? = d[k] { return b }; return false }
        func strings(_ v: PlistValue?) -> [String]? {
            v?.arrayValue?.compactMap { if case .string(let s) = $0 { s } else { nil } }
        }
        guard let type = string("type"), valueTypes.contains(type) else { throw .invalidSchema("\(at): unknown value type") }
        var profileValues: [String: [String]] = [:]
        for (p, list) in (d["profileValues"]?.dictionaryValue ?? [:]).stringEntries { profileValues[p] = strings(list) ?? [] }
        return KeySpec(type: type, required: bool("required"), requiredRule: string("requiredRule"), typeRule: string("typeRule"),
                       values: strings(d["values"]), profileValues: profileValues, valuesRule: string("valuesRule"),
                       localizable: bool("localizable"), profile: try profile(d["profile"], at), ignoredRule: string("ignoredRule"),
                       replacesFile: bool("replacesFile"))
    }

    /// The rules of one phase, sorted by id.
    public func ruleIDs(phase: String) -> [String] {
        rules.values.filter { $0.phase == phase }.map(\.id).sorted()
    }
}

/// The one public error of the module.
public enum SettingsBundleError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A schema file that cannot be used.
    case invalidSchema(String)
    /// The bundle path is not a directory.
    case notABundle(String)

    public var description: String {
        switch self {
        case .invalidSchema(let detail): return "invalid settings-bundle schema: \(detail)"
        case .notABundle(let path): return "\(path) is not a settings bundle directory"
        }
    }
}
