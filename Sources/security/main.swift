#if canImport(Glibc)
import Glibc
#endif
import CommandSupport
import Keychain
import KeychainSecretService
import SecurityCommand

ProcessHardening.disableCoreDumps()
var variables: [String: String] = [:]
var cursor = environ
while let entry = cursor.pointee, let pair = Optional(String(cString: entry)), let eq = pair.firstIndex(of: "=") {
    variables[String(pair[..<eq])] = String(pair[pair.index(after: eq)...])
    cursor += 1
}
let console = ProcessConsole()
let environment = SecurityEnvironment(variables: variables, standardInputIsTerminal: isatty(0) != 0)
let status = SecurityCommand.run(Array(CommandLine.arguments.dropFirst()), environment: environment, console: console, prompter: TerminalPrompter())
console.flush()
exit(status)
