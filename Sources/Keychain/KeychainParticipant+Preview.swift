import AppHomeSystem
import Containers
import PropertyList

extension KeychainParticipant {
    /// The access groups an uninstall of `entry` would shred, with how many
    /// items each holds: the stored groups no app in `remaining` holds (the
    /// login keychain never). ``appUninstalled(_:remaining:)`` shreds exactly these.
    ///
    /// Counting reads each file's item list, not the items: no key is needed,
    /// so a locked keychain is counted too.
    public func groupsShredded(uninstalling entry: RegistryEntry, remaining: [RegistryEntry]) throws -> [(group: AccessGroup, items: Int)] {
        let k = keychain()
        return try doomedGroups(remaining: remaining, in: k).map { group in (group, try k.storedItemCount(group)) }
    }

    /// The stored groups no app of `remaining` holds.
    func doomedGroups(remaining: [RegistryEntry], in k: Keychain) throws -> [AccessGroup] {
        var inUse: Set<AccessGroup> = [KeychainContext.loginGroup]
        for other in remaining { inUse.formUnion(try KeychainContext(installed: other).accessGroups) }
        return try k.storedGroups().filter { !inUse.contains($0) }
    }
}

extension Keychain {
    /// How many items the file of `group` lists (0 when it has none), read
    /// without opening any of them.
    public func storedItemCount(_ group: AccessGroup) throws(KeychainError) -> Int {
        let path = groupPath(group)
        let bytes: [UInt8]?
        do throws(SystemError) { bytes = try FileSystem.readFileIfPresent(path) } catch { throw .system(error) }
        guard let bytes else { return 0 }
        guard case .array(let items)? = (try? PlistCodec.decode(bytes))?.dictionaryValue?["Items"] else {
            throw .corrupt(path: path, reason: "Items is missing")
        }
        return items.count
    }
}
