#if canImport(Glibc)
import Glibc
#endif
import AppHomeSystem

/// Runs a command in the context of an installed app
/// (``run(_:command:base:)``).
public struct AppRunner: ContainerOperation, Sendable {
    /// The root whose apps it runs.
    public let context: ContainerContext

    /// The environment `apphome run` gives a command: `base` with the
    /// app's home in `HOME`, `CFFIXED_USER_HOME` and `APPHOME_HOME`,
    /// `TMPDIR=<home>/tmp/`, `XDG_DATA_HOME` and `XDG_CACHE_HOME` inside
    /// `Library` (so stock Foundation lands in the home too),
    /// `XDG_CONFIG_HOME=<home>/Library/Preferences` (where Foundation's
    /// `UserDefaults` keeps `<domain>.plist`: the app's AppHome domain; see
    /// ``FoundationPreferences``), `APPHOME_BUNDLE_ID` and `APPHOME_ROOT`.
    public func runEnvironment(for entry: RegistryEntry, base: [String: String]) -> [String: String] {
        let home = layout.home(uuid: entry.homeUUID, bundleName: entry.bundleName)
        var env = base
        env["HOME"] = home.path
        env["CFFIXED_USER_HOME"] = home.path
        env["TMPDIR"] = home.tmp + "/"
        env["XDG_DATA_HOME"] = home.applicationSupport
        env["XDG_CACHE_HOME"] = home.caches
        env["XDG_CONFIG_HOME"] = home.preferences
        env["APPHOME_BUNDLE_ID"] = entry.bundleIdentifier.rawValue
        env["APPHOME_HOME"] = home.path
        env["APPHOME_ROOT"] = layout.root
        return env
    }

    /// Runs `command` in the context of the installed app `identifier`,
    /// with the working directory set to its home, and waits for it: in the
    /// app's sandbox (``RunOptions/sandbox``, bubblewrap; `docs/sandbox.md`)
    /// unless `options` say otherwise.
    ///
    /// While the command runs, the home's run lock
    /// (``ContainerLayout/runLockPath(uuid:)``) is held shared, so
    /// `clean-tmp` and `purge-caches` leave the home alone, and a record in
    /// ``ContainerLayout/runsDirectory`` names it for `apphome list --running`.
    ///
    /// - Parameters:
    ///   - command: the program (looked up in the caller's `PATH`) and its arguments.
    ///   - base: the environment to start from (normally the caller's).
    /// - Returns: how the command ended.
    /// - Throws: ``ContainersError/notInstalled(_:)``; ``ContainersError/system(_:)``
    ///   when the command cannot be started; ``ContainersError/sandboxUnavailable(_:)``
    ///   and ``ContainersError/sandboxFailed(bubblewrap:status:)`` when the sandbox cannot be made.
    public func run(_ identifier: BundleIdentifier, command: [String], base: [String: String], options: RunOptions = RunOptions()) throws(ContainersError) -> Termination {
        try run(identifier, command: command, base: Optional(base), options: options)
    }

    /// ``run(_:command:base:options:)`` with the environment this process would
    /// give any child (what `apphome run` does).
    public func run(_ identifier: BundleIdentifier, command: [String], options: RunOptions = RunOptions()) throws(ContainersError) -> Termination {
        try run(identifier, command: command, base: nil, options: options)
    }

    private func run(_ identifier: BundleIdentifier, command: [String], base given: [String: String]?, options: RunOptions) throws(ContainersError) -> Termination {
        let base = given ?? ChildProcess.inheritedEnvironment()
        for name in options.talkNames { try RunOptions.checkTalkName(name) }
        while true {
            // The registry is read once for the whole run. Its status (which
            // file, size, times) taken before the read and again once the
            // lock is held tells whether a writer replaced it meanwhile (every
            // write is a rename of a new file); only then is it read again.
            let status = FileStatus.of(layout.registryPath)
            var current = try registry.read()
            guard let entry = current.entries[identifier] else { throw .notInstalled(identifier.rawValue) }
            let home = layout.home(uuid: entry.homeUUID, bundleName: entry.bundleName)
            let running = try containersErrors { try RunLock.shared(layout.runLockPath(uuid: entry.homeUUID)) }
            defer { running.unlock() }
            // An update, uninstall or restore may have replaced the home
            // while this waited for the lock: look it up again.
            if FileStatus.of(layout.registryPath) != status {
                current = try registry.read()
                guard current.entries[identifier]?.homeUUID == entry.homeUUID else { continue }
            }
            let groups = try registry.groupContainers(of: identifier, in: current)
            let environment = runEnvironment(for: entry, base: base)
            let instance = Random.alphanumeric(16)
            let record = RunRecord(bundleIdentifier: identifier.rawValue, pid: getpid(), sandboxed: options.sandbox, network: options.network,
                                   instance: instance, started: SystemClock.secondsSince1970())
            let prepare = { () throws(ContainersError) in
                try containersErrors { try FoundationPreferences.prepare(home: home, root: layout.root, groups: groups) }
            }
            // The record is written once the command is started (its cost is
            // not the start's), and removed when it ends.
            var recordPath: String?
            defer { if let recordPath { unlink(recordPath) } }
            try containersErrors { try FileSystem.makeDirectories(home.tmp) }
            guard options.sandbox else {
                try prepare()
                let child = try containersErrors { try ChildProcess(command, environment: environment, workingDirectory: home.path) }
                recordPath = record.write(in: layout)
                return try containersErrors { try child.wait() }
            }
            let launcher = SandboxLauncher(layout: layout, entry: entry, home: home, groups: groups, options: options,
                                           environment: environment, base: base)
            // The home is made ready while bubblewrap builds the sandbox; the
            // app starts only after (SandboxLauncher.run).
            return try launcher.run(command, instance: instance, prepare: prepare, started: { recordPath = record.write(in: layout) })
        }
    }
}
