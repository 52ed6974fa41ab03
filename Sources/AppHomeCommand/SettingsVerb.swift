#if canImport(Glibc)
import Glibc
#endif
import AppHomeSystem
import CommandSupport

extension AppHomeCommand {
    /// The program that serves the Settings app: it links libsoup, which
    /// `apphome` itself does not load.
    static let settingsProgram = "apphome-settings"

    /// `settings [--listen 127.0.0.1:PORT | --socket PATH]`: replaces this
    /// process with `apphome-settings` (beside this program, else in
    /// `../lib/apphome/`), which checks the options, prints the URL and serves.
    func settings(_ args: [String]) throws -> Int32 {
        guard let exe = SiblingProgram.executablePath() else {
            throw CommandFailure.failure("cannot find \(Self.settingsProgram): this program's path is unknown (/proc/self/exe)")
        }
        let candidates = SiblingProgram(name: Self.settingsProgram).candidates(directory: FileSystem.parentDirectory(exe))
        guard let program = candidates.first(where: { access($0, X_OK) == 0 }) else {
            throw CommandFailure.failure("cannot find \(Self.settingsProgram) in \(candidates.joined(separator: " or ")); reinstall AppHome")
        }
        let arguments = [program, "--root", manager.layout.root] + args
        console.flushOutput()
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        execv(program, &argv)
        let why = String(cString: strerror(errno))
        for p in argv { free(p) }
        throw CommandFailure.failure("cannot run \(program): \(why)")
    }
}
