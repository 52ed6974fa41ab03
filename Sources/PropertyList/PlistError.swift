/// Why a property list could not be read or written.
///
/// One public error type for the module. Messages are part of the
/// interface: commands print ``description`` as it is, so keep the wording
/// stable once published.
public enum PlistError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The bytes are not a property list in any format this module reads.
    case unrecognizedFormat
    /// The bytes look like the named format but are malformed; `detail`
    /// says where and why (offset or line and column included).
    case malformed(format: String, detail: String)
    /// Collections nest deeper than ``PlistValue/maximumDepth``.
    case tooDeep(limit: Int)
    /// A value that the target format cannot represent (for example a
    /// non-finite real in JSON).
    case unrepresentable(String)

    public var description: String {
        switch self {
        case .unrecognizedFormat:
            return "not a property list (expected a binary, XML or old-style plist)"
        case .malformed(let format, let detail):
            return "malformed \(format) property list: \(detail)"
        case .tooDeep(let limit):
            return "property list nests deeper than \(limit) levels"
        case .unrepresentable(let what):
            return "cannot represent \(what)"
        }
    }
}
