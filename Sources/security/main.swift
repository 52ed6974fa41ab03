#if canImport(Glibc)
import Glibc
#endif
import AppHomeSystem
import CommandSupport
import Keychain
import KeychainSecretService
import SecurityCommand

ProcessHardening.disableCoreDumps()
let console = ProcessConsole()
let configuration = Configuration(variable: { getenv($0).map { String(cString: $0) } })
let environment = SecurityEnvironment(configuration: configuration, standardInputIsTerminal: isatty(0) != 0)
let status = CommandLineArguments.run(CommandLineArguments.processBytes(), command: "security", console: console, secretAfter: SecurityCommand.secretOptions) { arguments in
    SecurityCommand.run(arguments, environment: environment, console: console, prompter: TerminalPrompter())
}
console.flush()
exit(status)
