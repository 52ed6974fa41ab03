import AppHomeSystem
import Preferences

/// Every failure of the synced key-value stores.
public enum SyncError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A write past Apple's limits; nothing was written.
    case quotaViolation(store: String, reason: String)
    /// A key-value store identifier that is not a valid name.
    case invalidStoreIdentifier(String, reason: String)
    /// The app is not installed, or its signature grants no key-value store.
    case notEntitled(app: String, reason: String)
    /// A file of the sync machinery that cannot be read or is too new.
    case damaged(path: String, reason: String)
    /// `apphome sync` set-up problems (no folder, a folder that is not a directory).
    case notConfigured(String)
    case system(SystemError)
    case preferences(PreferencesError)

    public var description: String {
        switch self {
        case .quotaViolation(let store, let reason): return "quota violation in key-value store \(store): \(reason); nothing was written"
        case .invalidStoreIdentifier(let id, let reason): return "invalid key-value store identifier \"\(id)\": \(reason)"
        case .notEntitled(let app, let reason): return "\(app) has no key-value store: \(reason)"
        case .damaged(let path, let reason): return "cannot use \(path): \(reason)"
        case .notConfigured(let message): return message
        case .system(let e): return e.description
        case .preferences(let e): return e.description
        }
    }
}

/// The identifier of a key-value store (`<team>.<name>`, as the install
/// granted it): checked once here, so no identifier can name a path
/// outside the store directories.
public struct StoreIdentifier: Hashable, Comparable, Sendable, CustomStringConvertible {
    public let rawValue: String

    /// - Throws: ``SyncError/invalidStoreIdentifier(_:reason:)``.
    public init(_ text: String) throws(SyncError) {
        if let problem = Self.problem(text) { throw .invalidStoreIdentifier(text, reason: problem) }
        rawValue = text
    }

    static func problem(_ text: String) -> String? {
        let bytes = Array(text.utf8)
        if bytes.isEmpty || bytes.count > 200 { return "it must be 1 to 200 bytes" }
        if text.contains("..") || bytes.first == UInt8(ascii: ".") { return "it may not start with '.' or contain '..'" }
        for b in bytes {
            let ok = (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A)
                || b == UInt8(ascii: ".") || b == UInt8(ascii: "-") || b == UInt8(ascii: "_")
            if !ok { return "it holds only letters, digits, '.', '-' and '_'" }
        }
        return nil
    }

    public static func < (a: StoreIdentifier, b: StoreIdentifier) -> Bool {
        Array(a.rawValue.utf8).lexicographicallyPrecedes(Array(b.rawValue.utf8))
    }

    public var description: String { rawValue }
}

/// A device identifier: 32 uppercase hexadecimal digits, made at random
/// on a machine's first write (not `/etc/machine-id`, which cloned images share).
public enum DeviceIdentifier {
    public static func isValid(_ text: String) -> Bool {
        text.utf8.count == 32 && text.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x46) }
    }

    public static func make() -> String { Hex.encode(Random.bytes(16), uppercase: true) }
}
