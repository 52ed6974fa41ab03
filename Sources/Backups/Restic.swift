#if canImport(Glibc)
import Glibc
#endif
import AppHomeSystem
import Containers
import PropertyList

/// Hands restic its repository password: gives the password's bytes (no
/// line end) to the sink it is called with, which sends them down restic's
/// standard input (one end of a socket pair). The password never goes into
/// argv, the environment or a file.
public struct ResticPassword: Sendable {
    let give: @Sendable ((UnsafeRawBufferPointer) throws -> Void) throws -> Void

    public init(_ give: @escaping @Sendable ((UnsafeRawBufferPointer) throws -> Void) throws -> Void) { self.give = give }
}

/// Why restic could not do what AppHome asked; each case has its own exit
/// status in `apphome` (see `man apphome`).
public enum ResticError: Error, Equatable, CustomStringConvertible {
    /// No `restic` on `PATH`.
    case missing
    /// `restic version` reported an older version than ``ResticRepository/minimumVersion``.
    case tooOld(found: String)
    /// The repository has no password item in the login keychain (or the keychain could not give it).
    case noPassword(repository: String, reason: String)
    /// restic refused the password.
    case wrongPassword(repository: String)
    /// Nothing answers at the repository's location, or nothing is there.
    case unreachable(repository: String, detail: String)
    /// There is no repository at the location (`--init` creates one).
    case noRepository(repository: String)
    /// A restic command failed for another reason.
    case failed(command: String, status: Int32, detail: String)
    /// The snapshot asked for is not there, or is not an AppHome backup of the app.
    case noSnapshot(repository: String, what: String)
    /// `restic check` found the repository damaged.
    case damaged(repository: String, detail: String)

    public var description: String {
        switch self {
        case .missing:
            return "restic is not installed (no 'restic' on PATH); install it (Debian: apt-get install restic), version "
                + "\(ResticRepository.minimumVersion.text) or newer"
        case .tooOld(let found):
            return "restic \(FileNames.escaped(found)) is too old: AppHome needs restic \(ResticRepository.minimumVersion.text) or newer"
        case .noPassword(let repository, let reason):
            return "no password for the restic repository \(repository) in the login keychain (\(reason)); add it with: "
                + "security add-generic-password -s \(ResticRepository.passwordService) -a '\(repository)' -w"
        case .wrongPassword(let repository):
            return "restic refused the password of \(repository) (wrong password or no key found); check the login keychain's "
                + "\(ResticRepository.passwordService) item for that repository"
        case .unreachable(let repository, let detail):
            return "the restic repository \(repository) cannot be reached: \(FileNames.escaped(detail))"
        case .noRepository(let repository):
            return "there is no restic repository at \(repository); create one with 'restic init' or pass --init"
        case .failed(let command, let status, let detail):
            return "restic \(command) failed (exit status \(status)): \(FileNames.escaped(detail))"
        case .noSnapshot(let repository, let what):
            return "\(what) in the restic repository \(repository)"
        case .damaged(let repository, let detail):
            return "the restic repository \(repository) is damaged: \(FileNames.escaped(detail))"
        }
    }
}

/// One restic repository as restic names it (a path, `sftp:`, `s3:`,
/// `rest:`, `rclone:`), and the way to run restic against it.
public struct ResticRepository: Sendable {
    /// The repository string, as given to `restic -r`.
    public let repository: String
    let password: ResticPassword?
    /// The program: `restic` (looked up on `PATH`).
    let program: String
    /// How long one restic command may run before it is stopped (seconds).
    let timeout: Double
    /// The version ``checkVersion()`` found for this program already (a
    /// repository made by ``with(password:checkedVersion:)``): each check is one more
    /// restic process, so a command checks once.
    let checkedVersion: ResticVersion?

    /// The oldest restic this code works with: Debian 12's.
    public static let minimumVersion = ResticVersion(major: 0, minor: 14, patch: 0)
    /// The login keychain's generic password item holding a repository's
    /// password: this service, the repository string as the account.
    public static let passwordService = "apphome-restic"

    public init(_ repository: String, password: ResticPassword?, program: String = "restic", timeout: Double = 3600) {
        self.repository = repository
        self.password = password
        self.program = program
        self.timeout = timeout
        self.checkedVersion = nil
    }

    private init(_ other: ResticRepository, password: ResticPassword?, checkedVersion: ResticVersion?) {
        self.repository = other.repository
        self.password = password
        self.program = other.program
        self.timeout = other.timeout
        self.checkedVersion = checkedVersion
    }

