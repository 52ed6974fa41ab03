import AppHomeSystem
import Preferences
import PropertyList

/// An application bundle (`<Name>.app`) whose `Info.plist` has been read
/// and checked.
///
/// Loading validates everything an install needs, so a bundle that loads can
/// be installed; one that does not load leaves nothing behind.
public struct AppBundle: Equatable, Sendable {
    /// The bundle directory as given (without a trailing slash).
    public let path: String
    /// The directory's name, e.g. `ScaryBugs.app`.
    public let name: String
    /// `CFBundleIdentifier`.
    public let identifier: BundleIdentifier
    /// `CFBundleVersion` (the build number).
    public let version: String
    /// `CFBundleShortVersionString` (the marketing version), if present.
    public let shortVersion: String?
    /// `CFBundleDisplayName`, if present.
    public let displayName: String?
    /// The app groups it declares (`com.apple.security.application-groups`),
    /// sorted, without duplicates.
    public let groups: [AppGroupIdentifier]
    /// The entitlements `Info.plist` declares: `keychain-access-groups` as
    /// written (placeholders not expanded) and the app groups.
    public let declaredEntitlements: Entitlements
    /// The verified signature, or `nil` for an unsigned bundle (no
    /// `_CodeSignature/CodeResources`).
    public let signature: CodeSignature?

    /// Reads `<path>/Info.plist` (binary, XML or old-style).
    ///
    /// - Parameter path: the bundle directory; its name must end in `.app`.
    /// - Throws: ``ContainersError/invalidBundle(path:reason:)`` when the
    ///   directory is missing or badly named, or `Info.plist` is missing,
    ///   unreadable, not a dictionary or lacks `CFBundleIdentifier` or
    ///   `CFBundleVersion`; ``ContainersError/invalidBundleIdentifier(_:reason:)``
    ///   for an identifier that is not reverse-DNS;
    ///   ``ContainersError/invalidAppGroupIdentifier(_:reason:)`` for a
    ///   declared group that is not `group.` + reverse-DNS;
    ///   ``ContainersError/signatureInvalid(path:reason:)`` for a signed
    ///   bundle that fails verification (see ``CodeSigning/verify(bundleAt:declared:)``).
    public init(path given: String) throws(ContainersError) {
        try self.init(path: given, checkSignature: true)
    }

    /// Reads the bundle; with `checkSignature` false, a signature is
    /// neither verified nor recorded (what `apphome sign` reads before it
    /// replaces one).
    public init(path given: String, checkSignature: Bool) throws(ContainersError) {
        let path = Paths.trimmingTrailingSlashes(given)
        let name = FileSystem.lastComponent(path)
        func fail(_ reason: String) -> ContainersError { .invalidBundle(path: path, reason: reason) }
        guard Self.isValidBundleName(name) else { throw fail("the directory name must end in '.app'") }
        guard FileSystem.isDirectory(path) else { throw fail("it is not a directory") }
        let bytes: [UInt8]?
        do { bytes = try FileSystem.readFileIfPresent(path + "/Info.plist") } catch {
            throw fail("cannot read Info.plist: \(error.reason)")
        }
        guard let bytes else { throw fail("Info.plist is missing") }
        let plist: PlistValue
        do { plist = try PlistCodec.decode(bytes) } catch { throw fail("Info.plist is not a property list: \(error)") }
        guard let info = plist.dictionaryValue else { throw fail("Info.plist is not a dictionary") }
        func string(_ key: String, required: Bool) throws(ContainersError) -> String? {
            switch info[key] {
            case nil:
                if required { throw fail("Info.plist has no \(key)") }
                return nil
            case .string(let s)?:
                if s.isEmpty { throw fail("\(key) in Info.plist is empty") }
                return s
            case let other?:
                throw fail("\(key) in Info.plist must be a string, not \(other.typeName)")
            }
        }
        let identifier = try BundleIdentifier(string("CFBundleIdentifier", required: true)!)
        let version = try string("CFBundleVersion", required: true)!
        self.path = path
        self.name = name
        self.identifier = identifier
        self.version = version
        self.shortVersion = try string("CFBundleShortVersionString", required: false)
        self.displayName = try string("CFBundleDisplayName", required: false)
        var groups: Set<AppGroupIdentifier> = []
        switch info[AppGroupIdentifier.infoPlistKey] {
        case nil: break
        case .array(let items)?:
            for item in items {
                guard case .string(let text) = item else {
                    throw fail("\(AppGroupIdentifier.infoPlistKey) in Info.plist must be an array of strings")
                }
                groups.insert(try AppGroupIdentifier(text))
            }
        case let other?:
            throw fail("\(AppGroupIdentifier.infoPlistKey) in Info.plist must be an array, not \(other.typeName)")
        }
        self.groups = groups.sorted()
        var keychainGroups: [String] = []
        switch info[Entitlements.keychainAccessGroupsKey] {
        case nil: break
        case .array(let items)?:
            for item in items {
                guard case .string(let text) = item, !text.isEmpty else {
                    throw fail("\(Entitlements.keychainAccessGroupsKey) in Info.plist must be an array of non-empty strings")
                }
                keychainGroups.append(text)
            }
        case let other?:
            throw fail("\(Entitlements.keychainAccessGroupsKey) in Info.plist must be an array, not \(other.typeName)")
        }
        var store: String? = nil
        switch info[Entitlements.ubiquityKeyValueStoreKey] {
        case nil: break
        case .string(let text)? where !text.isEmpty: store = text
        case let other?:
            throw fail("\(Entitlements.ubiquityKeyValueStoreKey) in Info.plist must be a non-empty string, not \(other.typeName)")
        }
        self.declaredEntitlements = Entitlements(keychainAccessGroups: keychainGroups, applicationGroups: self.groups, ubiquityKeyValueStore: store)
        var signature: CodeSignature? = nil
        if checkSignature {
            do { signature = try CodeSigning.verify(bundleAt: path, declared: declaredEntitlements) } catch .notSigned {}
        }
        self.signature = signature
    }

    /// Whether `name` can be a bundle directory inside a home: ends in
    /// `.app`, has a stem, and is one safe file-name component.
    public static func isValidBundleName(_ name: String) -> Bool {
        // By bytes: a "." followed by a combining mark is one character
        // that `hasPrefix(".")` does not see, but the name is still hidden.
        name.hasSuffix(".app") && name.utf8.count > 4 && name.utf8.count <= 255
            && name.utf8.first != UInt8(ascii: ".") && FileNames.isSingleComponent(name)
    }
}
