// secitembench <service> <account> <count>: an app's look-ups with the Security
// module (bench/keychain.sh runs it inside `apphome run`): the first
// SecItemCopyMatching of the process (the keychain opened, prefsd connected)
// on its own, then `count` more; prints one line each.
import Foundation
import Security

func now() -> Double {
    var t = timespec()
    clock_gettime(CLOCK_MONOTONIC, &t)
    return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
}

let args = Array(CommandLine.arguments.dropFirst())
guard args.count == 3, let count = Int(args[2]), count > 0 else {
    FileHandle.standardError.write(Data("usage: secitembench <service> <account> <count>\n".utf8))
    exit(2)
}
let query = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: args[0], kSecAttrAccount as String: args[1],
             kSecReturnData as String: kCFBooleanTrue!, kSecMatchLimit as String: kSecMatchLimitOne] as [String: Any] as CFDictionary

func lookUp(_ query: CFDictionary) -> Int {
    var result: CFTypeRef?
    let status = SecItemCopyMatching(query, &result)
    guard status == errSecSuccess, let data = result as? Data else {
        FileHandle.standardError.write(Data("secitembench: \(SecCopyErrorMessageString(status, nil) ?? "") (\(status))\n".utf8))
        exit(1)
    }
    return data.count
}

let first = now()
var bytes = lookUp(query)
let firstTime = now() - first
let start = now()
for _ in 0..<count { bytes &+= lookUp(query) }
let total = now() - start
print(String(format: "SecItemCopyMatching, first call of the process: %.1f µs", firstTime * 1e6))
print(String(format: "SecItemCopyMatching: %d look-ups in %.3f s, %.1f µs per look-up (%d secret bytes)", count, total, total / Double(count) * 1e6, bytes))
