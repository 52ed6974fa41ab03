#if canImport(Glibc)
import Glibc
#endif
import AppHomeSystem
import CGio
import CommandSupport
import Keychain
import KeychainSecretService
import PropertyList

/// `apphome-secretd`: the login keychain as the Secret Service on the
/// session bus, when no other provider is there.
public enum SecretServiceCommand {
    static let help = """
    usage: apphome-secretd [--root <dir>]

    Serves the login keychain as the freedesktop Secret Service
    (org.freedesktop.secrets) on the session bus, so that secret-tool,
    python keyring, git-credential-libsecret, docker-credential-secretservice
    and every other libsecret client keep their secrets in it. It takes the
    name only when no other provider owns it, and never replaces one.

    The keychain's device key must not be in the Secret Service it serves:
    the keychain must keep it in a passphrase key file (`security
    create-keychain`; then `security unlock-keychain` opens it for every
    client) or, with APPHOME_KEYCHAIN_KEY_STORE=file, in a plain key file.

    Options:
      --root <dir>  the AppHome root (default: $APPHOME_ROOT, else
                    $XDG_DATA_HOME/apphome, else ~/.local/share/apphome)
      -h, --help    print this help

    SIGTERM or SIGINT stops it.

    """

    /// Runs the provider until it is told to stop; returns the exit status.
    public static func run(_ arguments: [String], configuration: Configuration, console: Console) -> Int32 {
        do {
            var scanner = ArgumentScanner(arguments)
            var root: String?
            let options: [ArgumentScanner.Option] = [.init("-h"), .init("--help"), .init("help"),
                                                     .init("--root", .required("a value"), empty: "a value")]
            for match in try scanner.allOptions(options, unexpected: { arg, _ in .usage("unknown argument \(arg)") }) {
                switch match.name {
                case "-h", "--help", "help":
                    console.out(help)
                    return 0
                case "--root": root = match.value
                default: break
                }
            }
            guard let root = root ?? configuration.root else {
                throw CommandFailure.failure("cannot find the AppHome root: set APPHOME_ROOT or HOME, or pass --root")
            }
            let keychain = try openKeychain(root: root, configuration: configuration)
            let connection: OpaquePointer
            do { connection = try Bus.session() } catch { throw CommandFailure.failure(error.message) }
            if let owner = Bus.currentOwner(connection) {
                throw CommandFailure.failure("another Secret Service provider (\(owner)) owns org.freedesktop.secrets; AppHome never replaces one")
            }
            let provider: Provider
            do {
                provider = try Provider(connection: connection, keychain: keychain, limits: ProviderLimits(), now: { PlistDate(secondsSince1970: SystemClock.secondsSince1970()) })
                try provider.register()
            } catch { throw CommandFailure.failure(error.message) }
            if let refused = Bus.requestName(connection) {
                throw CommandFailure.failure("\(refused); AppHome never replaces one")
            }
            let store = (try? keychain.deviceKeyStore()).flatMap { $0 }
            console.err("apphome-secretd: serving org.freedesktop.secrets: the login keychain under \(root) (device key in the \(store == .passphraseFile ? "passphrase key file" : "key file"))\n")
            console.flushOutput()
            let loop = g_main_loop_new(nil, 0)
            let quit: GSourceFunc = { loop in g_main_loop_quit(OpaquePointer(loop)); return 0 }
            g_unix_signal_add(SIGTERM, quit, UnsafeMutableRawPointer(loop))
            g_unix_signal_add(SIGINT, quit, UnsafeMutableRawPointer(loop))
            g_main_loop_run(loop)
            return 0
        } catch {
            return CommandFailure.report(error, command: "apphome-secretd", help: "Run 'apphome-secretd --help' for its options.", to: console)
        }
    }

    /// The login keychain, on the condition that its device key is not in
    /// the Secret Service (which would be this process asking itself).
    static func openKeychain(root: String, configuration: Configuration) throws -> Keychain {
        let lifetime: DeviceKeyPolicy.KernelKeyLifetime = switch configuration.keyCacheSeconds {
        case nil: .untilReboot
        case 0?: .off
        case let n?: .seconds(n)
        }
        // No Secret Service in the policy: this process is the Secret Service.
        let policy = DeviceKeyPolicy(secretStore: nil, forceFile: true, kernelKeys: lifetime, keyCache: LibSecretStore())
        // A long-running reader: the keychain's files are parsed again only when they change.
        let keychain = Keychain(root: root, policy: policy, now: { PlistDate(secondsSince1970: SystemClock.secondsSince1970()) },
                                readCache: KeychainReadCache())
        let store: DeviceKeyStoreKind?
        do { store = try keychain.deviceKeyStore() } catch { throw CommandFailure.failure("the login keychain under \(root) cannot be read: \(error)") }
        switch store {
        case .secretService?:
            throw CommandFailure.failure("""
                the login keychain under \(root) keeps its device key in the Secret Service, which this service would then have to ask itself for; \
                serve a keychain whose key is in a passphrase key file (`security create-keychain` under an empty root) \
                or in the key file (made with APPHOME_KEYCHAIN_KEY_STORE=file)
                """)
        case .passphraseFile?, .file?:
            return keychain
        case nil:
            guard configuration.keyStore == .file else {
                throw CommandFailure.failure("""
                    there is no login keychain under \(root) yet: make one with a passphrase (`security create-keychain`), \
                    or set APPHOME_KEYCHAIN_KEY_STORE=file to keep its key in a plain key file
                    """)
            }
            do { try keychain.createIfAbsent() } catch { throw CommandFailure.failure("cannot make the login keychain under \(root): \(error)") }
            return keychain
        }
    }
}
