// keychainbench: in-process keychain look-ups for bench/keychain.sh (see KeychainBench).
#if canImport(Glibc)
import Glibc
#endif
import Keychain
import KeychainSecretService

var variables: [String: String] = [:]
for name in ["DBUS_SESSION_BUS_ADDRESS", "APPHOME_KEYCHAIN_KEY_STORE", "APPHOME_KEYCHAIN_KEY_CACHE"] {
    if let value = getenv(name) { variables[name] = String(cString: value) }
}
let policy = DeviceKeyPolicy.forEnvironment(variables)
exit(KeychainBench.main(Array(CommandLine.arguments.dropFirst()), secretStore: policy.secretStore, kernelKeys: policy.kernelKeys))
