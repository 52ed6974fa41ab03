import Containers
import Preferences
import PropertyList

/// The write policy of preference domains that have a settings schema: a
/// value under a key the domain's Settings.bundle declares must fit that
/// row (type, range, `Values`), as ``WriteValidator`` checks it.
///
/// The one commit path applies it for every writer: `defaults` on the files,
/// prefsd for any client of its socket, and the Swift API. A refused value
/// throws ``PreferencesError/policyViolation(_:)`` with the rule and its
/// message; with ``WriteOptions/force`` it is stored and noted instead.
/// Keys no row declares are stored without a check (SB704, not reported).
public struct SettingsWritePolicy: WritePolicy {
    /// Finds the schema of a domain (an explicit bundle, the installed
    /// app's, a group's governing bundle, a registered one).
    public let lookup: SettingsSchemaLookup
    /// A validator of a bundle kept in memory by a long-running writer (the
    /// Settings app), or `nil` to use the compiled form on disk
    /// (``CompiledSchemaCache``); it must not be stale.
    public let validators: ValidatorSource?

    /// A bundle's validator on an idiom, or `nil` for the compiled form.
    public typealias ValidatorSource = @Sendable (SettingsBundle, Idiom) -> WriteValidator?

    /// The schemas looked up for one commit (``forOneCommit()``), else `nil`.
    private let memo: CommitMemo<BundleKey, SettingsBundle?>?

    struct BundleKey: Hashable {
        var domain: Domain
        var idiom: Idiom
    }

    public init(lookup: SettingsSchemaLookup, validators: ValidatorSource? = nil) {
        self.init(lookup: lookup, validators: validators, memo: nil)
    }

    private init(lookup: SettingsSchemaLookup, validators: ValidatorSource?, memo: CommitMemo<BundleKey, SettingsBundle?>?) {
        self.lookup = lookup
        self.validators = validators
        self.memo = memo
    }

    public func forOneCommit() -> any WritePolicy { SettingsWritePolicy(lookup: lookup, validators: validators, memo: CommitMemo()) }

    /// The policy of the domains under `root`, reading the app registry
    /// when a domain could be an app's or a group's (through
    /// `registryCache` when given: a long-running writer's).
    public init(root: String, registry: Registry? = nil, registryCache: RegistryCache? = nil, explicitBundle: String? = nil,
                validators: ValidatorSource? = nil) {
        self.init(lookup: SettingsSchemaLookup(root: root, explicit: explicitBundle, registry: registry, registryCache: registryCache),
                  validators: validators)
    }

    /// The message of a refused value, the same for every writer.
    public static func refusal(_ finding: Finding) -> String {
        "\(finding.message) [\(finding.rule)]\nDefaults have not been changed (use --force to write anyway)."
    }

    public func check(_ domain: Domain, old: [PlistKey: PlistValue], new: [PlistKey: PlistValue],
                      options: WriteOptions) throws(PreferencesError) -> [WriteNote] {
        // The schema first: a domain without one (most) is not diffed at all,
        // which for a large domain costs more than the look-up (every write
        // that changes something looked the schema up anyway).
        let idiom = options.idiom.flatMap(Idiom.init(rawValue:)) ?? .phone
        let bundle: SettingsBundle?
        do {
            bundle = try CommitMemo.value(in: memo, BundleKey(domain: domain, idiom: idiom)) { () throws(SettingsBundleError) in
                try lookup.bundle(for: domain, idiom: idiom)
            }
        } catch {
            if Self.keysToCheck(old: old, new: new, options: options).isEmpty { return [] }   // nothing to check
            throw .policyUnavailable(error.description)
        }
        guard let bundle else { return [] }
        let keys = Self.keysToCheck(old: old, new: new, options: options)
        if keys.isEmpty { return [] }
        let validator = validators?(bundle, idiom) ?? CompiledSchemaCache(directory: SettingsSchemaLookup.compiledSchemaDirectory(root: lookup.root))
            .validator(for: bundle, idiom: idiom, keys: keys)
        var notes: [WriteNote] = []
        for key in keys {
            guard let value = new[key], let finding = validator.check(domain: domain.description, key: key, value: value) else { continue }
            if finding.severity == .error && !options.force { throw .policyViolation(Self.refusal(finding)) }
            if finding.severity != .info {
                notes.append(WriteNote(rule: finding.rule, message: finding.message, forced: finding.severity == .error))
            }
        }
        return notes
    }
}
