#if canImport(Glibc)
import Glibc
#endif
import AppHomeCommand
import CommandSupport
import Keychain

let variables = ProcessVariables.all()
let console = ProcessConsole()
let status = AppHomeCommand.run(Array(CommandLine.arguments.dropFirst()), environment: AppHomeEnvironment(variables: variables), console: console,
                                prompter: TerminalPrompter())
console.flush()
exit(status)
