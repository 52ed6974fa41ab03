#if canImport(Glibc)
import Glibc
#endif
import AppHomeSystem
import Preferences

/// Steps that install, update, restore and doctor share: the registry
/// entry for a bundle, app-group containers, and telling participants
/// about a committed home.
extension ContainerOperation {
    /// Tells every participant that `entry`'s home `home` is committed;
    /// returns what failed, for the report (nothing is undone).
    public func announceHome(_ entry: RegistryEntry, home: ApplicationHome) -> [String] {
        var failures: [String] = []
        for participant in participants {
            do { try participant.appHomeReady(entry, home: home) } catch {
                failures.append("\(participant.name) could not set up the home of \(entry.bundleIdentifier.rawValue): \(error)")
            }
        }
        return failures
    }

    /// Creates the containers of `groups` (group id → UUID), each with its
    /// standard directories.
    public func createGroupContainers(_ groups: [AppGroupIdentifier: String]) throws(ContainersError) {
        guard !groups.isEmpty else { return }
        try containersErrors {
            try FileSystem.makeDirectories(layout.groupsDirectory)
            for (group, uuid) in groups.sorted(by: { $0.value < $1.value }) {
                let container = layout.groupContainer(uuid: uuid)
                try TreeOperations.makeDirectory(container.path)
                for dir in container.standardDirectories { try TreeOperations.makeDirectory(dir) }
                try container.writeIdentity(group)
                TreeOperations.syncDirectory(container.path)
            }
            TreeOperations.syncDirectory(layout.groupsDirectory)
        }
    }

    /// Removes the containers of `groups`, ignoring failures (cleanup).
    public func removeGroupContainers(_ groups: [AppGroupIdentifier: String]) {
        for uuid in groups.values { try? TreeOperations.remove(layout.groupContainer(uuid: uuid).path) }
        if !groups.isEmpty { TreeOperations.syncDirectory(layout.groupsDirectory) }
    }

    /// The entry for `bundle`: what its signature grants (nothing but its
    /// own group when it is unsigned), never what `Info.plist` says later.
    public func makeEntry(_ bundle: AppBundle, uuid: String) -> RegistryEntry {
        RegistryEntry(bundleIdentifier: bundle.identifier, homeUUID: uuid, bundleName: bundle.name, version: bundle.version,
                      shortVersion: bundle.shortVersion, displayName: bundle.displayName, installTime: now(),
                      groups: bundle.signature?.entitlements.applicationGroups ?? [], team: bundle.signature?.team,
                      keychainGroups: bundle.signature?.entitlements.keychainAccessGroups ?? [],
                      ubiquityKeyValueStore: bundle.signature?.entitlements.ubiquityKeyValueStore)
    }
}
