import CommandSupport
import GitCredential
import KeychainSecretService

ProcessHardening.disableCoreDumps()
CommandMain.run(command: "git-credential-apphome") { arguments, configuration, console in
    GitCredentialHelper.run(arguments, configuration: configuration, console: console)
}
