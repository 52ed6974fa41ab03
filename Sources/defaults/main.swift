#if canImport(Glibc)
import Glibc
#endif
import CommandSupport
import DefaultsCommand

func variable(_ name: String) -> String? { getenv(name).map { String(cString: $0) } }

let console = ProcessConsole()
let status = DefaultsCommand.run(
    Array(CommandLine.arguments.dropFirst()),
    environment: DefaultsEnvironment(apphomeRoot: variable("APPHOME_ROOT"), xdgDataHome: variable("XDG_DATA_HOME"), home: variable("HOME"),
                                     prefsdMode: variable("APPHOME_PREFSD"), socket: variable("APPHOME_SOCKET"),
                                     runtimeDirectory: variable("XDG_RUNTIME_DIR")),
    console: console
)
console.flush()
exit(status)
