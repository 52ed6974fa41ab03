// An app's own code on AppHome, for the Security module's tests: the SecItem
// calls an iOS app makes, written as they are written there.
//
//   secitem-probe add SERVICE ACCOUNT SECRET [GROUP]
//   secitem-probe get SERVICE ACCOUNT [GROUP]      prints the secret, then the status
//   secitem-probe update SERVICE ACCOUNT SECRET
//   secitem-probe delete SERVICE ACCOUNT
//   secitem-probe all                              prints service/account of every item
//   secitem-probe api                              the API cases of AppSecItemTests, one line each
// Each prints `status N: MESSAGE` last; exit 0 on errSecSuccess, else 1.
import Foundation
import Security

func finish(_ status: OSStatus) -> Never {
    let message = SecCopyErrorMessageString(status, nil).map { String($0) } ?? ""
    print("status \(status): \(message)")
    exit(status == errSecSuccess ? 0 : 1)
}

let args = Array(CommandLine.arguments.dropFirst())
guard let verb = args.first else { print("usage: secitem-probe add|get|update|delete|all ..."); exit(2) }
switch (verb, args.count) {
case ("add", 4), ("add", 5):
    var query: [String: Any] = [kSecClass as String: kSecClassGenericPassword,
                                kSecAttrService as String: args[1],
                                kSecAttrAccount as String: args[2],
                                kSecValueData as String: Data(args[3].utf8)]
    if args.count == 5 { query[kSecAttrAccessGroup as String] = args[4] }
    finish(SecItemAdd(query as CFDictionary, nil))
case ("get", 3), ("get", 4):
    var query: [CFString: AnyObject] = [kSecClass: kSecClassGenericPassword,
                                        kSecAttrService: args[1] as CFString,
                                        kSecAttrAccount: args[2] as CFString,
                                        kSecReturnData: kCFBooleanTrue!,
                                        kSecMatchLimit: kSecMatchLimitOne]
    if args.count == 4 { query[kSecAttrAccessGroup] = args[3] as CFString }
    var result: CFTypeRef?
    let status = SecItemCopyMatching(query as CFDictionary, &result)
    if status == errSecSuccess, let data = result as? Data { print(String(decoding: data, as: UTF8.self)) }
    finish(status)
case ("update", 4):
    let query = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: args[1], kSecAttrAccount as String: args[2]] as [String: Any]
    let changes = [kSecValueData as String: Data(args[3].utf8)]
    finish(SecItemUpdate(query as CFDictionary, changes as CFDictionary))
case ("delete", 3):
    let query = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: args[1], kSecAttrAccount as String: args[2]] as [String: Any]
    finish(SecItemDelete(query as CFDictionary))
case ("all", 1):
    let query: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecMatchLimit as String: kSecMatchLimitAll,
                                kSecReturnAttributes as String: true]
    var result: AnyObject?
    let status = SecItemCopyMatching(query as CFDictionary, &result)
    for item in result as? [[String: Any]] ?? [] {
        print("\(item[kSecAttrService as String] as? String ?? "?")/\(item[kSecAttrAccount as String] as? String ?? "?")")
    }
    finish(status)
case ("api", 1):
    api()
    finish(errSecSuccess)
default:
    print("usage: secitem-probe add|get|update|delete|all ...")
    exit(2)
}

