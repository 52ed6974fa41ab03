import Foundation
import Testing

/// PyPI's `keyring` as the client, with `apphome-keyring` installed from
/// contrib/python-keyring into a cached virtual environment
/// (scripts/python-keyring-venv.sh): `keyring set/get/del` with no backend
/// named reach the login keychain through `security` (through prefsd in
/// daemon mode).
@Suite("Python's keyring")
struct PythonKeyringTests {
    let t: TempRoot
    init() throws { t = try TempRoot() }

    /// The virtual environment, made (or brought up to date) by the script.
    static let venv: Result<URL, HarnessError> = {
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let io = FileManager.default.temporaryDirectory.appendingPathComponent("apphome-venv-\(UUID().uuidString)")
        do {
            try FileManager.default.createDirectory(at: io, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: io) }
            let r = try Subprocess.run(URL(fileURLWithPath: "/bin/sh"), [repository.appendingPathComponent("scripts/python-keyring-venv.sh").path],
                                       environment: ProcessInfo.processInfo.environment, ioDirectory: io, timeout: 600)
            guard r.status == 0 else { return .failure(.helper("scripts/python-keyring-venv.sh failed: \(r)")) }
            return .success(URL(fileURLWithPath: r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
        } catch {
            return .failure(.helper("scripts/python-keyring-venv.sh: \(error)"))
        }
    }()

    var environment: [String: String] {
        get throws {
            let bin = try TestDaemon.binary("security").deletingLastPathComponent().path
            return t.environment(["APPHOME_KEYCHAIN_KEY_STORE": "file", "APPHOME_ROOT": t.root.path,
                                  "PATH": bin + ":/usr/bin:/bin"])
        }
    }

    func keyring(_ arguments: [String], stdin: String? = nil) throws -> CommandResult {
        let tool = try Self.venv.get().appendingPathComponent("bin/keyring")
        return try Subprocess.run(tool, arguments, environment: try environment, stdin: stdin.map { Data($0.utf8) }, ioDirectory: t.io)
    }

    func security(_ arguments: [String]) throws -> CommandResult {
        try Subprocess.run(try TestDaemon.binary("security"), ["--root", t.root.path] + arguments,
                           environment: try environment, stdin: Data(), ioDirectory: t.io)
    }

    @Test func keyringSetsGetsAndDeletesAPasswordInTheLoginKeychain() throws {
        try FileManager.default.createDirectory(at: t.root, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let backends = try keyring(["--list-backends"])
        // keyring lists its backends in no fixed order: AppHome's must be there and rank highest.
        let ranked = backends.stdout.split(separator: "\n").compactMap { line -> (String, Double)? in
            guard let open = line.lastIndex(of: "("), line.hasSuffix(")") else { return nil }
            let name = line[..<open].trimmingCharacters(in: .whitespaces)
            let priority = line[line.index(open, offsetBy: 1)..<line.index(before: line.endIndex)].replacingOccurrences(of: "priority: ", with: "")
            return Double(priority).map { (name, $0) }
        }
        #expect(ranked.contains { $0 == ("apphome_keyring.AppHomeKeyring", 10) }, "\(backends)")
        #expect(ranked.max { $0.1 < $1.1 }?.0 == "apphome_keyring.AppHomeKeyring", "\(backends)")

        let set = try keyring(["set", "upload.example.org", "ray"], stdin: "pa55 word\n")
        #expect(set.status == 0, "\(set)")
        let got = try keyring(["get", "upload.example.org", "ray"])
        #expect(got.status == 0 && got.stdout == "pa55 word\n", "\(got)")
        // keyring's service and username are the item's service and account, in the login keychain.
        let found = try security(["find-generic-password", "-s", "upload.example.org", "-a", "ray", "-w"])
        #expect(found.status == 0 && found.stdout == "pa55 word\n", "\(found)")
        // Setting again replaces the password.
        #expect(try keyring(["set", "upload.example.org", "ray"], stdin: "second\n").status == 0)
        #expect(try keyring(["get", "upload.example.org", "ray"]).stdout == "second\n")

        let deleted = try keyring(["del", "upload.example.org", "ray"])
        #expect(deleted.status == 0, "\(deleted)")
        let gone = try keyring(["get", "upload.example.org", "ray"])
        #expect(gone.status == 1 && gone.stdout.isEmpty, "\(gone)")
        #expect(try keyring(["del", "upload.example.org", "ray"]).status != 0)
    }

    /// `security` refuses an empty standard input, so the backend asks for
    /// an empty password explicitly: it is stored, not refused.
    @Test func anEmptyPasswordIsStored() throws {
        try FileManager.default.createDirectory(at: t.root, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        // keyring's command line reads no empty password from a pipe: its Python API, as pip and twine call it.
        let python = try Self.venv.get().appendingPathComponent("bin/python")
        let set = try Subprocess.run(python, ["-c", "import keyring; keyring.set_password('empty.example.org', 'ray', '')"],
                                     environment: try environment, ioDirectory: t.io)
        #expect(set.status == 0 && set.stderr.isEmpty, "\(set)")
        let found = try security(["find-generic-password", "-s", "empty.example.org", "-a", "ray", "-w"])
        #expect(found.status == 0 && found.stdout == "\n", "\(found)")
    }

    @Test func withoutAnAppHomeRootTheBackendStandsAside() throws {
        let backends = try keyring(["--list-backends"])
        #expect(backends.status == 0 && !backends.stdout.contains("AppHomeKeyring"), "\(backends)")
    }
}
