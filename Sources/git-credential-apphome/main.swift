#if canImport(Glibc)
import Glibc
#endif
import AppHomeSystem
import CommandSupport
import GitCredential
import Keychain
import KeychainSecretService

ProcessHardening.disableCoreDumps()
let console = ProcessConsole()
let configuration = Configuration(variable: { getenv($0).map { String(cString: $0) } })
let status = GitCredentialHelper.run(Array(CommandLine.arguments.dropFirst()), configuration: configuration, console: console)
console.flush()
exit(status)
