// keychainbench: in-process keychain look-ups for bench/keychain.sh (see KeychainBench).
#if canImport(Glibc)
import Glibc
#endif
import Keychain
import KeychainSecretService

exit(KeychainBench.main(Array(CommandLine.arguments.dropFirst()), secretStore: getenv("DBUS_SESSION_BUS_ADDRESS") != nil ? LibSecretStore() : nil))
