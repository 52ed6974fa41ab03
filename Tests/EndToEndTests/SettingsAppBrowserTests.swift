import Foundation
import Testing

/// `apphome settings` in a real browser: `Tests/Browser/settings_app_test.py`
/// drives Debian's chromium (headless) with Playwright from PyPI, in
/// `.build/venv-playwright` (made once by `scripts/playwright-venv.sh`), against
/// the built `apphome`, `apphome-settings` and `defaults`: one server and one
/// browser for the whole script. The files run of the suite (inotify feeds the
/// page) writes the screenshots of `docs/images/`; the prefsd run
/// (`APPHOME_TEST_PREFSD=daemon`) checks the same through prefsd, whose change
/// notifications feed the page.
@Suite("Settings app in chromium")
struct SettingsAppBrowserTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The venv's python, made once per test process.
    static let python: Result<URL, HarnessError> = {
        let io = FileManager.default.temporaryDirectory.appendingPathComponent("apphome-playwright-venv-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: io, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: io) }
        let made = try? Subprocess.run(URL(fileURLWithPath: "/bin/sh"), [repository.appendingPathComponent("scripts/playwright-venv.sh").path],
                                       environment: ProcessInfo.processInfo.environment, ioDirectory: io, timeout: 900)
        guard let made, made.status == 0 else { return .failure(.helper("scripts/playwright-venv.sh failed: \(made.map { "\($0)" } ?? "did not run")")) }
        return .success(URL(fileURLWithPath: made.stdout.trimmingCharacters(in: .whitespacesAndNewlines)).appendingPathComponent("bin/python"))
    }()

    @Test func scaryBugsPageWorksInChromium() throws {
        let t = try TempRoot()
        let bin = try DefaultsBinary.url().deletingLastPathComponent()
        var arguments = [Self.repository.appendingPathComponent("Tests/Browser/settings_app_test.py").path, "--bin", bin.path]
        if TempRoot.daemonMode {
            arguments.append("--prefsd")
        } else {
            arguments += ["--screenshots", Self.repository.appendingPathComponent("docs/images").path]
        }
        var environment = ProcessInfo.processInfo.environment
        environment["TMPDIR"] = t.work.path
        let result = try Subprocess.run(try Self.python.get(), arguments, environment: environment, ioDirectory: t.io, timeout: 600)
        #expect(result.status == 0 && result.stdout.contains(" passed, 0 failed"), "\(result)")
    }
}
