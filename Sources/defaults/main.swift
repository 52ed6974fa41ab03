import CommandSupport
import DefaultsCommand

CommandMain.run(command: "defaults") { arguments, configuration, console in
    DefaultsCommand.run(arguments, configuration: configuration, console: console)
}
