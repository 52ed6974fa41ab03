#if canImport(Glibc)
import Glibc
#endif
import CommandSupport
import PrefsdCommand

let variables = ProcessVariables.all()
let console = ProcessConsole()
let status = PrefsdCommand.run(Array(CommandLine.arguments.dropFirst()),
                               environment: .init(variables: variables, pid: getpid(), uid: getuid()), console: console)
console.flush()
exit(status)
