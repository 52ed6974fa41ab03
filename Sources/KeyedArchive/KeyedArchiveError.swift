import AppHomeSystem
import PropertyList

/// Why a keyed archive could not be read, written or decoded into a type.
///
/// The one public error of the module; messages are part of the interface
/// (commands print ``description`` as it is). Whatever in a message came from
/// the archive (an archiver's or a class's name, a key) is escaped
/// (``shown(_:)``): a hostile archive cannot send control bytes to a terminal.
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

    /// Text from an archive, for a message: control characters and backslashes
    /// escaped (``FileNames/escaped(_:)-(String)``).
    public static func shown(_ text: String) -> String { FileNames.escaped(text) }

    public var description: String {
        switch self {
        case .propertyList(let error):
            return error.description
        case .notAnArchive(let detail):
            return "not a keyed archive: \(Self.shown(detail))"
        case .unsupportedArchiver(let name):
            return "unsupported archiver \(Self.shown(name)) (only NSKeyedArchiver archives can be read)"
        case .unsupportedVersion(let version):
            return "unsupported keyed archive $version \(Self.shown(version)) (only 100000 can be read)"
        case .referenceOutOfRange(let uid, let count):
            return "invalid object reference: UID \(uid) is out of range ($objects has \(count) entries)"
        case .malformed(let uid, let detail):
            return "malformed keyed archive: object \(uid): \(Self.shown(detail))"
        case .tooDeep(let limit):
            return "keyed archive nests objects deeper than \(limit) levels"
        case .tooLarge(let limit):
            return "keyed archive expands to more than \(limit) values (shared objects repeated)"
        case .unrepresentable(let what):
            return "cannot archive \(Self.shown(what))"
        case .decodingFailed(let detail):
            return "cannot decode archive: \(Self.shown(detail))"
        }
    }
}
