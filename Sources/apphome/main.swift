#if canImport(Glibc)
import Glibc
#endif
import AppHomeCommand
import CommandSupport
import Keychain

var variables: [String: String] = [:]
var cursor = environ
while let entry = cursor.pointee, let pair = Optional(String(cString: entry)), let eq = pair.firstIndex(of: "=") {
    variables[String(pair[..<eq])] = String(pair[pair.index(after: eq)...])
    cursor += 1
}
let console = ProcessConsole()
let status = AppHomeCommand.run(Array(CommandLine.arguments.dropFirst()), environment: AppHomeEnvironment(variables: variables), console: console,
                                prompter: TerminalPrompter())
console.flush()
exit(status)
