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
let status = CommandLineArguments.run(CommandLineArguments.processBytes(), command: "git-credential-apphome", console: console) { arguments in
    GitCredentialHelper.run(arguments, configuration: configuration, console: console)
}
console.flush()
exit(status)
