import PropertyList

/// How a write was asked for, beyond its values: what a ``WritePolicy``
/// weighs. It travels with the write to prefsd (`Schemas/prefsd-protocol.md`).
public struct WriteOptions: Sendable, Equatable {
    /// Store values the policy refuses (`defaults write --force`); each
    /// refusal comes back as a forced ``WriteNote`` instead.
    public var force: Bool
    /// The device idiom (`phone`, `pad`) a settings schema is read for;
    /// `nil`: the policy's default.
    public var idiom: String?
    /// Keys the writer sets, checked even when the value they get is the one
    /// already stored (`defaults write D K V` refuses a bad `V` whatever the
    /// domain holds); keys whose value changes are always checked.
    public var checkedKeys: [String]

    public init(force: Bool = false, idiom: String? = nil, checkedKeys: [String] = []) {
        self.force = force
        self.idiom = idiom
        self.checkedKeys = checkedKeys
    }
}

/// Something a write should tell its user although the value was stored: a
/// warning of the schema, or a refusal overridden with ``WriteOptions/force``.
public struct WriteNote: Sendable, Equatable {
    /// The rule's id (`SB705`).
    public var rule: String
    /// The rule's message.
    public var message: String
    /// Whether the policy refused the value and `force` stored it anyway.
    public var forced: Bool

    public init(rule: String, message: String, forced: Bool) {
        self.rule = rule; self.message = message; self.forced = forced
    }
}

/// The rules a domain's contents must keep, whoever writes them.
///
/// The contract: ``check(_:old:new:options:)`` looks only at the keys whose
/// value `new` sets or changes (``keysToCheck(old:new:options:)``: those
/// of ``WriteOptions/checkedKeys`` that `new` holds included) and, if the
/// policy guards removals, the keys `old` holds and `new` does not
/// (``keysRemoved(old:new:)``); it throws
/// ``PreferencesError/policyViolation(_:)`` with a message fit for the user
/// when one breaks a rule, and returns the notes the writer should print.
/// It never writes anything. A policy says whether `options.force` lifts
/// its refusals: a settings schema's do (``SettingsWritePolicy`` allows
/// every removal), the managed layer's (``ManagedWritePolicy``, which
/// refuses setting, changing or removing a forced key) do not.
///
/// `Preferences` defines the policy; `SettingsBundle` implements it (a
/// domain's Settings.bundle is its schema); the one commit path
/// (``DomainCommit``) applies it, for the file store and prefsd alike, so no
/// client can store what the schema refuses.
public protocol WritePolicy: Sendable {
    /// Checks the change of `domain` from `old` to `new`.
    ///
    /// - Returns: notes to show the writer.
    /// - Throws: ``PreferencesError/policyViolation(_:)`` when a value is
    ///   refused; ``PreferencesError/policyUnavailable(_:)`` when the rules
    ///   themselves cannot be read.
    func check(_ domain: Domain, old: [PlistKey: PlistValue], new: [PlistKey: PlistValue],
               options: WriteOptions) throws(PreferencesError) -> [WriteNote]

    /// This policy for the checks of one commit (prefsd checks each of a
    /// commit's writes on its own, under the domain's lock): what it reads
    /// of the system to decide (a domain's schema, its managed keys) may be
    /// read once and kept until the commit ends. `self` by default.
    func forOneCommit() -> any WritePolicy
}

extension WritePolicy {
    public func forOneCommit() -> any WritePolicy { self }

    /// The keys a policy checks: those a change from `old` to `new` sets or
    /// changes, and the `checkedKeys` of `options` that `new` holds; sorted.
    public static func keysToCheck(old: [PlistKey: PlistValue], new: [PlistKey: PlistValue], options: WriteOptions) -> [String] {
        // No Set and no key path: this runs on every validated write, and
        // each generic type or key path used for the first time costs the
        // runtime thousands of instructions.
        var keys: [String] = []
        for (k, v) in new where old[k] != v { keys.append(k.string) }
        for k in options.checkedKeys where new[k] != nil && !keys.contains(where: { PlistKey($0) == PlistKey(k) }) { keys.append(k) }
        keys.sort { PlistKey($0) < PlistKey($1) }   // code point order, as PlistKey sorts
        return keys
    }

    /// The keys a change from `old` to `new` removes, sorted.
    public static func keysRemoved(old: [PlistKey: PlistValue], new: [PlistKey: PlistValue]) -> [String] {
        old.keys.filter { new[$0] == nil }.sorted().map(\.string)
    }
}

/// Two policies, both of which must allow a write (their notes joined).
/// A policy that sees every domain by its one name: a domain given by the
/// path of a named domain's file is checked as that named domain
/// (``DomainResolver/canonical(_:)``), so no spelling of a domain escapes
/// the rules on its name (the managed keys, its settings schema).
public struct CanonicalDomainPolicy: WritePolicy {
    let inner: any WritePolicy
    let canonical: @Sendable (Domain) -> Domain

    /// - Parameter canonical: the resolver's ``DomainResolver/canonical(_:)``,
    ///   called for path domains only (it may read the registry).
    public init(_ inner: any WritePolicy, canonical: @escaping @Sendable (Domain) -> Domain) {
        self.inner = inner
        self.canonical = canonical
    }

    public func check(_ domain: Domain, old: [PlistKey: PlistValue], new: [PlistKey: PlistValue],
                      options: WriteOptions) throws(PreferencesError) -> [WriteNote] {
        guard case .file = domain else { return try inner.check(domain, old: old, new: new, options: options) }
        return try inner.check(canonical(domain), old: old, new: new, options: options)
    }

    public func forOneCommit() -> any WritePolicy { CanonicalDomainPolicy(inner.forOneCommit(), canonical: canonical) }
}

public struct CombinedWritePolicy: WritePolicy {
    let first: any WritePolicy
    let second: any WritePolicy

    public init(_ first: any WritePolicy, _ second: any WritePolicy) {
        self.first = first
        self.second = second
    }

    public func check(_ domain: Domain, old: [PlistKey: PlistValue], new: [PlistKey: PlistValue],
                      options: WriteOptions) throws(PreferencesError) -> [WriteNote] {
        try first.check(domain, old: old, new: new, options: options) + second.check(domain, old: old, new: new, options: options)
    }

    public func forOneCommit() -> any WritePolicy { CombinedWritePolicy(first.forOneCommit(), second.forOneCommit()) }
}

/// What a policy read for one commit (``WritePolicy/forOneCommit()``),
/// by key. Used by one commit on one thread.
///
/// Inlinable, so that a policy in another module (the Settings.bundle
/// one) gets a copy made for its key type: the generic one looked each
/// write's key up through witness tables, about 5,000 instructions.
public final class CommitMemo<Key: Hashable, Value>: @unchecked Sendable {
    @usableFromInline var values: [Key: Value] = [:]

    @inlinable public init() {}

    /// The value kept for `key`, else `make()`'s, kept (a failure is not).
    @inlinable public func value<E: Error>(_ key: Key, _ make: () throws(E) -> Value) throws(E) -> Value {
        if let v = values[key] { return v }
        let v = try make()
        values[key] = v
        return v
    }

    /// `make()`'s value, through `memo` when there is one (a policy made
    /// for one commit), else made now.
    @inlinable public static func value<E: Error>(in memo: CommitMemo?, _ key: Key, _ make: () throws(E) -> Value) throws(E) -> Value {
        guard let memo else { return try make() }
        return try memo.value(key, make)
    }
}