    /// The same repository with `password`, and `version` as what
    /// ``checkVersion()`` found: the commands that use it do not run
    /// `restic version` again.
    public func with(password: ResticPassword?, checkedVersion version: ResticVersion) -> ResticRepository {
        ResticRepository(self, password: password, checkedVersion: version)
    }

    /// The repository of a `--to`/`--from` value `restic:<repository>`, or `nil`.
    public static func parse(_ value: String) -> String? {
        guard value.hasPrefix("restic:") else { return nil }
        let rest = String(value.dropFirst("restic:".count))
        return rest.isEmpty ? nil : rest
    }

    // MARK: Running restic

    /// What one restic run gave.
    struct Run {
        var status: Termination
        var stdout: [UInt8]
        var stderr: String
        var exitStatus: Int32 { status.shellStatus }
    }

    /// The installed restic's version, refused when older than the minimum.
    ///
    /// - Throws: ``ResticError/missing``, ``ResticError/tooOld(found:)``.
    @discardableResult
    public func checkVersion() throws -> ResticVersion {
        if let checkedVersion { return checkedVersion }
        let run = try self.run(["version"], withPassword: false, repositoryOption: false, timeout: 60)
        let text = String(decoding: run.stdout, as: UTF8.self)
        guard run.exitStatus == 0, let version = ResticVersion(versionOutput: text) else {
            throw ResticError.failed(command: "version", status: run.exitStatus, detail: Self.lastLines(run.stderr + text))
        }
        guard version >= Self.minimumVersion else { throw ResticError.tooOld(found: version.text) }
        return version
    }

    /// Runs `restic -r <repository> <arguments>` with the password on
    /// standard input, and turns the failures every command shares
    /// (password, reachability, no repository) into their errors.
    func runChecked(_ arguments: [String], workingDirectory: String? = nil, allowing: Set<Int32> = [0]) throws -> Run {
        let run = try self.run(arguments, withPassword: true, workingDirectory: workingDirectory)
        if allowing.contains(run.exitStatus), case .exited = run.status { return run }
        throw classify(run, command: arguments.first ?? "")
    }

    /// The error a failed run stands for.
    func classify(_ run: Run, command: String) -> ResticError {
        let err = run.stderr
        if case .timedOut = run.status {
            return .unreachable(repository: repository, detail: "restic \(command) gave no answer within \(Int(timeout)) s")
        }
        if run.exitStatus == 12 || err.contains("wrong password or no key found") { return .wrongPassword(repository: repository) }
        if Self.isUnreachable(err) {
            return .unreachable(repository: repository, detail: Self.lastLines(err))
        }
        if run.exitStatus == 10 || err.contains("Is there a repository at the following location?")
            || err.contains("unable to open config file") {
            return .noRepository(repository: repository)
        }
        return .failed(command: command, status: run.exitStatus, detail: Self.lastLines(err))
    }

    /// Whether restic's standard error says the repository's host does not answer.
    static func isUnreachable(_ err: String) -> Bool {
        ["retrying after", "connection refused", "no such host", "dial tcp", "ssh command exited", "network is unreachable",
         "i/o timeout", "connect: "].contains { err.contains($0) }
    }

    /// The last few non-empty lines of `text`, on one line.
    static func lastLines(_ text: String, _ n: Int = 3) -> String {
        let lines = text.split(separator: "\n").map { line -> String in
            String(line.drop { $0 == " " || $0 == "\t" || $0 == "\r" }.reversed().drop { $0 == " " || $0 == "\t" || $0 == "\r" }.reversed())
        }.filter {
            !$0.isEmpty && $0 != "reading repository password from stdin"
        }
        return lines.suffix(n).joined(separator: "; ")
    }

