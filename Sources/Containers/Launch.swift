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
        guard FileNames.isSingleComponent(name) else {
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

extension ContainerManager {
    /// Where stock Foundation's `Bundle.main` (swift-corelibs-foundation's
    /// CFBundle) reads the Info.plist of a bundle whose executable is at its
    /// top, relative to the bundle: `Contents/Info.plist` when the bundle has
    /// a `Contents/` folder, else `Resources/Info.plist` when it has a
    /// `Resources/` folder, else `Support Files/Info.plist` when it has that
    /// one (the old layouts), else the `Info.plist` beside the executable.
    public static func foundationInfoPlist(inBundle app: String) -> String {
        for folder in ["Contents", "Resources", "Support Files"] where FileSystem.isDirectory(app + "/" + folder) {
            return folder + "/Info.plist"
        }
        return "Info.plist"
    }

    /// Why a compiled executable of the installed app would miss its bundle
    /// identifier through stock Foundation's `Bundle.main` (so that
    /// `UserDefaults.standard` would not be the app's domain), or `nil`.
    /// A script (`#!`) is not asked about: it has no `Bundle.main`.
    public func foundationLayoutProblem(of identifier: BundleIdentifier) -> String? {
        guard let executable = try? executable(of: identifier), let app = try? home(for: identifier).app,
              let head = try? FileSystem.readFileIfPresent(executable)?.prefix(4), Array(head) == [0x7F, 0x45, 0x4C, 0x46] else { return nil }
        let wanted = Self.foundationInfoPlist(inBundle: app)
        guard wanted != "Info.plist" else { return nil }
        if let bytes = try? FileSystem.readFileIfPresent(app + "/" + wanted), let info = (try? PlistCodec.decode(bytes))?.dictionaryValue,
           case .string(identifier.rawValue)? = info["CFBundleIdentifier"] {
            return nil
        }
        let folder = wanted.split(separator: "/")[0]
        return "the bundle has a \(folder)/ folder, so stock Foundation's Bundle.main reads \(wanted), not the Info.plist beside "
            + "the executable, and finds no CFBundleIdentifier \(identifier.rawValue) there: UserDefaults.standard would not be "
            + "the app's domain; put a copy of Info.plist at \(wanted) (see docs/foundation-clients.md)"
    }
}
