#if canImport(Glibc)
import Glibc
#endif
import AppHomeCommand
import AppHomeSystem
import CommandSupport

let console = ProcessConsole()
let configuration = Configuration(variable: { getenv($0).map { String(cString: $0) } })
let status = CommandLineArguments.run(CommandLineArguments.processBytes(), command: "apphome", console: console) { arguments in
    AppHomeCommand.run(arguments, environment: AppHomeEnvironment(configuration: configuration), console: console, prompter: TerminalPrompter())
}
console.flush()
exit(status)
