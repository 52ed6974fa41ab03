import Foundation
import Security
import Testing

/// The Security module as code written for Apple platforms spells it: the
/// constants' values, the bridged CoreFoundation types, the status codes.
@Suite("Security: Apple's SecItem API as Swift sees it")
struct SecurityAPITests {
    @Test func constantsHaveApplesStringValues() {
        let expected: [(CFString, String)] = [
            (kSecClass, "class"), (kSecClassGenericPassword, "genp"), (kSecClassInternetPassword, "inet"),
            (kSecAttrAccessGroup, "agrp"), (kSecAttrAccessible, "pdmn"), (kSecAttrAccessControl, "accc"),
            (kSecAttrAccount, "acct"), (kSecAttrService, "svce"), (kSecAttrServer, "srvr"), (kSecAttrProtocol, "ptcl"),
            (kSecAttrSynchronizable, "sync"), (kSecAttrSynchronizableAny, "syna"), (kSecAttrGeneric, "gena"),
            (kSecAttrLabel, "labl"), (kSecAttrComment, "icmt"), (kSecAttrDescription, "desc"),
            (kSecMatchLimit, "m_Limit"), (kSecMatchLimitOne, "m_LimitOne"), (kSecMatchLimitAll, "m_LimitAll"),
            (kSecReturnData, "r_Data"), (kSecReturnAttributes, "r_Attributes"), (kSecReturnRef, "r_Ref"),
            (kSecReturnPersistentRef, "r_PersistentRef"), (kSecValueData, "v_Data"), (kSecValuePersistentRef, "v_PersistentRef"),
            (kSecAttrAccessibleWhenUnlocked, "ak"), (kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly, "cku"),
            (kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly, "akpu"), (kSecUseDataProtectionKeychain, "nleg"),
            (kSecAttrProtocolHTTPS, "htps"), (kSecAttrProtocolFTP, "ftp "), (kSecAttrAuthenticationTypeHTMLForm, "form"),
        ]
        for (constant, value) in expected { #expect(constant as String == value) }
    }

    @Test func statusCodesHaveApplesValuesAndMessages() {
        #expect(errSecItemNotFound == -25300 && errSecDuplicateItem == -25299 && errSecParam == -50)
        #expect(errSecMissingEntitlement == -34018 && errSecInteractionNotAllowed == -25308 && errSecUnimplemented == -4)
        #expect(errSecSuccess == noErr)
        #expect(SecCopyErrorMessageString(errSecDuplicateItem, nil).map { String($0) } == "The specified item already exists in the keychain.")
        #expect(SecCopyErrorMessageString(errSecItemNotFound, nil).map { String($0) } == "The specified item could not be found in the keychain.")
    }

    @Test func bridgedTypesBehaveAsOnApplePlatforms() {
        // A query made of String keys, passed as CFDictionary, read back with CFString keys.
        let query: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecReturnData as String: kCFBooleanTrue!]
        let cf = query as CFDictionary
        #expect(cf[kSecClass] as? String == "genp")
        // A kSec constant where AnyObject is expected, and a CFString key finding the String's entry.
        let objects: [String: AnyObject] = [kSecAttrService as String: kSecClassGenericPassword]
        #expect(objects.count == 1)
        let mixed: [AnyHashable: Any] = [kSecAttrAccount as String: "ray"]
        #expect(mixed[kSecAttrAccount] as? String == "ray")
        #expect((kCFBooleanTrue as Any) as? Bool == true && (kCFBooleanFalse as Any) as? Bool == false)
        let data: CFTypeRef? = NSData(data: Data("x".utf8))
        #expect(data as? Data == Data("x".utf8))
    }

    @Test func anAccessControlNeedingAPersonIsCreatedButItsItemIsRefused() {
        var error: Unmanaged<CFError>?
        let control = SecAccessControlCreateWithFlags(kCFAllocatorDefault, kSecAttrAccessibleWhenUnlocked, .userPresence, &error)
        #expect(control != nil && error == nil)
        let bad = SecAccessControlCreateWithFlags(nil, "nonsense" as CFString, [], &error)
        #expect(bad == nil && error?.takeRetainedValue().code == Int(errSecParam))
    }

    @Test func outsideAnyAppEveryCallIsMissingEntitlementWithHowToRunAsAnApp() {
        let query = [kSecClass as String: kSecClassGenericPassword] as CFDictionary
        let status = SecItemCopyMatching(query, nil)
        #expect(status == errSecMissingEntitlement)
        let message = SecCopyErrorMessageString(status, nil).map { String($0) } ?? ""
        #expect(message.hasPrefix("A required entitlement isn't present.") && message.contains("apphome run"), "\(message)")
    }
}
