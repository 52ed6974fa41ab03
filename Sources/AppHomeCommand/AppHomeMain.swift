import CommandSupport
import KeychainSecretService

/// The `main` of the two `apphome` programs.
///
/// `apphome` is linked statically in release builds, like `defaults` and
/// `security`: `apphome run` starts every sandboxed app, and a dynamic
/// program spent two milliseconds of that start loading and relocating its
/// shared libraries. A static program cannot load libsecret, so it never
/// does: it runs ``AppHomeCommand/staticVerbs`` itself (they never reach the
/// keychain's device key), and for any other verb it runs the same command
/// line in `apphome-secret-service`, the same code linked dynamically,
/// before the verb has read or written anything.
public enum AppHomeMain {
    /// The sibling's name.
    public static let sibling = "apphome-secret-service"

    /// Runs `apphome` and exits. `handsOffSecretService`: this is the static
    /// `apphome` (never loads libsecret; hands other verbs to the sibling);
    /// `false`: the sibling itself.
    public static func run(handsOffSecretService: Bool) -> Never {
        var handOff: (@Sendable () -> Void)?
        if handsOffSecretService {
            LibSecretStore.forbidLoading("apphome cannot reach the Secret Service itself, and \(sibling) was not run")
            handOff = {
                SiblingProgram(name: sibling).replaceProcess { why in
                    "apphome: this command may need the Secret Service (the keychain's device key is kept there), which apphome "
                        + "reaches through \(sibling), but \(why); reinstall AppHome\n"
                }
            }
        }
        CommandMain.run(command: "apphome") { arguments, configuration, console in
            AppHomeCommand.run(arguments, environment: AppHomeEnvironment(configuration: configuration, secretServiceHandOff: handOff),
                               console: console, prompter: TerminalPrompter())
        }
    }
}

extension AppHomeCommand {
    /// The verbs the static `apphome` runs itself: starting an app, looking
    /// up what is installed and starting the Settings app (`apphome-settings`)
    /// never open the keychain.
    public static let staticVerbs: Set<String> = ["run", "launch", "list", "container", "settings"]
}
