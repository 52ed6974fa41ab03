import Foundation
import Testing

/// `plutil -p` shows a file's control characters escaped when its standard
/// output is a terminal (a pseudo-terminal made by `script`), and as they are
/// into a pipe.
@Suite("plutil on a terminal")
struct PlutilTerminalTests {
    @Test func controlCharactersReachATerminalEscaped() throws {
        let io = FileManager.default.temporaryDirectory.appendingPathComponent("plutil-tty-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: io, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: io) }
        let plutil = try TestDaemon.binary("plutil"), file = io.appendingPathComponent("f.plist").path
        let env = ProcessInfo.processInfo.environment
        #expect(try Subprocess.run(plutil, ["-create", "binary1", file], environment: env, ioDirectory: io).status == 0)
        #expect(try Subprocess.run(plutil, ["-insert", "k", "-string", "a\u{1B}[2J\u{07}b", file], environment: env, ioDirectory: io).status == 0)

        let piped = try Subprocess.run(plutil, ["-p", file], environment: env, ioDirectory: io)
        #expect(piped.status == 0 && piped.stdoutData.contains(0x1B), "\(piped)")

        let script = try RealClients.tool("script")
        let shown = try Subprocess.run(script, ["-qec", "'\(plutil.path)' -p '\(file)'", "/dev/null"], environment: env, ioDirectory: io)
        #expect(shown.status == 0, "\(shown)")
        #expect(!shown.stdoutData.contains(0x1B) && !shown.stdoutData.contains(0x07), "\(shown)")
        #expect(shown.stdout.contains("\"k\" => \"a\\u001b[2J\\u0007b\""), "\(shown)")
    }
}
