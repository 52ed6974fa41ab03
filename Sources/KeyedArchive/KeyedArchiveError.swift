import PropertyList

/// Why a keyed archive could not be read, written or decoded into a type.
///
/// The one public error of the module; messages are part of the interface
/// (commands print ``description`` as it is).
public enum KeyedArchiveError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The bytes are not a property list, or one this module cannot write.
    case propertyList(PlistError)
    /// A property list, but not an `NSKeyedArchiver` archive (`detail` says what is missing).
    case notAnArchive(String)
    /// `$archiver` names another archiver.
    case unsupportedArchiver(String)
    /// `$version` is not 100000.
    case unsupportedVersion(String)
    /// A UID points past the end of `$objects`.
    case referenceOutOfRange(uid: UInt64, objectCount: Int)
    /// An object or class record is malformed: `uid` is its index in `$objects`.
    case malformed(uid: UInt64, String)
    /// Objects nest deeper than ``KeyedArchive/maximumDepth``.
    case tooDeep(limit: Int)
    /// Writing out the graph would repeat shared values beyond ``KeyedArchive/maximumExpansion``.
    case tooLarge(limit: Int)
    /// A graph the archive format cannot hold.
    case unrepresentable(String)
    /// A typed decode failed (``KeyedUnarchiver``): the key and why.
    case decodingFailed(String)

    public var description: String {
        switch self {
        case .propertyList(let error):
            return error.description
        case .notAnArchive(let detail):
            return "not a keyed archive: \(detail)"
        case .unsupportedArchiver(let name):
            return "unsupported archiver \(name) (only NSKeyedArchiver archives can be read)"
        case .unsupportedVersion(let version):
            return "unsupported keyed archive $version \(version) (only 100000 can be read)"
        case .referenceOutOfRange(let uid, let count):
            return "invalid object reference: UID \(uid) is out of range ($objects has \(count) entries)"
        case .malformed(let uid, let detail):
            return "malformed keyed archive: object \(uid): \(detail)"
        case .tooDeep(let limit):
            return "keyed archive nests objects deeper than \(limit) levels"
        case .tooLarge(let limit):
            return "keyed archive expands to more than \(limit) values (shared objects repeated)"
        case .unrepresentable(let what):
            return "cannot archive \(what)"
        case .decodingFailed(let detail):
            return "cannot decode archive: \(detail)"
        }
    }
}
