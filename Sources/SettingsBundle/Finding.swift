import PropertyList

/// One problem the linter or the write validator found.
public struct Finding: Sendable, Equatable, Hashable {
    /// The catalogue id, e.g. `SB413`; stable across versions.
    public var rule: String
    public var severity: Severity
    /// The file, relative to the bundle (`Root.plist`, `en.lproj/Root.strings`); empty for write checks.
    public var file: String
    /// Where in the file: `PreferenceSpecifiers[3] (Key "sort")`, or empty.
    public var location: String
    /// The plain-words message.
    public var message: String

    public init(rule: String, severity: Severity, file: String, location: String, message: String) {
        self.rule = rule
        self.severity = severity
        self.file = file
        self.location = location
        self.message = message
    }

    /// `FILE: LOCATION: severity: message [RULE]`, the reference's format.
    public var text: String {
        var head = ""
        if !file.isEmpty { head += file + ": " }
        if !location.isEmpty { head += location + ": " }
        return "\(head)\(severity.rawValue): \(message) [\(rule)]"
    }

    /// The finding as a JSON object on one line.
    public var json: String {
        let q = PlistCodec.jsonStringLiteral
        return "{\"rule\": \(q(rule)), \"severity\": \(q(severity.rawValue)), \"file\": \(q(file)), \"location\": \(q(location)), \"message\": \(q(message))}"
    }
}

extension Schema {
    /// Builds a finding for `ruleID`, filling the template's `{name}` holes from `args`.
    ///
    /// The profile may lower the rule's severity (SB410 is info under `iask`).
    func finding(_ ruleID: String, variant: String? = nil, file: String, location: String = "",
                 profile: Profile = .apple, _ args: [String: String]) -> Finding {
        guard let rule = rules[ruleID] else {
            return Finding(rule: ruleID, severity: .error, file: file, location: location, message: "rule \(ruleID) is missing from the schema")
        }
        var severity = rule.profileSeverity[profile.rawValue] ?? rule.severity
        var template = rule.template
        if let variant, let v = rule.variants[variant] { severity = v.severity; template = v.template }
        return Finding(rule: ruleID, severity: severity, file: file, location: location, message: Self.fill(template, args))
    }

    static func fill(_ template: String, _ args: [String: String]) -> String {
        var out = ""
        var rest = template[...]
        while let open = rest.firstIndex(of: "{") {
            out += rest[..<open]
            guard let close = rest[open...].firstIndex(of: "}") else { break }
            let name = String(rest[rest.index(after: open)..<close])
            out += args[name] ?? "{\(name)}"
            rest = rest[rest.index(after: close)...]
        }
        return out + rest
    }
}

/// How values and types are named in messages.
public enum ValueText {
    /// `"x"` for a string, `1`, `0.5`, `true`, `(a, b)` for an array.
    public static func describe(_ v: PlistValue) -> String {
        switch v {
        case .string(let s): return "\"\(s)\""
        default: return bare(v)
        }
    }

    /// Like ``describe(_:)`` with strings unquoted, for lists (`[a, b]`).
    public static func bare(_ v: PlistValue) -> String {
        switch v {
        case .string(let s): return s
        case .integer(let i): return "\(i)"
        case .real(let d): return "\(d)"
        case .bool(let b): return b ? "true" : "false"
        case .date(let d): return CivilTime(d)?.iso8601 ?? "\(d.secondsSinceReferenceDate)"
        case .data(let bytes): return "<\(bytes.count) bytes>"
        case .array(let items): return "(" + items.map(bare).joined(separator: ", ") + ")"
        case .dictionary(let d): return "{" + d.keys.sorted().map { "\($0) = \(bare(d[$0]!))" }.joined(separator: "; ") + "}"
        case .uid(let n): return "UID \(n)"
        }
    }

    /// `string`, `integer`, `real`, `Boolean`, `date`, `data`, `array`, `dictionary`.
    public static func typeName(_ v: PlistValue) -> String {
        switch v {
        case .string: return "string"
        case .integer: return "integer"
        case .real: return "real"
        case .bool: return "Boolean"
        case .date: return "date"
        case .data: return "data"
        case .array: return "array"
        case .dictionary: return "dictionary"
        case .uid: return "UID"
        }
    }

    /// The type name with its article: `a string`, `an integer`, `an array`.
    public static func withArticle(_ v: PlistValue) -> String {
        let name = typeName(v)
        return (["integer", "array"].contains(name) ? "an " : "a ") + name
    }

    /// The phrase for a schema value type: `a string`, `a number`, ….
    static func expected(_ type: String) -> String {
        switch type {
        case "integer": return "an integer"
        case "array": return "an array"
        case "boolean": return "a Boolean"
        case "any": return "any value"
        default: return "a \(type)"
        }
    }

    /// Whether `v` is of schema value type `type`.
    static func matches(_ v: PlistValue, _ type: String) -> Bool {
        switch (type, v) {
        case ("any", _): return true
        case ("string", .string), ("integer", .integer), ("real", .real), ("boolean", .bool), ("date", .date),
             ("data", .data), ("array", .array), ("dictionary", .dictionary): return true
        case ("number", .integer), ("number", .real): return true
        case ("scalar", .array), ("scalar", .dictionary): return false
        case ("scalar", _): return true
        default: return false
        }
    }

    /// The number in `v`, for integers and reals only (a Boolean is not a number).
    static func number(_ v: PlistValue) -> Double? {
        switch v {
        // Through Int64 when it fits: Double(Int128) is the standard
        // library's generic conversion, unspecialized (30,000 instructions
        // on a validated write's first call).
        case .integer(let i):
            if i >= Int128(Int64.min) && i <= Int128(Int64.max) { return Double(Int64(truncatingIfNeeded: i)) }
            return Double(i)
        case .real(let d): return d
        default: return nil
        }
    }

    /// Type-aware equality: the same type and value, except that an integer
    /// equals a real of the same value. `true` never equals `1`.
    static func same(_ a: PlistValue, _ b: PlistValue) -> Bool {
        if let x = number(a), let y = number(b) { return x == y }
        return a == b
    }

    /// NSNumber's equality: also `true == 1`, `false == 0`.
    static func coercedEqual(_ a: PlistValue, _ b: PlistValue) -> Bool {
        func n(_ v: PlistValue) -> Double? {
            if case .bool(let b) = v { return b ? 1 : 0 }
            return number(v)
        }
        if let x = n(a), let y = n(b) { return x == y }
        return a == b
    }
}
