#if canImport(Glibc)
import Glibc
#endif
import AppHomeSystem
import CommandSupport
import KeychainSecretService

/// The `main` of the two `security` programs.
///
/// `security` is linked statically in release builds (no shared library
/// to load and relocate at start-up: half of its time through prefsd went
/// there), and a static program cannot load libsecret. So it never does:
/// when a command would open the keychain's files with the device key in
/// the Secret Service (no prefsd answering), or lock or unlock that store,
/// it runs the same command line in `security-secret-service`, the same
/// code linked dynamically, before it has read or written anything
/// (``SecurityEnvironment/secretServiceHandOff``).
public enum SecurityMain {
    /// The sibling's name.
    public static let sibling = "security-secret-service"

    /// Runs `security` and exits. `handsOffSecretService`: this is the
    /// static `security` (never loads libsecret; hands such commands to the
    /// sibling); `false`: the sibling itself.
    public static func run(handsOffSecretService: Bool) -> Never {
        ProcessHardening.disableCoreDumps()
        var handOff: (@Sendable () -> Void)?
        if handsOffSecretService {
            LibSecretStore.forbidLoading("security cannot reach the Secret Service itself, and \(sibling) was not run")
            handOff = { handOffToSibling() }
        }
        CommandMain.run(command: "security", secretAfter: SecurityCommand.secretOptions) { arguments, configuration, console in
            let environment = SecurityEnvironment(configuration: configuration, standardInputIsTerminal: isatty(0) != 0,
                                                  secretServiceHandOff: handOff)
            return SecurityCommand.run(arguments, environment: environment, console: console, prompter: TerminalPrompter())
        }
    }

    /// Replaces this process with the sibling, same arguments and
    /// environment; if that fails, says why and exits 1.
    /// Nothing has been written yet when it is called (the keychain is
    /// chosen before a verb reads or prints anything).
    private static func handOffToSibling() -> Never {
        SiblingProgram(name: sibling).replaceProcess { why in
            "security: this command needs the Secret Service (the device key is kept there), which security reaches "
                + "through \(sibling), but \(why); reinstall AppHome, or run prefsd\n"
        }
    }
}
