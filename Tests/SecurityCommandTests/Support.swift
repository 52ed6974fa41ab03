import AppHomeSystem
import CommandSupport
import Containers
import Foundation
import Keychain
import PropertyList
import SecurityCommand
import TestSupport
import Testing

/// A root with installed apps, and a way to run `security` in process.
final class SecurityScratch: @unchecked Sendable {
    let path: String
    var root: String { path + "/root" }

    init() {
        path = ScratchDirectory.make("security-test")
    }

    deinit { ScratchDirectory.remove(path) }

    /// Installs an app claiming `groups`, signed with `key` when given.
    func install(_ id: String, groups: [String] = [], key: SigningKey? = nil) throws {
        let bundle = path + "/bundles/" + id + "/App.app"
        try FileManager.default.createDirectory(atPath: bundle, withIntermediateDirectories: true)
        var info: [PlistKey: PlistValue] = ["CFBundleIdentifier": .string(id), "CFBundleVersion": .string("1")]
        if !groups.isEmpty { info["keychain-access-groups"] = .array(groups.map { .string($0) }) }
        try Data(PlistCodec.encode(.dictionary(info), format: .xml)).write(to: URL(fileURLWithPath: bundle + "/Info.plist"))
        if let key { try CodeSigning.sign(bundleAt: bundle, key: key) }
        _ = try ContainerManager(root: root).install(AppBundle(path: bundle))
    }

    /// Runs `security` in process; `stdin` nil means "a terminal".
    func run(_ args: [String], stdin: String? = nil, app: String? = "com.example.A", prompts: [String] = [],
             extra: [String: String] = [:]) -> (status: Int32, out: String, err: String) {
        run(args, input: stdin.map { Array($0.utf8) }, app: app, prompts: prompts, extra: extra)
    }

    /// Runs `security` in process with `input` (any bytes) as standard input; nil means "a terminal".
    func run(_ args: [String], input: [UInt8]?, app: String? = "com.example.A", prompts: [String] = [],
             extra: [String: String] = [:]) -> (status: Int32, out: String, err: String) {
        var vars = ["APPHOME_ROOT": root, "APPHOME_KEYCHAIN_KEY_STORE": "file"]
        if let app { vars["APPHOME_BUNDLE_ID"] = app }
        vars.merge(extra) { $1 }
        let console = CapturingConsole(input: input ?? [])
        let status = SecurityCommand.run(args, environment: SecurityEnvironment(configuration: Configuration(variable: { vars[$0] }), standardInputIsTerminal: input == nil),
                                         console: console, prompter: ScriptedPrompter(prompts),
                                         now: { PlistDate(secondsSince1970: 1_800_000_000) })
        return (status, console.standardOutput, console.standardError)
    }
}

/// Answers prompts from a script, recording what was asked.
final class ScriptedPrompter: SecretPrompter {
    var answers: [String]
    var asked: [String] = []
    init(_ answers: [String]) { self.answers = answers }
    func readSecret(prompt: String) -> SecureBytes? {
        asked.append(prompt)
        return answers.isEmpty ? nil : SecureBytes(utf8: answers.removeFirst())
    }
}

/// The directory holding the package's built executables.
func productsDirectory() -> String {
    var candidates = [Bundle.main.bundleURL.deletingLastPathComponent().path, Bundle.main.bundleURL.path]
    if let exe = Bundle.main.executableURL { candidates.append(exe.deletingLastPathComponent().path) }
    for bundle in Bundle.allBundles where bundle.bundlePath.hasSuffix(".xctest") {
        candidates.append((bundle.bundlePath as NSString).deletingLastPathComponent)
    }
    return candidates.first { FileManager.default.isExecutableFile(atPath: $0 + "/security") } ?? candidates[0]
}

/// Runs the executable at `path` with `stdin` fed in; its status, stdout and stderr.
func runProcess(_ path: String, _ args: [String], env: [String: String], stdin: String) throws -> (status: Int32, out: String, err: String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: path)
        p.arguments = args
        p.environment = env
        let input = Pipe(), out = Pipe(), err = Pipe()
        p.standardInput = input; p.standardOutput = out; p.standardError = err
        try p.run()
        input.fileHandleForWriting.write(Data(stdin.utf8))
        try input.fileHandleForWriting.close()
        let o = out.fileHandleForReading.readDataToEndOfFile()
        let e = err.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (p.terminationStatus, String(decoding: o, as: UTF8.self), String(decoding: e, as: UTF8.self))
}
