import AppHomeSystem
import CommandSupport
import TestSupport
import Testing
@testable import AppHomeCommand

/// `apphome` given an argument that is not valid UTF-8, as `main` passes it:
/// refused before any verb runs.
@Suite struct AppHomeInvalidArgumentTextTests {
    @Test(arguments: [
        ([argumentBytes("uninstall"), argumentBytes("com.example.ScaryBugs", [0xFF])], "apphome: argument 4 is not valid UTF-8: \"com.example.ScaryBugs\\xFF\"\n"),
        ([argumentBytes("install"), argumentBytes("/tmp/", [0xC0, 0xAE]) + argumentBytes("app")], "apphome: argument 4 is not valid UTF-8: \"/tmp/\\xC0\\xAEapp\"\n"),
        ([argumentBytes("run"), argumentBytes("com.example.ScaryBugs"), argumentBytes("--"), argumentBytes("/bin/touch"), argumentBytes("x", [0xFF])],
         "apphome: argument 7 is not valid UTF-8: \"x\\xFF\"\n"),
    ])
    func argumentThatIsNotUTF8IsRefusedBeforeAnyVerbRuns(arguments: [[UInt8]], message: String) throws {
        let w = World()
        #expect(w.apphome("install", w.v1).status == 0)
        let listed = w.apphome("list").out
        let console = CapturingConsole()
        var ran = false
        let status = CommandLineArguments.run([argumentBytes("--root"), argumentBytes(w.root)] + arguments, command: "apphome", console: console) { arguments in
            ran = true
            return AppHomeCommand.run(arguments, environment: AppHomeEnvironment(configuration: Configuration(variable: { _ in nil })), console: console)
        }
        #expect(status == 1 && !ran)
        #expect(console.standardError == message)
        #expect(w.apphome("list").out == listed)
    }
}