/// `label: status` (and what came back) for each case, as iOS code writes it.
func api() {
    func line(_ label: String, _ status: OSStatus, _ extra: String = "") {
        print("\(label): \(status)\(extra.isEmpty ? "" : " " + extra)")
    }
    let web: [String: Any] = [kSecClass as String: kSecClassInternetPassword, kSecAttrServer as String: "example.com",
                              kSecAttrProtocol as String: kSecAttrProtocolHTTPS, kSecAttrPort as String: 443,
                              kSecAttrPath as String: "/login", kSecAttrAccount as String: "ray",
                              kSecAttrAuthenticationType as String: kSecAttrAuthenticationTypeHTMLForm,
                              kSecAttrLabel as String: "Example", kSecValueData as String: Data("pw1".utf8)]
    line("add internet password", SecItemAdd(web as CFDictionary, nil))
    var result: CFTypeRef?
    let all: [String: Any] = [kSecClass as String: kSecClassInternetPassword, kSecMatchLimit as String: kSecMatchLimitAll,
                              kSecReturnAttributes as String: true, kSecReturnData as String: kCFBooleanTrue!,
                              kSecReturnPersistentRef as String: true]
    var status = SecItemCopyMatching(all as CFDictionary, &result)
    let items = result as? [[String: Any]] ?? []
    let first = items.first ?? [:]
    line("copy all", status, "\(items.count) item(s): " + [kSecClass, kSecAttrServer, kSecAttrProtocol, kSecAttrAuthenticationType, kSecAttrAccessible, kSecAttrLabel].map {
        "\($0)=\(first[$0 as String].map { "\($0)" } ?? "nil")" }.joined(separator: " ")
        + " port=\(first[kSecAttrPort as String] as? Int ?? -1) data=\((first[kSecValueData as String] as? Data).map { String(decoding: $0, as: UTF8.self) } ?? "nil")"
        + " created=\(first[kSecAttrCreationDate as String] is Date)")
    if let ref = first[kSecValuePersistentRef as String] as? Data {
        result = nil
        status = SecItemCopyMatching([kSecClass: kSecClassInternetPassword, kSecValuePersistentRef: ref, kSecReturnData: true] as CFDictionary, &result)
        line("by persistent ref", status, (result as? Data).map { String(decoding: $0, as: UTF8.self) } ?? "nil")
    } else {
        line("by persistent ref", errSecItemNotFound, "no persistent ref returned")
    }
    status = SecItemCopyMatching([kSecClass: kSecClassInternetPassword, kSecValuePersistentRef: Data("forged".utf8)] as CFDictionary, nil)
    line("forged persistent ref", status)

    var error: Unmanaged<CFError>?
    let control = SecAccessControlCreateWithFlags(kCFAllocatorDefault, kSecAttrAccessibleWhenUnlockedThisDeviceOnly, .biometryCurrentSet, &error)!
    status = SecItemAdd([kSecClass: kSecClassGenericPassword, kSecAttrService: "bio", kSecAttrAccessControl: control,
                         kSecValueData: Data("x".utf8)] as CFDictionary, nil)
    line("access control with biometry", status, SecCopyErrorMessageString(status, nil).map { String($0) } ?? "")
    let plain = SecAccessControlCreateWithFlags(nil, kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly, [], &error)!
    status = SecItemAdd([kSecClass: kSecClassGenericPassword, kSecAttrService: "plain", kSecAttrAccessControl: plain,
                         kSecValueData: Data("y".utf8)] as CFDictionary, nil)
    result = nil
    let found = SecItemCopyMatching([kSecClass: kSecClassGenericPassword, kSecAttrService: "plain", kSecReturnAttributes: true] as CFDictionary, &result)
    line("access control, protection only", status, "\(found) pdmn=\((result as? [String: Any])?[kSecAttrAccessible as String] ?? "nil")")

    line("key class", SecItemCopyMatching([kSecClass: kSecClassKey] as CFDictionary, nil))
    line("unknown key", SecItemCopyMatching([kSecClass: kSecClassGenericPassword, "nonsense": 1] as CFDictionary, nil))
    line("no class", SecItemCopyMatching([kSecAttrService: "plain"] as CFDictionary, nil))
    line("update with a return key", SecItemUpdate([kSecClass: kSecClassGenericPassword, kSecReturnData: true] as CFDictionary,
                                                   [kSecAttrLabel: "x"] as CFDictionary))
    line("creator", SecItemAdd([kSecClass: kSecClassGenericPassword, kSecAttrService: "c", kSecAttrCreator: "abcd"] as CFDictionary, nil))

    line("add synchronizable", SecItemAdd([kSecClass: kSecClassGenericPassword, kSecAttrService: "sync", kSecAttrSynchronizable: kCFBooleanTrue!,
                                           kSecValueData: Data("s".utf8)] as CFDictionary, nil))
    line("find it without synchronizable", SecItemCopyMatching([kSecClass: kSecClassGenericPassword, kSecAttrService: "sync"] as CFDictionary, nil))
    line("find it with kSecAttrSynchronizableAny", SecItemCopyMatching([kSecClass: kSecClassGenericPassword, kSecAttrService: "sync",
                                                                      kSecAttrSynchronizable: kSecAttrSynchronizableAny] as CFDictionary, nil))
    result = nil
    status = SecItemAdd([kSecClass: kSecClassGenericPassword, kSecAttrService: "ret", kSecValueData: Data("r".utf8),
                         kSecReturnData: true, kSecUseDataProtectionKeychain: true] as CFDictionary, &result)
    line("add returning data", status, (result as? Data).map { String(decoding: $0, as: UTF8.self) } ?? "nil")
    line("delete all generic passwords", SecItemDelete([kSecClass: kSecClassGenericPassword, kSecAttrSynchronizable: kSecAttrSynchronizableAny] as CFDictionary))
    line("then none is found", SecItemCopyMatching([kSecClass: kSecClassGenericPassword, kSecAttrSynchronizable: kSecAttrSynchronizableAny] as CFDictionary, nil))
}
