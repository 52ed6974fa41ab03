#if canImport(Glibc)
import Glibc
#endif
import AppHomeSystem
import CommandSupport
import SettingsServer

let console = ProcessConsole()
let configuration = Configuration(variable: { getenv($0).map { String(cString: $0) } })
let status = CommandLineArguments.run(CommandLineArguments.processBytes(), command: "apphome settings", console: console) { arguments in
    SettingsServerCommand.run(arguments, configuration: configuration, console: console)
}
console.flush()
exit(status)
