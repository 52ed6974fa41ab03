// keychainbench: in-process keychain look-ups for bench/keychain.sh (see KeychainBench).
#if canImport(Glibc)
import Glibc
#endif
import Keychain

exit(KeychainBench.main(Array(CommandLine.arguments.dropFirst()), sessionBus: getenv("DBUS_SESSION_BUS_ADDRESS") != nil))
