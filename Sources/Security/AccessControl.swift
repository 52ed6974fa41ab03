import Foundation
import AppHomeSystem

/// The options of an access control (SecAccessControl.h, Apple's bit values).
public struct SecAccessControlCreateFlags: OptionSet, Sendable {
    public let rawValue: CFOptionFlags
    public init(rawValue: CFOptionFlags) { self.rawValue = rawValue }

    public static let userPresence = SecAccessControlCreateFlags(rawValue: 1 << 0)
    public static let biometryAny = SecAccessControlCreateFlags(rawValue: 1 << 1)
    @available(*, deprecated, renamed: "biometryAny")
    public static let touchIDAny = SecAccessControlCreateFlags(rawValue: 1 << 1)
    public static let biometryCurrentSet = SecAccessControlCreateFlags(rawValue: 1 << 3)
    @available(*, deprecated, renamed: "biometryCurrentSet")
    public static let touchIDCurrentSet = SecAccessControlCreateFlags(rawValue: 1 << 3)
    public static let devicePasscode = SecAccessControlCreateFlags(rawValue: 1 << 4)
    public static let watch = SecAccessControlCreateFlags(rawValue: 1 << 5)
    public static let companion = SecAccessControlCreateFlags(rawValue: 1 << 5)
    public static let or = SecAccessControlCreateFlags(rawValue: 1 << 14)
    public static let and = SecAccessControlCreateFlags(rawValue: 1 << 15)
    public static let privateKeyUsage = SecAccessControlCreateFlags(rawValue: 1 << 30)
    public static let applicationPassword = SecAccessControlCreateFlags(rawValue: 1 << 31)

    /// The constraints that need a person at the device (presence, biometry,
    /// passcode, a paired watch) or an application password: AppHome has no
    /// way to ask, so an item with one is refused, never stored unprotected.
    static let needsAPerson: SecAccessControlCreateFlags = [.userPresence, .biometryAny, .biometryCurrentSet, .devicePasscode, .watch, .applicationPassword]

    /// What the constraints in `self` are, in words, for a refusal.
    var constraintNames: [String] {
        var names: [String] = []
        if contains(.userPresence) { names.append("user presence") }
        if contains(.biometryAny) || contains(.biometryCurrentSet) { names.append("biometry") }
        if contains(.devicePasscode) { names.append("the device passcode") }
        if contains(.watch) { names.append("a paired watch") }
        if contains(.applicationPassword) { names.append("an application password") }
        if contains(.privateKeyUsage) { names.append("private key usage") }
        return names
    }
}

/// An access control: a protection class and constraints, for `kSecAttrAccessControl`.
public final class SecAccessControl: @unchecked Sendable {
    /// The `kSecAttrAccessible…` value.
    let protection: String
    let flags: SecAccessControlCreateFlags

    init(protection: String, flags: SecAccessControlCreateFlags) {
        self.protection = protection
        self.flags = flags
    }
}

/// An access control for `protection` (a `kSecAttrAccessible…` value) and
/// `flags`; `nil` with an `errSecParam` error for a protection that is not one.
/// An item added with a flag that needs a person present answers
/// `errSecUnimplemented`.
public func SecAccessControlCreateWithFlags(_ allocator: CFAllocator?, _ protection: CFTypeRef, _ flags: SecAccessControlCreateFlags,
                                            _ error: UnsafeMutablePointer<Unmanaged<CFError>?>?) -> SecAccessControl? {
    guard let text = protection as? String, ItemDictionary.accessibleValues.contains(text) else {
        error?.pointee = Unmanaged.passRetained(NSError(domain: NSOSStatusErrorDomain, code: Int(errSecParam),
                                                        userInfo: [NSLocalizedDescriptionKey: "the protection is not a kSecAttrAccessible value"]))
        return nil
    }
    return SecAccessControl(protection: text, flags: flags)
}

/// The `SecRandomRef` of `SecRandomCopyBytes`: there is one generator.
public typealias SecRandomRef = OpaquePointer
/// The default generator (`NULL`).
nonisolated(unsafe) public let kSecRandomDefault: SecRandomRef? = nil

/// `count` random bytes from the kernel's generator; `errSecSuccess`.
public func SecRandomCopyBytes(_ rnd: SecRandomRef?, _ count: Int, _ bytes: UnsafeMutableRawPointer) -> Int32 {
    guard count > 0 else { return errSecSuccess }
    let random = Random.bytes(count)
    random.withUnsafeBytes { bytes.copyMemory(from: $0.baseAddress!, byteCount: count) }
    return errSecSuccess
}
