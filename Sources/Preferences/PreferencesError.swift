import AppHomeSystem
import PropertyList

/// Why a preference operation failed. Cases carry the offending value;
/// commands map them to their messages in one place.
public enum PreferencesError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A domain name that is empty, contains `/`, `..`, NUL or controls.
    case invalidDomainName(String, reason: String)
    /// A host name for `-host` that cannot be a file-name component.
    case invalidHostName(String)
    /// The domain's file exists but is not a property list we can read.
    case unreadableDomain(Domain, path: String, reason: String)
    /// The domain's file holds a property list whose top level is not a dictionary.
    case notADictionary(Domain, path: String)
    /// Reading, writing or locking a file failed.
    case system(SystemError)
    /// The new contents cannot be encoded (for example, too deep).
    case encoding(Domain, PlistError)
    /// A key path that does not parse or does not fit the stored value.
    case invalidKeyPath(String, reason: String)
    /// The preferences service (prefsd) refused or failed; its message.
    case service(String)
    /// The domain's ``WritePolicy`` refused a value; the message says which
    /// rule and how to write anyway.
    case policyViolation(String)
    /// The domain's ``WritePolicy`` could not read its rules (a settings
    /// bundle that cannot be loaded, say); nothing was written.
    case policyUnavailable(String)

    public var description: String {
        switch self {
        case .invalidDomainName(let n, let reason): return "Invalid domain name \"\(n)\": \(reason)"
        case .invalidHostName(let n): return "Invalid host name \"\(n)\": it must not be empty or contain '/', '..' or NUL"
        case .unreadableDomain(let d, let path, let reason): return "Could not read domain \(d) from \(path): \(reason); defaults unchanged."
        case .notADictionary(let d, let path): return "Could not read domain \(d) from \(path): the property list is not a dictionary; defaults unchanged."
        case .system(let e): return e.description
        case .encoding(let d, let e): return "Could not write domain \(d): \(e)"
        case .invalidKeyPath(let p, let reason): return "Invalid key path \"\(p)\": \(reason)"
        case .service(let message): return message
        case .policyViolation(let message), .policyUnavailable(let message): return message
        }
    }
}
