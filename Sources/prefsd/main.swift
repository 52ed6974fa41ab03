#if canImport(Glibc)
import Glibc
#endif
import CommandSupport
import PrefsdCommand

CommandMain.run(command: "prefsd") { arguments, configuration, console in
    PrefsdCommand.run(arguments, environment: .init(configuration: configuration, pid: getpid(), uid: getuid()), console: console)
}
