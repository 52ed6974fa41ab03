#if canImport(Glibc)
import Glibc
#endif
import AppHomeSystem

/// The sibling of a statically linked command: the same command linked
/// dynamically, which the static program runs in its place for what it
/// cannot do itself. A static program cannot load libsecret (GLib), so
/// `security` runs `security-secret-service` and `apphome` runs
/// `apphome-secret-service` for a command that may need the Secret Service.
public struct SiblingProgram: Sendable {
    /// The sibling's file name (`security-secret-service`).
    public let name: String

    public init(name: String) { self.name = name }

    /// Where the sibling is, beside the running program (`directory` is the
    /// one holding it): the same directory (a build directory), else
    /// `../lib/apphome/` (an installed `bin/`).
    public func candidates(directory: String) -> [String] {
        [directory + "/" + name, FileSystem.parentDirectory(directory) + "/lib/apphome/" + name]
    }

    /// The running program's path, from `/proc/self/exe`.
    public static func executablePath() -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard n > 0 else { return nil }
        return String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Replaces this process with the sibling: the same arguments,
    /// environment and descriptors (standard input arrives whole). Call it
    /// before anything was read or written. If the sibling cannot be run,
    /// writes `message(why)` to standard error and exits 1.
    public func replaceProcess(message: (_ why: String) -> String) -> Never {
        var why = "this program's path is unknown (/proc/self/exe)"
        if let exe = Self.executablePath() {
            let paths = candidates(directory: FileSystem.parentDirectory(exe))
            for path in paths where access(path, X_OK) == 0 {
                execv(path, CommandLine.unsafeArgv)
                why = "\(path) cannot be run: \(String(cString: strerror(errno)))"
                break
            }
            if why.hasPrefix("this") { why = "it is in neither \(paths.joined(separator: " nor "))" }
        }
        let text = Array(message(why).utf8)
        _ = text.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
        exit(1)
    }
}
