import AppHomeSystem
import CommandSupport
import Containers
import SettingsBundle
import PrefsClient
import PrefsProtocol
import PropertyList

extension AppHomeCommand {
    /// `install <Name.app>`.
    func install(_ args: [String]) throws {
        let path = try operands(args, ["bundle path"])[0]
        let bundle = try AppBundle(path: path)
        try finishInterruptedOperation()
        let report = try manager.install(bundle)
        console.out("installed \(report.entry.bundleIdentifier) \(report.entry.displayVersion) at \(report.home.path)\n")
        for failure in report.participantFailures { console.err("apphome: warning: \(failure)\n") }
        warnAboutSettingsBundle(report.home.app)
        warnAboutFoundationLayout(report.entry.bundleIdentifier)
    }

    /// `update <Name.app> [--allow-downgrade]`: a lower `CFBundleVersion`
    /// than the installed one is refused unless `--allow-downgrade`.
    func update(_ args: [String]) throws {
        let parsed = try scan(args, options: [], flags: ["--allow-downgrade"])
        let path = try operands(parsed.operands, ["bundle path"])[0]
        let bundle = try AppBundle(path: path)
        try finishInterruptedOperation()
        if try manager.registry.read().entries[bundle.identifier] == nil {
            throw CommandFailure.failure("\(bundle.identifier) is not installed; use 'apphome install' first")
        }
        let report = try manager.update(bundle, allowDowngrade: parsed.flags.contains("--allow-downgrade"))
        console.out("updated \(report.entry.bundleIdentifier) from \(report.previous.displayVersion) to \(report.entry.displayVersion) at \(report.home.path)\n")
        console.out("moved \(report.movedItems.count) item(s) of user data (\(report.userDataBytesCopied) bytes copied); bundle: \(report.bundleBytesCopied) bytes copied\n")
        for failure in report.participantFailures { console.err("apphome: warning: \(failure)\n") }
        warnAboutSettingsBundle(report.home.app)
        warnAboutFoundationLayout(report.entry.bundleIdentifier)
        if let leftover = report.leftoverHome {
            console.err("apphome: warning: could not remove the old home \(leftover): \(report.leftoverReason ?? "unknown error")\n")
        }
    }

    /// `uninstall [--dry-run] [--forget-synced] <bundle-id>`.
    func uninstall(_ arguments: [String]) throws {
        var args = arguments
        let forgetAsked = args.contains("--forget-synced")
        let dryRun = args.contains("--dry-run")
        args.removeAll { $0 == "--forget-synced" || $0 == "--dry-run" }
        let id = try bundleIdentifier(try operands(args, ["bundle identifier"])[0])
        if dryRun { return try previewUninstall(id) }
        try finishInterruptedOperation()
        // The app's synced store goes with its home; its values stay on the other
        // machines unless the user asks for tombstones (after the uninstall succeeded).
        var forget: String? = nil
        if forgetAsked {
            let entry = try manager.entry(for: id)
            guard let store = entry.ubiquityKeyValueStore else {
                throw CommandFailure.failure("\(id) has no synced key-value store, so there is nothing to forget; nothing was uninstalled")
            }
            forget = store
        }
        try uninstallApp(id)
        if let forget { try forgetSynced(forget) }
    }

    private func uninstallApp(_ id: BundleIdentifier) throws {
        // prefsd, when it answers, does the uninstall itself so that its cache and
        // subscribers learn of the app's domain going away; the output is the same.
        let settings = try PrefsdSettings(configuration: environment.configuration)
        if let connection = try settings.connect(root: manager.layout.root) {
            let result: [PlistKey: PlistValue]
            do { result = try connection.call(.uninstall(bundleIdentifier: id.rawValue, hookEnvironment: HookEnvironment(from: environment.configuration.hookVariables))) } catch {
                if case .remote(let e) = error, e.code == ErrorCode.containers.rawValue { throw CommandFailure.failure(e.message) }
                throw CommandFailure.failure(error.description)
            }
            guard case .string(let version)? = result["version"], case .string(let home)? = result["home"] else {
                throw CommandFailure.failure("prefsd gave an incomplete uninstall report")
            }
            console.out("uninstalled \(id) \(version): removed \(home)\n")
            for case .string(let group) in result["removedGroups"]?.arrayValue ?? [] {
                console.out("removed the container of app group \(group) (no member app left)\n")
            }
            for case .string(let warning) in result["warnings"]?.arrayValue ?? [] { console.err("apphome: warning: \(warning)\n") }
            return
        }
        let report = try manager.uninstall(id, environment: environment.configuration.hookVariables, hookTimeout: hookTimeout)
        console.out("uninstalled \(id) \(report.entry.displayVersion): removed \(report.home.path)\n")
        for group in report.removedGroups { console.out("removed the container of app group \(group) (no member app left)\n") }
        reportCleanupWarnings(hooks: report.hooks, participantFailures: report.participantFailures)
    }

    /// Lints the installed app's `Settings.bundle` and shows its errors on
    /// standard error. The install stands, as on iOS, where Settings.app
    /// silently skips what it cannot show.
    /// Says when a compiled executable would miss the app's identifier
    /// through stock Foundation's `Bundle.main` (the install goes on).
    func warnAboutFoundationLayout(_ id: BundleIdentifier) {
        if let problem = manager.foundationLayoutProblem(of: id) { console.err("apphome: warning: \(problem)\n") }
    }

    func warnAboutSettingsBundle(_ app: String) {
        guard let bundle = try? SettingsBundle(path: app + "/Settings.bundle") else { return }
        let errors = Linter().lint(bundle).findings.filter { $0.severity == .error }
        guard !errors.isEmpty else { return }
        console.err("apphome: warning: Settings.bundle has \(errors.count) error(s); installed anyway (see 'defaults lint \(bundle.path)'):\n")
        for f in errors { console.err("  Settings.bundle/\(f.text)\n") }
    }
}
