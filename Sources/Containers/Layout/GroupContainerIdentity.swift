import AppHomeSystem
import PropertyList

extension GroupContainer {
    /// Writes the identity file naming `group`.
    public func writeIdentity(_ group: AppGroupIdentifier) throws {
        let plist = PlistValue.dictionary(["Identifier": .string(group.rawValue)])
        try FileSystem.writeAtomically(try PlistCodec.encode(plist, format: .binary), to: identityFile)
    }

    /// The group the identity file names, or `nil` when it is missing or unreadable.
    func readIdentity() -> AppGroupIdentifier? {
        guard let bytes = try? FileSystem.readFileIfPresent(identityFile),
              case .string(let raw)? = (try? PlistCodec.decode(bytes))?.dictionaryValue?["Identifier"] else { return nil }
        return try? AppGroupIdentifier(raw)
    }
}
