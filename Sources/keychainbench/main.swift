// keychainbench: in-process keychain look-ups for bench/keychain.sh (see
// KeychainBench and ClientBench).
#if canImport(Glibc)
import Glibc
#endif
import AppHomeSystem
import Keychain
import KeychainClient
import KeychainSecretService

let configuration = Configuration(variable: { getenv($0).map { String(cString: $0) } })
let arguments = Array(CommandLine.arguments.dropFirst())
switch arguments.first {
case "--app-keychain": exit(ClientBench.appKeychain(Array(arguments.dropFirst()), configuration: configuration))
case "--credentials": exit(ClientBench.credentials(Array(arguments.dropFirst())))
default:
    let policy = DeviceKeyPolicy(configuration: configuration)
    exit(KeychainBench.main(arguments, secretStore: policy.secretStore, kernelKeys: policy.kernelKeys))
}
