#if canImport(Glibc)
import Glibc
#endif
import AppHomeSystem
import CommandSupport
import DefaultsCommand

let console = ProcessConsole()
let configuration = Configuration(variable: { getenv($0).map { String(cString: $0) } })
let status = DefaultsCommand.run(Array(CommandLine.arguments.dropFirst()), configuration: configuration, console: console)
console.flush()
exit(status)
