import AppHomeSystem
import PropertyList

/// Apple's limits on a key-value store, applied to every local write.
///
/// - at most 1,024 keys;
/// - a key is 1 to 64 bytes of UTF-8;
/// - the values together take at most 1 MB (1,048,576 bytes), a value's
///   size being the length of its binary property-list encoding (keys are
///   not counted, as on Apple platforms).
public enum KeyValueStoreLimits {
    public static let maximumKeys = 1_024
    public static let maximumKeyBytes = 64
    public static let maximumTotalBytes = 1_048_576
    /// Deepest nesting of arrays and dictionaries a synced value may have.
    public static let maximumValueDepth = 64

    /// The bytes `value` counts against the quota.
    public static func size(of value: PlistValue) -> Int {
        (try? PlistCodec.encode(value, format: .binary).count) ?? Int.max / 2
    }

    /// Why `key` cannot be a key of a store, or `nil`.
    public static func keyProblem(_ key: PlistKey) -> String? {
        let n = key.string.utf8.count
        if n == 0 { return "a key may not be empty" }
        if n > maximumKeyBytes { return "the key '\(FileNames.escaped(String(key.string.prefix(80))))' is \(n) bytes of UTF-8, more than the \(maximumKeyBytes) a key may have" }
        return nil
    }

    /// Why `value` cannot be stored, or `nil`.
    public static func valueProblem(_ value: PlistValue) -> String? {
        if value.depth > maximumValueDepth { return "a value is nested \(value.depth) levels deep, more than \(maximumValueDepth)" }
        if containsUID(value) { return "a value holds a keyed-archiver UID, which is not a preference value" }
        return nil
    }

    private static func containsUID(_ value: PlistValue) -> Bool {
        switch value {
        case .uid: return true
        case .array(let items): return items.contains(where: containsUID)
        case .dictionary(let d): return d.values.contains(where: containsUID)
        default: return false
        }
    }

    /// Why `contents` breaks a limit, or `nil`; `changed` are the keys the
    /// write set (only they are checked for their own limits).
    public static func violation(_ contents: [PlistKey: PlistValue], changed: [PlistKey]) -> String? {
        for key in changed {
            if let p = keyProblem(key) { return p }
            if let v = contents[key], let p = valueProblem(v) { return p }
        }
        if contents.count > maximumKeys {
            return "the store would hold \(contents.count) keys, more than the \(maximumKeys) allowed"
        }
        var total = 0
        for value in contents.values { total += size(of: value) }
        if total > maximumTotalBytes {
            return "the store's values would take \(total) bytes, more than the \(maximumTotalBytes) (1 MB) allowed"
        }
        return nil
    }

    /// Bytes the values of `contents` take.
    public static func totalBytes(_ contents: [PlistKey: PlistValue]) -> Int {
        contents.values.reduce(0) { $0 + size(of: $1) }
    }
}
