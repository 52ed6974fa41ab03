#if canImport(Glibc)
import Glibc
#endif
import AppHomeSystem
import PropertyList

extension ContainerManager {
    /// The installed bundle's executable: `<home>/<Name>.app/<CFBundleExecutable>`.
    ///
    /// The installed `Info.plist` is read again (it is the app's file, so it
    /// is checked as any input: a plain name, no `/`, a regular executable file).
    ///
    /// - Throws: ``ContainersError/notInstalled(_:)``;
    ///   ``ContainersError/invalidBundle(path:reason:)`` when `Info.plist`
    ///   names no usable executable.
    public func executable(of identifier: BundleIdentifier) throws(ContainersError) -> String {
        let app = try home(for: identifier).app
        func fail(_ reason: String) -> ContainersError { .invalidBundle(path: app, reason: reason) }
        let bytes: [UInt8]?
        do { bytes = try FileSystem.readFileIfPresent(app + "/Info.plist") } catch {
            throw fail("cannot read Info.plist: \(error.reason)")
        }
        guard let bytes else { throw fail("Info.plist is missing") }
        guard let info = (try? PlistCodec.decode(bytes))?.dictionaryValue else { throw fail("Info.plist is not a dictionary") }
        guard case .string(let name)? = info["CFBundleExecutable"] else { throw fail("Info.plist has no CFBundleExecutable string") }
        guard !name.isEmpty, name != ".", name != "..", !name.contains("/"), !name.contains("\0") else {
            throw fail("CFBundleExecutable '\(name)' is not a file name")
        }
        let path = app + "/" + name
        var st = stat()
        guard stat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG, access(path, X_OK) == 0 else {
            throw fail("the executable '\(name)' is missing or not executable")
        }
        return path
    }

    /// Starts the installed app's `CFBundleExecutable` with `arguments`, as
    /// ``run(_:command:)`` runs a command, and waits for it.
    ///
    /// - Throws: what ``executable(of:)`` and ``run(_:command:)`` throw.
    public func launch(_ identifier: BundleIdentifier, arguments: [String], options: RunOptions = RunOptions()) throws(ContainersError) -> Termination {
        try run(identifier, command: [executable(of: identifier)] + arguments, options: options)
    }
}
