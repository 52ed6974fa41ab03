import AppHomeSystem
import PropertyList

/// The layers NSUserDefaults searches, in order.
public enum DefaultsLayer: String, Sendable, CaseIterable {
    /// Values an administrator forces (``ManagedPreferences``): above every
    /// other layer, the argument domain included.
    case managed
    /// `-Key value` pairs from the command line (`NSArgumentDomain`): volatile.
    case argument
    /// The app's own persistent domain.
    case application
    /// `NSGlobalDomain`, shared by every app.
    case global
    /// Values registered in process (and, later, a Settings.bundle's
    /// `DefaultValue`s): volatile, never written.
    case registration
}

/// A value found by the search list, with the layer it came from: the
/// provenance macOS cannot show.
public struct ResolvedValue: Equatable, Sendable {
    public var value: PlistValue
    public var layer: DefaultsLayer
}

/// A UserDefaults-like view of one app's preferences over a
/// ``PreferenceStore``: reads search managed → argument → application →
/// global → registration; writes go to the application domain through the store, so
/// they are durable when the call returns and never lose another process's
/// update.
public struct UserDefaults: Sendable {
    public let store: PreferenceStore
    public let domain: Domain
    /// The argument domain, from ``argumentDomain(from:)``.
    public var arguments: [PlistKey: PlistValue]
    /// The registration domain.
    public var registered: [PlistKey: PlistValue]
    /// The values forced for this domain (``ManagedPreferences/forcedValues(in:)``).
    public var managed: [PlistKey: PlistValue]

    public init(store: PreferenceStore, domain: Domain, arguments: [PlistKey: PlistValue] = [:], registered: [PlistKey: PlistValue] = [:],
                managed: [PlistKey: PlistValue] = [:]) {
        self.store = store
        self.domain = domain
        self.arguments = arguments
        self.registered = registered
        self.managed = managed
    }

    /// Whether an administrator forces `key` (``managed``): its value is
    /// the managed one whatever is stored, and writes of it are refused.
    public func objectIsForced(forKey key: String) -> Bool {
        managed[key] != nil
    }

    /// Adds `defaults` to the registration domain (later calls win).
    public mutating func register(_ defaults: [PlistKey: PlistValue]) {
        registered.merge(defaults) { _, new in new }
    }

    /// The effective value of `key` and the layer that supplied it, or `nil`.
    ///
    /// - Throws: ``PreferencesError`` when a stored domain cannot be read.
    public func resolve(_ key: String) throws(PreferencesError) -> ResolvedValue? {
        if let v = managed[key] { return ResolvedValue(value: v, layer: .managed) }
        if let v = arguments[key] { return ResolvedValue(value: v, layer: .argument) }
        if let v = try store.read(domain)?[key] { return ResolvedValue(value: v, layer: .application) }
        if domain != .global, let v = try store.read(.global)?[key] { return ResolvedValue(value: v, layer: .global) }
        if let v = registered[key] { return ResolvedValue(value: v, layer: .registration) }
        return nil
    }

    /// The effective value of `key`, or `nil`.
    public func value(forKey key: String) throws(PreferencesError) -> PlistValue? {
        try resolve(key)?.value
    }

    /// Every key visible through the search list with its effective value
    /// (`dictionaryRepresentation`).
    public func dictionaryRepresentation() throws(PreferencesError) -> [PlistKey: PlistValue] {
        var all = registered
        if domain != .global, let global = try store.read(.global) { all.merge(global) { _, new in new } }
        if let app = try store.read(domain) { all.merge(app) { _, new in new } }
        all.merge(arguments) { _, new in new }
        all.merge(managed) { _, new in new }
        return all
    }

    /// Stores `value` for `key` in the application domain (or removes the
    /// key when `value` is `nil`).
    public func set(_ value: PlistValue?, forKey key: String) throws {
        try store.update(domain, scope: .anyHost) { $0[key] = value }
    }

    /// The argument domain from a command line: every `-Key value` pair,
    /// with `value` read as an old-style literal when it is one (so
    /// `-Size '(1, 2)'` gives an array) and as a string otherwise, as
    /// NSUserDefaults does. Other arguments are ignored.
    public static func argumentDomain(from arguments: [String]) -> [PlistKey: PlistValue] {
        var result: [PlistKey: PlistValue] = [:]
        var i = 0
        while i < arguments.count {
            let arg = arguments[i]
            if arg.count > 1, arg.hasPrefix("-"), !arg.hasPrefix("--"), i + 1 < arguments.count {
                let text = arguments[i + 1]
                let value = (try? OldStyleText.parse(text)) ?? .string(text)
                result[String(arg.dropFirst())] = value
                i += 2
            } else {
                i += 1
            }
        }
        return result
    }
}
