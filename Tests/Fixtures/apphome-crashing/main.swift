// A test build of `apphome` that dies by SIGKILL right after the journaled
// step named in `APPHOME_TEST_KILL_AT`, through the injected step hook. The
// shipped `apphome` has no such hook and never reads that variable.
#if canImport(Glibc)
import Glibc
#endif
import AppHomeCommand
import AppHomeSystem
import CommandSupport
import Containers

let console = ProcessConsole()
let step = getenv("APPHOME_TEST_KILL_AT").map { String(cString: $0) } ?? ""
let environment = AppHomeEnvironment(configuration: Configuration(variable: { getenv($0).map { String(cString: $0) } }),
                                     stepHook: { done throws(ContainersError) in if done == step { kill(getpid(), SIGKILL) } })
let status = CommandLineArguments.run(CommandLineArguments.processBytes(), command: "apphome", console: console) { arguments in
    AppHomeCommand.run(arguments, environment: environment, console: console)
}
console.flush()
exit(status)
