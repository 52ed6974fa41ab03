// An app's own code on AppHome, for the Security module's tests: the SecItem
// calls an iOS app makes, written as they are written there.
//
//   secitem-probe add SERVICE ACCOUNT SECRET [GROUP]
//   secitem-probe get SERVICE ACCOUNT [GROUP]      prints the secret, then the status
//   secitem-probe update SERVICE ACCOUNT SECRET
//   secitem-probe delete SERVICE ACCOUNT
//   secitem-probe all                              prints service/account of every item
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
default:
    print("usage: secitem-probe add|get|update|delete|all ...")
    exit(2)
}
