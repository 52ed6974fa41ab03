#if canImport(Glibc)
import Glibc
#endif
import AppHomeSystem
import CommandSupport
import DefaultsCommand

let console = ProcessConsole()
// `@Sendable`: a closure of top-level code is otherwise main-actor isolated, and Swift 6 checks
// that isolation at run time on every look-up.
let configuration = Configuration(variable: { @Sendable in getenv($0).map { String(cString: $0) } })
let status = CommandLineArguments.run(CommandLineArguments.processBytes(), command: "defaults", console: console) { arguments in
    DefaultsCommand.run(arguments, configuration: configuration, console: console)
}
console.flush()
exit(status)