    /// Runs restic: standard input the password (when `withPassword`) or
    /// nothing; standard output and error captured. A run whose standard
    /// error shows the repository's host not answering is stopped at once
    /// (restic would retry for minutes).
    func run(_ arguments: [String], withPassword: Bool, repositoryOption: Bool = true, workingDirectory: String? = nil,
             timeout: Double? = nil) throws -> Run {
        if withPassword && password == nil { throw ResticError.noPassword(repository: repository, reason: "none was given") }
        var argv = [program]
        if repositoryOption { argv += ["-r", repository] }
        argv += arguments
        let child: ChildProcess
        do {
            child = try ChildProcess(argv, environment: Self.environment(), workingDirectory: workingDirectory,
                                     standardInput: .socket, standardOutput: .capture, standardError: .capture)
        } catch {
            let failure: SystemError = error
            if failure.errno == ENOENT { throw ResticError.missing }
            throw failure
        }
        if withPassword, let password {
            // restic may have ended already (a repository string it refuses): a
            // send with MSG_NOSIGNAL fails with EPIPE instead of killing us.
            func send(_ raw: UnsafeRawBufferPointer) throws {
                var done = 0
                while done < raw.count {
                    let n = Glibc.send(child.standardInput, raw.baseAddress! + done, raw.count - done, Int32(MSG_NOSIGNAL))
                    if n < 0 {
                        if errno == EINTR { continue }
                        if errno == EPIPE { return }
                        throw SystemError("send", path: "restic's standard input", errno: errno)
                    }
                    done += n
                }
            }
            do {
                try password.give(send)
                try [UInt8(ascii: "\n")].withUnsafeBytes(send)
            } catch {
                child.kill()
                _ = try? child.collect(timeout: 10)
                throw ResticError.noPassword(repository: repository, reason: "\(error)")
            }
        }
        let outcome = try child.collect(timeout: timeout ?? self.timeout) { Self.isUnreachable($0) && $0.contains("retrying after") }
        return Run(status: outcome.termination, stdout: outcome.standardOutput, stderr: String(decoding: outcome.standardError, as: UTF8.self))
    }

    /// The environment restic runs with: this process's, without every
    /// variable that would give restic another password or repository.
    static func environment() -> [String: String] {
        var env = ChildProcess.inheritedEnvironment()
        for name in ["RESTIC_PASSWORD", "RESTIC_PASSWORD_FILE", "RESTIC_PASSWORD_COMMAND", "RESTIC_REPOSITORY",
                     "RESTIC_REPOSITORY_FILE", "RESTIC_KEY_HINT", "RESTIC_PROGRESS_FPS"] {
            env.removeValue(forKey: name)
        }
        return env
    }

    // MARK: Commands

    /// The JSON value restic printed in `output`: what comes after any
    /// line of text before it (restic 0.14 says "reading repository
    /// password from stdin" on standard output), its `null`s read as empty
    /// strings (a property list has no null); `nil` when it is not JSON.
    static func json(_ output: [UInt8]) -> PlistValue? {
        var start = 0
        while start < output.count, output[start] != UInt8(ascii: "[") && output[start] != UInt8(ascii: "{") {
            guard let end = output[start...].firstIndex(of: 0x0A) else { return nil }
            start = end + 1
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(output.count - start)
        var inString = false
        var escaped = false
        var i = start
        let null = Array("null".utf8)
        while i < output.count {
            let b = output[i]
            if inString {
                if escaped { escaped = false } else if b == UInt8(ascii: "\\") { escaped = true } else if b == UInt8(ascii: "\"") { inString = false }
            } else if b == UInt8(ascii: "\"") {
                inString = true
            } else if b == UInt8(ascii: "n"), i + 4 <= output.count, Array(output[i..<i + 4]) == null {
                bytes += [UInt8(ascii: "\""), UInt8(ascii: "\"")]
                i += 4
                continue
            }
            bytes.append(b)
            i += 1
        }
        if let empty = try? PlistCodec.decode(bytes, format: .json) { return empty }
        return nil
    }

    /// `restic cat config`: the repository is there, and the password opens it.
    public func checkAccess() throws {
        _ = try runChecked(["cat", "config"])
    }

    /// `restic init`.
    public func initialize() throws {
        _ = try runChecked(["init"])
    }

    /// `restic backup --json` of the directory `directory` (its contents
    /// at the snapshot's top), tagged `tags`.
    ///
    /// - Returns: the snapshot's id and the bytes it added to the repository.
    func backup(_ directory: String, tags: [String]) throws -> (id: String, dataAdded: Int, bytesProcessed: Int) {
        var args = ["backup", "--json", "--ignore-inode", "--ignore-ctime"]
        for tag in tags { args += ["--tag", tag] }
        args.append(".")
        let run = try runChecked(args, workingDirectory: directory, allowing: [0, 3])
        var summary: [PlistKey: PlistValue]?
        for line in run.stdout.split(separator: UInt8(ascii: "\n")) {
            if let d = Self.json(Array(line))?.dictionaryValue, d["message_type"] == .string("summary") { summary = d }
        }
        guard let summary, case .string(let id)? = summary["snapshot_id"] else {
            throw ResticError.failed(command: "backup", status: run.exitStatus, detail: "no snapshot was reported: " + Self.lastLines(run.stderr))
        }
        if run.exitStatus == 3 {
            // Some files could not be read: an incomplete snapshot is not kept.
            _ = try? runChecked(["forget", id])
            throw ResticError.failed(command: "backup", status: 3, detail: Self.lastLines(run.stderr))
        }
        func int(_ key: PlistKey) -> Int { if case .integer(let v)? = summary[key] { return Int(v) }; return 0 }
        return (id, int("data_added"), int("total_bytes_processed"))
    }

    /// `restic snapshots --json --tag <tags>`: the snapshots with all of `tags`, oldest first.
    public func snapshots(tagged tags: [String]) throws -> [ResticSnapshot] {
        let run = try runChecked(["snapshots", "--json", "--tag", tags.joined(separator: ",")])
        guard case .array(let items)? = Self.json(run.stdout) else {
            throw ResticError.failed(command: "snapshots", status: 0, detail: "its output is not a JSON array")
        }
        return items.compactMap(ResticSnapshot.init(json:)).sorted { $0.time < $1.time }
    }

    /// `restic restore <id> --target <target>`.
    func restore(_ id: String, into target: String) throws {
        _ = try runChecked(["restore", id, "--target", target])
    }

    /// `restic forget --group-by tags --keep-last N` of the snapshots tagged `tags`.
    ///
    /// - Returns: the ids of the snapshots removed.
    func forget(tagged tags: [String], keepLast: Int, dryRun: Bool) throws -> [String] {
        var args = ["forget", "--json", "--tag", tags.joined(separator: ","), "--group-by", "tags", "--keep-last", String(keepLast)]
        if dryRun { args.append("--dry-run") }
        let run = try runChecked(args)
        var removed: [String] = []
        if case .array(let groups)? = Self.json(run.stdout) {
            for group in groups {
                guard case .array(let gone)? = group.dictionaryValue?["remove"] else { continue }
                for snapshot in gone { if let s = ResticSnapshot(json: snapshot) { removed.append(s.id) } }
            }
        }
        return removed
    }

    /// `restic prune`.
    func prune() throws {
        _ = try runChecked(["prune"])
    }

    /// `restic check` (reading `readDataSubset` of the data too, when given).
    ///
    /// - Throws: ``ResticError/damaged(repository:detail:)`` when restic finds errors.
    public func check(readDataSubset: String?) throws -> String {
        var args = ["check"]
        if let subset = readDataSubset { args.append("--read-data-subset=" + subset) }
        let run = try self.run(args, withPassword: true)
        let out = String(decoding: run.stdout, as: UTF8.self)
        if run.exitStatus == 0, case .exited = run.status { return out }
        let error = classify(run, command: "check")
        if case .failed = error { throw ResticError.damaged(repository: repository, detail: Self.lastLines(run.stderr + "\n" + out, 4)) }
        throw error
    }
}

/// A restic version, `major.minor.patch`.
public struct ResticVersion: Comparable, Sendable {
    public var major: Int
    public var minor: Int
    public var patch: Int

