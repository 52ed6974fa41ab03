import AppHomeSystem
import Preferences
import PropertyList
import SettingsBundle

/// A change the page asks for, as the JSON body of `POST …/values`:
/// `{"key": K, "value": V}`. What `V` means depends on the row: a toggle
/// sends `true`/`false` (stored as its `TrueValue`/`FalseValue`), a slider
/// a number (stored as a real), a text field a string, a multi-value or
/// radio row the index of the chosen entry of its `Values`.
public struct ChangeRequest: Equatable, Sendable {
    public var key: String
    public var value: PlistValue

    /// The largest body accepted (bytes).
    public static let maximumBody = 64 * 1024

    /// - Throws: ``SettingsAppError/badRequest(_:)`` for a body that is not such an object.
    public init(body: [UInt8]) throws(SettingsAppError) {
        guard body.count <= Self.maximumBody else { throw .badRequest("the request body is too large") }
        guard case .dictionary(let d)? = try? PlistCodec.decode(body, format: .json) else {
            throw .badRequest("the request body is not a JSON object")
        }
        try self.init(object: d)
    }

    /// The change a JSON object already decoded names (its `key` and `value`;
    /// a WebSocket message is one, with more members).
    public init(object d: [PlistKey: PlistValue]) throws(SettingsAppError) {
        guard case .string(let key)? = d["key"], !key.isEmpty else { throw .badRequest("the request names no key") }
        guard let value = d["value"] else { throw .badRequest("the request has no value") }
        self.key = key
        self.value = value
    }

    public init(key: String, value: PlistValue) {
        self.key = key
        self.value = value
    }

    /// The value to store for this request on `row`.
    ///
    /// - Throws: ``SettingsAppError/badRequest(_:)`` when the value does not fit the kind of row.
    public func storedValue(for row: Specifier) throws(SettingsAppError) -> PlistValue {
        switch row.type {
        case "PSToggleSwitchSpecifier":
            guard case .bool(let on) = value else { throw .badRequest("a switch takes true or false") }
            return (on ? row["TrueValue"] : row["FalseValue"]) ?? .bool(on)
        case "PSSliderSpecifier":
            switch value {
            case .integer(let i): return .real(Double(i))
            case .real(let d) where d.isFinite: return .real(d)
            default: throw .badRequest("a slider takes a number")
            }
        case "PSTextFieldSpecifier":
            guard case .string = value else { throw .badRequest("a text field takes a string") }
            return value
        case "PSMultiValueSpecifier", "PSRadioGroupSpecifier":
            guard case .integer(let i) = value, case .array(let values)? = row["Values"], i >= 0, i < values.count else {
                throw .badRequest("no such choice for \(key)")
            }
            return values[Int(i)]
        default:
            throw .badRequest("\(key) cannot be changed here")
        }
    }
}

/// What the Settings app failed to do, with the HTTP status it answers.
public enum SettingsAppError: Error, Equatable, CustomStringConvertible {
    /// 400: a request the page would not make.
    case badRequest(String)
    /// 404: no such app, page or file.
    case notFound(String)
    /// 409: the key is managed by the administrator.
    case managed(String)
    /// 422: the write policy refused the value (the SB7xx reason), nothing written.
    case refused(String)
    /// 500: the domain could not be read or written.
    case failed(String)

    public var status: Int {
        switch self {
        case .badRequest: return 400
        case .notFound: return 404
        case .managed: return 409
        case .refused: return 422
        case .failed: return 500
        }
    }

    public var description: String {
        switch self {
        case .badRequest(let m), .notFound(let m), .managed(let m), .refused(let m), .failed(let m): return m
        }
    }
}

/// Reads and changes apps' settings through the one commit path: the store
/// `defaults` itself uses (prefsd's when it answers, else the files with
/// the managed layer and the settings schemas as write policy).
public struct SettingsEditor {
    public let store: PreferenceStore
    public let managed: ManagedPreferences
    public let idiom: Idiom
    /// The bundles' pages as last read (the server keeps one between requests).
    public let cache: SettingsCache
    /// The schemas this editor has used, each taken from ``cache`` once;
    /// the store's write policy should take its validators from here too
    /// (``RequestSchemas/validators``).
    public let schemas: RequestSchemas

    /// - Parameters:
    ///   - schemas: the schemas of this request, shared with the store's write
    ///     policy; by default a new set on `cache`.
    public init(store: PreferenceStore, managed: ManagedPreferences, idiom: Idiom = .phone, cache: SettingsCache = SettingsCache(),
                schemas: RequestSchemas? = nil) {
        self.store = store
        self.managed = managed
        self.idiom = idiom
        self.cache = cache
        self.schemas = schemas ?? RequestSchemas(cache: cache)
    }

    /// The domain `app`'s bundle keeps its values in (``InstalledApp/domain(idiom:)``, from the cached Root page).
    public func domain(of app: InstalledApp) -> Domain {
        domain(of: app, schema: app.settingsBundle.map { schemas.schema($0, idiom: idiom) })
    }

    func domain(of app: InstalledApp, schema: BundleSchema?) -> Domain {
        if let group = schema?.groupContainerIdentifier, app.groups.contains(group) { return .named(group) }
        return .named(app.id)
    }

