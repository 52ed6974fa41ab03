import CommandSupport
import SecretServiceProvider

CommandMain.run(command: "apphome-secretd") { arguments, configuration, console in
    SecretServiceCommand.run(arguments, configuration: configuration, console: console)
}