    public var text: String { "\(major).\(minor).\(patch)" }

    public static func < (a: ResticVersion, b: ResticVersion) -> Bool {
        (a.major, a.minor, a.patch) < (b.major, b.minor, b.patch)
    }
}

// In an extension, so that the struct keeps its synthesized memberwise init
// (internal: only the module and its tests make a version from numbers).
extension ResticVersion {
    /// The version in `restic version`'s output (`restic 0.14.0 compiled with go1.19.8 on linux/amd64`).
    public init?(versionOutput text: String) {
        let words = text.split(whereSeparator: { $0 == " " || $0 == "\n" })
        guard words.count >= 2, words[0] == "restic" else { return nil }
        let number = words[1].split(separator: "-")[0]   // 0.16.4-dev
        let parts = number.split(separator: ".").map { Int($0) }
        guard parts.count >= 2, parts.allSatisfy({ $0 != nil }) else { return nil }
        self.init(major: parts[0]!, minor: parts[1]!, patch: parts.count > 2 ? parts[2]! : 0)
    }
}

/// A snapshot as `restic snapshots --json` lists it.
public struct ResticSnapshot: Equatable, Sendable {
    public var id: String
    public var shortID: String
    /// RFC 3339, as restic writes it (sorts by time within one zone).
    public var time: String
    public var hostname: String
    public var tags: [String]

    init?(json: PlistValue) {
        guard let d = json.dictionaryValue, case .string(let id)? = d["id"], case .string(let time)? = d["time"] else { return nil }
        self.id = id
        if case .string(let s)? = d["short_id"] { shortID = s } else { shortID = String(id.prefix(8)) }
        self.time = time
        if case .string(let h)? = d["hostname"] { hostname = h } else { hostname = "" }
        var tags: [String] = []
        if case .array(let items)? = d["tags"] { for case .string(let t) in items { tags.append(t) } }
        self.tags = tags
    }
}
