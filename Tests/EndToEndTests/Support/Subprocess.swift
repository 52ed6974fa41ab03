import Foundation

/// What a finished child process left behind.
struct CommandResult: Sendable, CustomStringConvertible {
    var stdoutData: Data
    var stderrData: Data
    /// The exit status, or the signal number when `signaled` is true.
    var status: Int32
    var signaled: Bool

    var stdout: String { String(decoding: stdoutData, as: UTF8.self) }
    var stderr: String { String(decoding: stderrData, as: UTF8.self) }

    var description: String {
        let out = stdoutData.count > 2000 ? String(stdout.prefix(2000)) + "…" : stdout
        let err = stderrData.count > 2000 ? String(stderr.prefix(2000)) + "…" : stderr
        return "\(signaled ? "signal" : "status") \(status)\n--- stdout ---\n\(out)\n--- stderr ---\n\(err)"
    }
}

/// Errors of the end-to-end harness itself, as opposed to failures of `defaults`.
enum HarnessError: Error, CustomStringConvertible {
    case binaryMissing(String)
    case timedOut(String)
    case helper(String)

    var description: String {
        switch self {
        case .binaryMissing(let message), .timedOut(let message), .helper(let message):
            return message
        }
    }
}

/// Runs a child process with stdout and stderr captured in files.
///
/// Files rather than pipes so that a child printing megabytes cannot block on a full
/// pipe while the parent waits for it.
enum Subprocess {
    /// A started child; `finish()` waits for it and collects its output.
    final class Running: @unchecked Sendable {
        let process: Process
        private let stdoutURL: URL
        private let stderrURL: URL
        private let done = DispatchSemaphore(value: 0)
        private let timeout: TimeInterval
        private let label: String
        /// The parent's ends of the child's stdio, closed once the child is done so that a
        /// long test run does not pile up descriptors.
        private let handles: [FileHandle]

        fileprivate init(process: Process, stdoutURL: URL, stderrURL: URL, timeout: TimeInterval, label: String,
                         handles: [FileHandle]) {
            self.process = process
            self.handles = handles
            self.stdoutURL = stdoutURL
            self.stderrURL = stderrURL
            self.timeout = timeout
            self.label = label
            let done = self.done
            process.terminationHandler = { _ in done.signal() }
        }

        /// Foundation's `Process.run()` walks the parent's open descriptors while it spawns;
        /// concurrent launches from parallel tests have crashed inside it, so launches take turns.
        private static let launchLock = NSLock()

        fileprivate func launch() throws {
            Self.launchLock.lock()
            defer { Self.launchLock.unlock() }
            do {
                try process.run()
            } catch {
                closeHandles()
                throw error
            }
        }

        private func closeHandles() {
            for handle in handles { try? handle.close() }
        }

        var pid: pid_t { process.processIdentifier }

        func kill(_ signal: Int32 = SIGKILL) {
            _ = Glibc.kill(process.processIdentifier, signal)
        }

        func finish() throws -> CommandResult {
            defer { closeHandles() }
            if done.wait(timeout: .now() + timeout) == .timedOut {
                kill()
                done.wait()
                throw HarnessError.timedOut("\(label) did not finish within \(Int(timeout)) s and was killed")
            }
            let result = CommandResult(
                stdoutData: (try? Data(contentsOf: stdoutURL)) ?? Data(),
                stderrData: (try? Data(contentsOf: stderrURL)) ?? Data(),
                status: process.terminationStatus,
                signaled: process.terminationReason == .uncaughtSignal)
            try? FileManager.default.removeItem(at: stdoutURL)
            try? FileManager.default.removeItem(at: stderrURL)
            return result
        }
    }

    static func start(
        _ executable: URL,
        _ arguments: [String],
        environment: [String: String],
        stdin: Data? = nil,
        stdinFile: URL? = nil,
        ioDirectory: URL,
        timeout: TimeInterval = 60
    ) throws -> Running {
        let token = UUID().uuidString
        let outURL = ioDirectory.appendingPathComponent("\(token).out")
        let errURL = ioDirectory.appendingPathComponent("\(token).err")
        let fm = FileManager.default
        guard fm.createFile(atPath: outURL.path, contents: nil), fm.createFile(atPath: errURL.path, contents: nil) else {
            throw HarnessError.helper("cannot create capture files in \(ioDirectory.path)")
        }

        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.environment = environment
        var handles: [FileHandle] = []
        let output = try FileHandle(forWritingTo: outURL)
        handles.append(output)
        let error = try FileHandle(forWritingTo: errURL)
        handles.append(error)
        process.standardOutput = output
        process.standardError = error
        if let stdinFile {
            let input = try FileHandle(forReadingFrom: stdinFile)
            handles.append(input)
            process.standardInput = input
        } else if let stdin {
            let inURL = ioDirectory.appendingPathComponent("\(token).in")
            try stdin.write(to: inURL)
            let input = try FileHandle(forReadingFrom: inURL)
            handles.append(input)
            process.standardInput = input
        } else {
            process.standardInput = FileHandle.nullDevice
        }
        let running = Running(
            process: process, stdoutURL: outURL, stderrURL: errURL, timeout: timeout,
            label: ([executable.lastPathComponent] + arguments.prefix(6)).joined(separator: " "),
            handles: handles)
        try running.launch()
        return running
    }

    static func run(
        _ executable: URL,
        _ arguments: [String],
        environment: [String: String],
        stdin: Data? = nil,
        stdinFile: URL? = nil,
        ioDirectory: URL,
        timeout: TimeInterval = 60
    ) throws -> CommandResult {
        try start(executable, arguments, environment: environment, stdin: stdin, stdinFile: stdinFile,
                  ioDirectory: ioDirectory, timeout: timeout).finish()
    }
}

/// Finds the built `defaults` executable.
///
/// `APPHOME_BIN_DIR` wins; otherwise the directory holding the running test bundle, where
/// SwiftPM also puts the package's executables (for example `.build/debug/defaults`).
enum DefaultsBinary {
    static let located: Result<URL, HarnessError> = locate()

    static func url() throws -> URL { try located.get() }

    private static func locate() -> Result<URL, HarnessError> {
        let fm = FileManager.default
        if let dir = ProcessInfo.processInfo.environment["APPHOME_BIN_DIR"], !dir.isEmpty {
            let candidate = URL(fileURLWithPath: dir).appendingPathComponent("defaults")
            return fm.isExecutableFile(atPath: candidate.path)
                ? .success(candidate)
                : .failure(.binaryMissing("APPHOME_BIN_DIR is \(dir) but \(candidate.path) is not an executable"))
        }
        var directories: [URL] = []
        if let executable = Bundle.main.executableURL {
            directories.append(executable.resolvingSymlinksInPath().deletingLastPathComponent())
        }
        directories.append(Bundle.main.bundleURL.resolvingSymlinksInPath())
        directories.append(Bundle.main.bundleURL.resolvingSymlinksInPath().deletingLastPathComponent())
        if let argv0 = CommandLine.arguments.first {
            directories.append(URL(fileURLWithPath: argv0).resolvingSymlinksInPath().deletingLastPathComponent())
        }
        for directory in directories {
            let candidate = directory.appendingPathComponent("defaults")
            if fm.isExecutableFile(atPath: candidate.path) { return .success(candidate) }
        }
        let searched = directories.map(\.path).joined(separator: ", ")
        return .failure(.binaryMissing(
            "the `defaults` executable was not found (searched \(searched)); build it first "
            + "(`swift build --scratch-path …`) or set APPHOME_BIN_DIR to the directory holding it"))
    }
}
