#if canImport(Glibc)
import Glibc
#endif
import CommandSupport
import Keychain
import KeychainSecretService
import SecurityCommand

ProcessHardening.disableCoreDumps()
let variables = ProcessVariables.all()
let console = ProcessConsole()
let environment = SecurityEnvironment(variables: variables, standardInputIsTerminal: isatty(0) != 0)
let status = SecurityCommand.run(Array(CommandLine.arguments.dropFirst()), environment: environment, console: console, prompter: TerminalPrompter())
console.flush()
exit(status)
