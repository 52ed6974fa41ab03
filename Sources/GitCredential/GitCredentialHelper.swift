import AppHomeSystem
import CommandSupport
import Keychain
import KeychainClient

/// `git-credential-apphome get|store|erase`: git's credential helper
/// protocol on internet passwords in the user's login keychain.
///
/// A credential is an internet password with git's protocol, host, port,
/// path and username as the item's protocol (``GitCredentialRequest/keychainProtocol(_:)``),
/// server, port (0 for none), path and account. `get` answers only for the
/// same protocol, host and port, and the same path when git sends one (and
/// the same username when git sends one); `store` replaces the matching
/// item's secret or adds one; `erase` removes the matches. Secrets travel
/// on standard input and output only.
///
/// The login keychain is the user's: in an app's context (inside
/// `apphome run` or `launch`) every operation is refused, with or without
/// prefsd, before anything is read or written.
public enum GitCredentialHelper {
    /// Its operations and options: what its help, `git-credential-apphome.1`
    /// and the completions are checked against.
    public static let reference = CommandReference(
        command: "git-credential-apphome", options: ["--help", "-h", "--version"],
        verbs: [.init("get"), .init("store"), .init("erase"), .init("help")])

    /// The usage (`--help` on standard output; a wrong command line on standard error).
    static let usage = """
    usage: git-credential-apphome get|store|erase
      A git credential helper (gitcredentials(7)) on the login keychain: git runs it
      with one operation and the credential on standard input.
      get      print the stored username and password for the protocol, host and port
      store    store the credential (replacing the matching item's secret)
      erase    remove the matching items
      help     print this help (also --help, -h); --version prints the version

    """

    /// Runs the helper; the exit status: 0 (also for a `get` that finds
    /// nothing, which git expects), 1 for a failure, 2 for a usage error.
    ///
    /// - Parameters:
    ///   - arguments: the operation (git passes one word).
    ///   - configuration: the root and how to reach prefsd.
    ///   - console: standard input and output.
    public static func run(_ arguments: [String], configuration: Configuration, console: Console) -> Int32 {
        let name = "git-credential-apphome"
        guard arguments.count == 1, let operation = arguments.first else {
            console.err(usage)
            return 2
        }
        if operation == "help" || CommandReference.isHelpFlag(operation) {
            console.out(usage)
            return 0
        }
        if operation == "--version" {
            console.out(AppHomeVersion.line(command: name))
            return 0
        }
        // git may call helpers with operations they do not know: ignore them.
        guard ["get", "store", "erase"].contains(operation) else { return 0 }
        if configuration.inAppContext {
            console.err("\(name): \(AppKeychainError.loginFromApp(configuration.bundleIdentifier ?? configuration.appHome ?? "").description)\n")
            return 1
        }
        let request: GitCredentialRequest
        do throws(GitCredentialRequest.Problem) { request = try GitCredentialRequest(parsing: console.readStandardInput()) } catch {
            console.err("\(name): \(error.description)\n")
            return 1
        }
        guard let root = configuration.root else {
            console.err("\(name): cannot find the AppHome root: set APPHOME_ROOT or HOME\n")
            return 1
        }
        do {
            let keychain = try AppKeychain(loginAt: root, configuration: configuration)
            switch operation {
            case "get": try get(request, keychain, console)
            case "store": try store(request, keychain)
            default: try erase(request, keychain)
            }
            return 0
        } catch {
            console.err("\(name): \(error)\n")
            return 1
        }
    }

    /// The query for `request`: protocol, host and port always (so that no
    /// other server or port is answered), path and username when given.
    static func query(_ r: GitCredentialRequest) throws(GitCredentialRequest.Problem) -> ItemQuery {
        guard let proto = r.protocol, !proto.isEmpty else { throw .missing("protocol") }
        guard let host = r.host, !host.isEmpty else { throw .missing("host") }
        var q = ItemQuery(itemClass: .internetPassword)
        q.protocol = GitCredentialRequest.keychainProtocol(proto)
        q.server = host
        q.port = r.port ?? 0
        q.path = r.path
        q.account = r.username
        return q
    }

    static func get(_ r: GitCredentialRequest, _ keychain: AppKeychain, _ console: Console) throws {
        var q = try query(r)
        q.returnData = true
        q.returnAttributes = true
        let found: [ItemResult]
        do throws(KeychainError) { found = try keychain.copyMatching(q) } catch {
            if case .itemNotFound = error { return }
            throw error
        }
        guard let item = found.first, let data = item.data, let attributes = item.attributes else { return }
        // The username is written into the stream too: one holding a line end
        // or a NUL (added with `security`) could forge the lines after it.
        guard !attributes.account.utf8.contains(where: { $0 == 0x0A || $0 == 0x0D || $0 == 0 }) else {
            throw UnsendableUsername(account: attributes.account, server: attributes.server)
        }
        // git's protocol is lines of bytes: a password goes out exactly as
        // stored (UTF-8 or not), unless it holds what would end its line.
        var answer = Array("username=\(attributes.account)\npassword=".utf8)
        defer { SecureBytes.wipe(&answer) }
        data.withUnsafeBytes { answer.append(contentsOf: $0) }
        let secret = answer[(answer.count - data.count)...]
        guard !secret.contains(0x0A), !secret.contains(0), secret.last != 0x0D else {
            throw UnsendablePassword(account: attributes.account, server: attributes.server)
        }
        answer.append(0x0A)
        console.out(bytes: answer)
    }

    /// A stored password that git's credential protocol cannot carry: it
    /// holds a line end or a NUL (a multi-line secret added with `security`).
    struct UnsendablePassword: Error, CustomStringConvertible {
        var account: String
        var server: String

        var description: String {
            "the password stored for \(account) at \(server) holds a line end or a NUL, which git's credential protocol cannot carry; it was not sent"
        }
    }

    /// A stored username that would break git's line protocol.
    struct UnsendableUsername: Error, CustomStringConvertible {
        var account: String
        var server: String

        var description: String {
            "the username stored at \(FileNames.escaped(server)) (\"\(FileNames.escaped(account))\", shown escaped) holds a line end or a NUL, which git's credential protocol cannot carry; nothing was sent"
        }
    }

    static func store(_ r: GitCredentialRequest, _ keychain: AppKeychain) throws {
        guard let password = r.password else { throw GitCredentialRequest.Problem.missing("password") }
        guard let username = r.username else { throw GitCredentialRequest.Problem.missing("username") }
        var q = try query(r)
        q.path = r.path ?? ""
        var changes = ItemChanges()
        changes.data = password
        do throws(KeychainError) {
            try keychain.update(q, with: changes)
        } catch {
            guard case .itemNotFound = error else { throw error }
            var a = ItemAttributes(itemClass: .internetPassword)
            a.protocol = q.protocol!
            a.server = q.server!
            a.port = q.port!
            a.path = r.path ?? ""
            a.account = username
            a.label = q.server
            try keychain.add(a, data: password)
        }
    }

    static func erase(_ r: GitCredentialRequest, _ keychain: AppKeychain) throws {
        var q = try query(r)
        q.matchLimit = .all
        do throws(KeychainError) { try keychain.delete(q) } catch {
            guard case .itemNotFound = error else { throw error }
        }
    }
}