    /// The page document of `app` for `languages`.
    public func document(_ app: InstalledApp, languages: [String]) throws(SettingsAppError) -> PageDocument {
        guard let bundle = app.settingsBundle else { throw .notFound("\(app.id) has no Settings.bundle") }
        let domain = domain(of: app)
        let stored: [PlistKey: PlistValue]
        do { stored = try store.read(domain, scope: .anyHost) ?? [:] } catch { throw .failed(error.description) }
        return PageDocument(app: app, bundle: bundle, idiom: idiom, stored: stored,
                            forced: managed.forcedValues(in: domain), languages: languages, cache: cache)
    }

    /// Writes one value as `defaults write` would, after checking that the
    /// bundle declares the key on a row that can change it.
    ///
    /// - Returns: the value now stored.
    /// - Throws: ``SettingsAppError`` (`.refused` with the schema's reason,
    ///   `.managed` for a forced key); nothing is written then.
    @discardableResult
    public func change(_ app: InstalledApp, _ request: ChangeRequest) throws(SettingsAppError) -> PlistValue {
        guard let bundle = app.settingsBundle else { throw .notFound("\(app.id) has no Settings.bundle") }
        let schema = schemas.schema(bundle, idiom: idiom)
        guard let row = schema.editable[request.key] else { throw .badRequest("\(app.id)'s Settings.bundle has no row for \(request.key)") }
        let domain = domain(of: app, schema: schema)
        if managed.forced(in: domain)[PlistKey(request.key)] != nil { throw .managed("Managed by your administrator") }
        let value = try request.storedValue(for: row)
        try commit(domain, keys: [request.key]) { $0[PlistKey(request.key)] = value }
        return value
    }

    /// Sets a key of the raw view: one no row of the bundle declares (a
    /// declared key is changed on its row, as the schema says), to a scalar
    /// of the type named, as `defaults write KEY -TYPE TEXT` would.
    ///
    /// - Parameters:
    ///   - type: `string`, `integer`, `float` or `boolean` (the names `defaults read-type` prints).
    /// - Returns: the value now stored.
    @discardableResult
    public func setRaw(_ app: InstalledApp, key: String, type: String, text: String) throws(SettingsAppError) -> PlistValue {
        guard let bundle = app.settingsBundle else { throw .notFound("\(app.id) has no Settings.bundle") }
        guard !key.isEmpty else { throw .badRequest("the request names no key") }
        let schema = schemas.schema(bundle, idiom: idiom)
        if schema.editable[key] != nil {
            throw .badRequest("\(key) is declared by the Settings.bundle: change it on its row")
        }
        let domain = domain(of: app, schema: schema)
        if managed.forced(in: domain)[PlistKey(key)] != nil { throw .managed("Managed by your administrator") }
        let value: PlistValue
        switch type {
        case "string": value = .string(text)
        case "integer":
            guard let i = Int64(text.trimmingSpaces) else { throw .badRequest("\"\(text)\" is not an integer") }
            value = .integer(Int128(i))
        case "float":
            guard let d = Double(text.trimmingSpaces), d.isFinite else { throw .badRequest("\"\(text)\" is not a number") }
            value = .real(d)
        case "boolean":
            switch text.trimmingSpaces.lowercased() {
            case "yes", "true", "1": value = .bool(true)
            case "no", "false", "0": value = .bool(false)
            default: throw .badRequest("\"\(text)\" is not a boolean (YES or NO)")
            }
        default: throw .badRequest("the raw view sets strings, integers, floats and booleans, not \(type)")
        }
        try commit(domain, keys: [key]) { $0[PlistKey(key)] = value }
        return value
    }

    /// "Reset to defaults": removes every key the bundle's rows declare
    /// (the registered defaults show again); managed keys stay as forced.
    ///
    /// - Returns: the keys removed.
    @discardableResult
    public func reset(_ app: InstalledApp) throws(SettingsAppError) -> [String] {
        guard let bundle = app.settingsBundle else { throw .notFound("\(app.id) has no Settings.bundle") }
        let schema = schemas.schema(bundle, idiom: idiom)
        let domain = domain(of: app, schema: schema)
        let forced = managed.forced(in: domain)
        let keys = schema.editable.keys
            .filter { forced[PlistKey($0)] == nil }.sorted()
        var removed: [String] = []
        try commit(domain, keys: []) { contents in
            for k in keys where contents.removeValue(forKey: PlistKey(k)) != nil { removed.append(k) }
        }
        return removed
    }

    func commit(_ domain: Domain, keys: [String], _ change: (inout [PlistKey: PlistValue]) -> Void) throws(SettingsAppError) {
        do {
            _ = try store.commit(domain, scope: .anyHost, options: WriteOptions(force: false, idiom: idiom.rawValue, checkedKeys: keys)) {
                change(&$0)
            }
        } catch let error as PreferencesError {
            switch error {
            case .policyViolation(let message):
                // The first line is the rule's message and its SB code; the
                // second speaks of `--force`, which the page does not offer.
                let reason = String(message.split(separator: "\n", maxSplits: 1).first ?? Substring(message))
                if reason.contains(" is managed by ") { throw .managed("Managed by your administrator") }
                throw .refused(reason)
            default:
                throw .failed(error.description)
            }
        } catch {
            throw .failed("\(error)")
        }
    }
}
