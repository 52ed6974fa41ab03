/// The rules an install, update or restore applies to what a bundle
/// claims, against the registry (read under the registry lock).
///
/// - An unsigned bundle holds only its own group: declaring keychain
///   access groups or app groups is refused.
/// - A signed bundle's keychain access groups, and its key-value store
///   identifier, are `<its team>.<name>`.
/// - An app group belongs to the team of the first signed app that created
///   its container; another team's claim is refused, and so is a claim of
///   a container from before signed entitlements (no recorded team).
/// - No app claims another app's bundle id, and no app is installed under
///   a bundle id another app holds as a group.
extension ContainerOperation {
    /// Refuses `bundle` when what it claims breaks a rule above.
    ///
    /// - Throws: ``ContainersError/entitlementRefused(identifier:claim:reason:)``.
    public func checkEntitlements(_ bundle: AppBundle, in registry: Registry) throws(ContainersError) {
        let id = bundle.identifier
        func refuse(_ claim: String, _ reason: String) -> ContainersError {
            .entitlementRefused(identifier: id.rawValue, claim: claim, reason: reason)
        }
        let others = registry.sortedEntries.filter { $0.bundleIdentifier != id }
        for e in others where e.keychainGroups.contains(id.rawValue) || e.groups.contains(where: { $0.rawValue == id.rawValue }) {
            throw refuse(id.rawValue, "\(e.bundleIdentifier) already holds it as a group, so it cannot be this app's own group")
        }
        func isOtherApp(_ name: String) -> Bool { others.contains { $0.bundleIdentifier.rawValue == name } }
        guard let signature = bundle.signature else {
            let declared = bundle.declaredEntitlements
            if let claim = declared.keychainAccessGroups.first ?? declared.applicationGroups.first?.rawValue ?? declared.ubiquityKeyValueStore {
                throw refuse(claim, "the bundle is unsigned, and an unsigned app holds only its own group (\(id)); "
                                    + "sign it with 'apphome sign \(bundle.name) --key KEYFILE' to claim shared groups")
            }
            return
        }
        let team = signature.team
        for group in signature.entitlements.keychainAccessGroups {
            if let problem = Entitlements.keychainGroupProblem(group, team: team) { throw refuse(group, problem) }
            if isOtherApp(group) { throw refuse(group, "it is the bundle identifier of another installed app") }
        }
        if let store = signature.entitlements.ubiquityKeyValueStore,
           let problem = Entitlements.ubiquityStoreProblem(store, team: team) { throw refuse(store, problem) }
        for group in signature.entitlements.applicationGroups {
            if isOtherApp(group.rawValue) { throw refuse(group.rawValue, "it is the bundle identifier of another installed app") }
            guard registry.groups[group] != nil else { continue }
            guard let owner = registry.groupTeams[group] else {
                throw refuse(group.rawValue, "its container was made before signed entitlements and has no recorded team, so no app can claim it")
            }
            if owner != team { throw refuse(group.rawValue, "it belongs to team \(owner), and this bundle is signed by team \(team)") }
        }
    }

    /// Refuses to replace the installed `entry` with a bundle (or backup)
    /// signed by `offered` when `entry` is signed by another team.
    ///
    /// - Throws: ``ContainersError/differentPublisher(identifier:installed:offered:)``.
    public func checkSamePublisher(_ offered: TeamIdentifier?, replacing entry: RegistryEntry) throws(ContainersError) {
        guard let installed = entry.team, offered != installed else { return }
        throw .differentPublisher(identifier: entry.bundleIdentifier.rawValue, installed: "team \(installed)",
                                  offered: offered.map { "team \($0)" } ?? "an unsigned bundle")
    }

    /// Verifies the copy of `bundle` at `path` (in the new home) again, so
    /// a bundle changed between the check and the copy installs nothing.
    ///
    /// - Throws: ``ContainersError/signatureInvalid(path:reason:)``.
    public func checkCopy(of bundle: AppBundle, at path: String) throws(ContainersError) {
        let copy = try AppBundle(path: path)
        guard copy.identifier == bundle.identifier, copy.signature == bundle.signature,
              copy.declaredEntitlements == bundle.declaredEntitlements else {
            throw .signatureInvalid(path: bundle.path, reason: "the bundle changed while it was being copied in")
        }
    }
}

extension Registry {
    /// Records `team` as the owner of the app groups `groups` whose
    /// containers a signed app just created.
    public mutating func recordTeam<S: Sequence>(_ team: TeamIdentifier?, of groups: S) where S.Element == AppGroupIdentifier {
        guard let team else { return }
        for g in groups { groupTeams[g] = team }
    }
}
