#if canImport(Glibc)
import Glibc
#endif

/// Functions of the C library that Swift's Glibc module does not declare
/// (they need `_GNU_SOURCE`, or a header it does not import): looked up by
/// name at run time, in the C library the process already has loaded.
public enum CLibrary {
    /// The function `name` as `type` (a `@convention(c)` function type), or
    /// `nil` where this C library has no such function.
    public static func function<Function>(_ name: String, as type: Function.Type) -> Function? {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), name) else { return nil }
        return unsafeBitCast(symbol, to: type)
    }
}
