// keychainbench: in-process keychain look-ups for bench/keychain.sh (see KeychainBench).
#if canImport(Glibc)
import Glibc
#endif
import AppHomeSystem
import Keychain
import KeychainSecretService

let policy = DeviceKeyPolicy(configuration: Configuration(variable: { getenv($0).map { String(cString: $0) } }))
exit(KeychainBench.main(Array(CommandLine.arguments.dropFirst()), secretStore: policy.secretStore, kernelKeys: policy.kernelKeys))
