#if canImport(Glibc)
import Glibc
#endif
import AppHomeSystem
import CommandSupport
import PrefsdCommand

let console = ProcessConsole()
let configuration = Configuration(variable: { getenv($0).map { String(cString: $0) } })
let status = PrefsdCommand.run(Array(CommandLine.arguments.dropFirst()),
                               environment: .init(configuration: configuration, pid: getpid(), uid: getuid()), console: console)
console.flush()
exit(status)
