#if canImport(Glibc)
import Glibc
#endif

/// The process's environment variables, read once by a command's `main`
/// (the libraries never call `getenv`).
public enum ProcessVariables {
    /// Every `NAME=value` of `environ`, by name.
    public static func all() -> [String: String] {
        var variables: [String: String] = [:]
        var cursor = environ
        while let entry = cursor.pointee {
            let pair = String(cString: entry)
            if let eq = pair.firstIndex(of: "=") { variables[String(pair[..<eq])] = String(pair[pair.index(after: eq)...]) }
            cursor += 1
        }
        return variables
    }
}
