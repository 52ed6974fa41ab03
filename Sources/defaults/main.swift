#if canImport(Glibc)
import Glibc
#endif
import AppHomeSystem
import CommandSupport
import DefaultsCommand

let console = ProcessConsole()
let configuration = Configuration(variable: { getenv($0).map { String(cString: $0) } })
let status = CommandLineArguments.run(CommandLineArguments.processBytes(), command: "defaults", console: console) { arguments in
    DefaultsCommand.run(arguments, configuration: configuration, console: console)
}
console.flush()
exit(status)
