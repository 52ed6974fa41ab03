#if canImport(Glibc)
import Glibc
#endif
import CommandSupport
import PlutilCommand

let console = ProcessConsole()
let status = CommandLineArguments.run(CommandLineArguments.processBytes(), command: "plutil", console: console) { arguments in
    PlutilCommand.run(arguments, console: console)
}
console.flush()
exit(status)
