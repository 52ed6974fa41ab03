import Foundation

// The CoreFoundation types keychain code spells, as Swift sees them on Apple
// platforms. swift-corelibs-foundation keeps CoreFoundation to itself on Linux
// (no `CFString` or `CFDictionary` in `import Foundation`, and the C module's
// `CFStringRef` is an opaque pointer that does not bridge), so each is the
// Foundation class it is toll-free bridged to on Apple platforms: `query as
// CFDictionary`, `kSecClass as String`, `result as? Data` and `as! CFData`
// behave as they do there.

/// Any CoreFoundation object.
public typealias CFTypeRef = AnyObject
/// `CFStringRef`; bridges to and from `String`.
public typealias CFString = NSString
/// `CFDictionaryRef`; `[String: Any] as CFDictionary` makes one.
public typealias CFDictionary = NSDictionary
/// `CFMutableDictionaryRef`.
public typealias CFMutableDictionary = NSMutableDictionary
/// `CFArrayRef`.
public typealias CFArray = NSArray
/// `CFDataRef`; bridges to and from `Data`.
public typealias CFData = NSData
/// `CFNumberRef`.
public typealias CFNumber = NSNumber
/// `CFBooleanRef`: `kCFBooleanTrue as? Bool` is `true`.
public typealias CFBoolean = NSNumber
/// `CFDateRef`.
public typealias CFDate = NSDate
/// `CFErrorRef`; bridges to `Error` as on Apple platforms.
public typealias CFError = NSError
/// `CFErrorDomain`.
public typealias CFErrorDomain = CFString
/// `CFIndex`.
public typealias CFIndex = Int
/// `CFOptionFlags`.
public typealias CFOptionFlags = UInt
/// `OSStatus`: a Security result code (`errSec…`).
public typealias OSStatus = Int32

/// `CFAllocatorRef`: AppHome has one allocator, the default.
public final class CFAllocator: @unchecked Sendable {
    init() {}
}

/// The default allocator (`NULL` on Apple platforms, as here).
public let kCFAllocatorDefault: CFAllocator! = nil

/// `kCFBooleanTrue`: a `CFBoolean!`, so `kCFBooleanTrue!` and `kCFBooleanTrue as? Bool` work.
public let kCFBooleanTrue: CFBoolean! = NSNumber(value: true)
/// `kCFBooleanFalse`.
public let kCFBooleanFalse: CFBoolean! = NSNumber(value: false)

/// `noErr` (MacTypes.h): an `Int`, as Swift imports it on Apple platforms.
public var noErr: Int { 0 }

/// The domain of a `CFError`.
public func CFErrorGetDomain(_ err: CFError!) -> CFErrorDomain! { err.domain as NSString }
/// The code of a `CFError`.
public func CFErrorGetCode(_ err: CFError!) -> CFIndex { err.code }
/// The user info of a `CFError`.
public func CFErrorCopyUserInfo(_ err: CFError!) -> CFDictionary! { err.userInfo as NSDictionary }
/// The description of a `CFError`.
public func CFErrorCopyDescription(_ err: CFError!) -> CFString! { err.localizedDescription as NSString }

// On Apple platforms an `NSString` key and the `String` with the same text are
// one key of an `[AnyHashable: Any]` (and of a bridged dictionary): a `CFString`
// constant finds the entry a `String` made, and the other way round.
extension NSString: @retroactive _HasCustomAnyHashableRepresentation {
    public func _toCustomAnyHashable() -> AnyHashable? { AnyHashable(String(self)) }
}
