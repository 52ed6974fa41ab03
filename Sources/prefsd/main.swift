#if canImport(Glibc)
import Glibc
#endif
import CommandSupport
import PrefsService

var variables: [String: String] = [:]
var cursor = environ
while let entry = cursor.pointee, let pair = Optional(String(cString: entry)), let eq = pair.firstIndex(of: "=") {
    variables[String(pair[..<eq])] = String(pair[pair.index(after: eq)...])
    cursor += 1
}
let console = ProcessConsole()
let status = PrefsdCommand.run(Array(CommandLine.arguments.dropFirst()),
                               environment: .init(variables: variables, pid: getpid(), uid: getuid()), console: console)
console.flush()
exit(status)
