#if canImport(Glibc)
import Glibc
#endif
import AppHomeSystem
import CommandSupport
import PrefsdCommand

let console = ProcessConsole()
let configuration = Configuration(variable: { getenv($0).map { String(cString: $0) } })
let status = CommandLineArguments.run(CommandLineArguments.processBytes(), command: "prefsd", console: console) { arguments in
    PrefsdCommand.run(arguments, environment: .init(configuration: configuration, pid: getpid(), uid: getuid()), console: console)
}
console.flush()
exit(status)
