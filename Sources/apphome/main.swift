import AppHomeCommand
import CommandSupport

CommandMain.run(command: "apphome") { arguments, configuration, console in
    AppHomeCommand.run(arguments, environment: AppHomeEnvironment(configuration: configuration), console: console, prompter: TerminalPrompter())
}
