import CommandSupport
import SettingsServer

CommandMain.run(command: "apphome settings") { arguments, configuration, console in
    SettingsServerCommand.run(arguments, configuration: configuration, console: console)
}
