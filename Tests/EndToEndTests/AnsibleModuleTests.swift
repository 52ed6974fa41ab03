import Foundation
import Testing

/// `contrib/ansible/library/apphome_defaults.py` under the real
/// `ansible-playbook` (ansible-core from PyPI, in `.build/venv-ansible`,
/// made by `scripts/ansible-venv.sh` once and reused) against localhost,
/// driving the built `defaults`.
///
/// Only in the files run of the end-to-end suite: the module sees nothing of
/// the transport (`defaults apply`, which it drives, runs in both), and the
/// playbooks cost about a minute (`APPHOME_TEST_ANSIBLE=always` runs them
/// through prefsd too).
@Suite("Ansible module", .enabled(if: !TempRoot.daemonMode || ProcessInfo.processInfo.environment["APPHOME_TEST_ANSIBLE"] == "always"))
struct AnsibleModuleTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let venv = repository.appendingPathComponent(".build/venv-ansible")

    /// Makes the virtual environment once per test process.
    static let ready: Result<URL, HarnessError> = {
        let io = FileManager.default.temporaryDirectory.appendingPathComponent("apphome-ansible-venv-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: io, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: io) }
        let made = try? Subprocess.run(URL(fileURLWithPath: "/bin/sh"), [repository.appendingPathComponent("scripts/ansible-venv.sh").path, venv.path],
                                       environment: ProcessInfo.processInfo.environment, ioDirectory: io, timeout: 600)
        guard let made, made.status == 0 else { return .failure(.helper("scripts/ansible-venv.sh failed: \(made.map { "\($0)" } ?? "did not run")")) }
        return .success(venv.appendingPathComponent("bin/ansible-playbook"))
    }()

    /// What the recap line says of localhost.
    struct Recap: Equatable { var changed: Int; var failed: Int }

    /// Runs `playbook` (YAML text, or a file with `file`) against localhost.
    func play(_ t: TempRoot, _ playbook: String? = nil, file: URL? = nil, _ options: [String] = [],
              extraVars: [String: String] = [:]) throws -> (Recap?, CommandResult) {
        let playbookFile = file ?? t.workFile("play-\(UUID().uuidString).yml")
        if let playbook { try t.write(playbook, to: playbookFile) }
        var vars = ["apphome_root": t.root.path, "apphome_defaults": try DefaultsBinary.url().path,
                    "ansible_python_interpreter": Self.venv.appendingPathComponent("bin/python").path]
        vars.merge(extraVars) { _, new in new }
        let varsJSON = String(decoding: try JSONSerialization.data(withJSONObject: vars), as: UTF8.self)
        var env = t.environment([
            "ANSIBLE_LIBRARY": Self.repository.appendingPathComponent("contrib/ansible/library").path,
            "ANSIBLE_HOME": t.work.appendingPathComponent("ansible-home").path,
            "ANSIBLE_LOCAL_TEMP": t.work.appendingPathComponent("ansible-tmp").path,
            "ANSIBLE_NOCOLOR": "1", "ANSIBLE_FORCE_COLOR": "0", "ANSIBLE_PIPELINING": "1", "ANSIBLE_RETRY_FILES_ENABLED": "0",
            "ANSIBLE_LOCALHOST_WARNING": "0", "ANSIBLE_INVENTORY_UNPARSED_WARNING": "0", "ANSIBLE_DEPRECATION_WARNINGS": "0",
        ])
        env["PATH"] = Self.venv.appendingPathComponent("bin").path + ":" + (env["PATH"] ?? "/usr/bin:/bin")
        let result = try Subprocess.run(try Self.ready.get(), ["-i", "localhost,", "-c", "local", "-e", varsJSON] + options + [playbookFile.path],
                                        environment: env, ioDirectory: t.io, timeout: 300)
        let line = result.stdout.split(separator: "\n").first { $0.hasPrefix("localhost") && $0.contains("changed=") }
        func count(_ name: String) -> Int? {
            guard let line, let r = line.range(of: name + "=") else { return nil }
            return Int(line[r.upperBound...].prefix { $0.isNumber })
        }
        return (count("changed").flatMap { c in count("failed").map { Recap(changed: c, failed: $0) } }, result)
    }

    static let typedPlaybook = """
        - hosts: localhost
          gather_facts: false
          vars: {common: &common {domain: com.example.ansible, root: "{{ apphome_root }}", executable: "{{ apphome_defaults }}"}}
          tasks:
            - apphome_defaults: {<<: *common, key: count, type: int, value: 42}
            - apphome_defaults: {<<: *common, key: enabled, type: bool, value: "yes"}
            - apphome_defaults: {<<: *common, key: ratio, type: float, value: 0.25}
            - apphome_defaults: {<<: *common, key: since, type: date, value: "2026-01-02 03:04:05"}
            - apphome_defaults: {<<: *common, key: tags, type: array, value: [red, green]}
            - apphome_defaults: {<<: *common, key: colors, type: array, array_add: true, value: [green, blue]}
            - apphome_defaults: {<<: *common, key: name, value: hello world}
            - apphome_defaults: {<<: *common, key: obsolete, state: absent}
        """

    @Test func firstRunChangesSecondDoesNotCheckModeWritesNothingAndTypesLand() throws {
        let t = try TempRoot()
        try t.succeed(["write", "com.example.ansible", "obsolete", "-int", "1"])
        try t.succeed(["write", "com.example.ansible", "colors", "-array", "green"])
        let before = t.snapshot()
        let (checked, checkRun) = try play(t, Self.typedPlaybook, ["--check", "--diff"])
        #expect(checked == Recap(changed: 8, failed: 0), "\(checkRun)")
        #expect(checkRun.stdout.contains("+count = 42"), "diff mode shows the new value: \(checkRun)")
        #expect(t.snapshot() == before, "check mode wrote")
        let (first, firstRun) = try play(t, Self.typedPlaybook)
        #expect(first == Recap(changed: 8, failed: 0), "\(firstRun)")
        try t.expectPlist(t.domainFile("com.example.ansible"), equals: """
            {'count': 42, 'enabled': True, 'ratio': 0.25, 'since': datetime.datetime(2026, 1, 2, 3, 4, 5),
             'tags': ['red', 'green'], 'colors': ['green', 'blue'], 'name': 'hello world'}
            """)
        let (second, secondRun) = try play(t, Self.typedPlaybook)
        #expect(second == Recap(changed: 0, failed: 0), "\(secondRun)")
    }

    @Test func theExamplePlaybookSetsDefaultsAndAManagedKeyThenRefusesIt() throws {
        let t = try TempRoot()
        try t.succeed(["write", "com.example.editor", "legacyTheme", "dark"])
        let example = InstalledAppTests.examples.appendingPathComponent("ansible/site.yml")
        let vars = ["apphome_managed_dir": t.managed.path]
        let (first, run) = try play(t, file: example, extraVars: vars)
        #expect(first == Recap(changed: 6, failed: 0), "\(run)")
        try t.expectPlist(t.domainFile("com.example.editor"), equals: "{'fontSize': 14, 'showRuler': True, 'pinnedProjects': ['handbook']}")
        try t.expectOutput(["read", "--effective", "com.example.editor", "spellCheck"], "1\n(layer: managed)\n")
        let (again, rerun) = try play(t, file: example, extraVars: vars)
        #expect(again == Recap(changed: 0, failed: 0), "\(rerun)")
        // A task that would change the forced key fails, unchanged, with defaults' message.
        let before = t.snapshot()
        let (refused, refusal) = try play(t, """
            - hosts: localhost
              gather_facts: false
              tasks:
                - apphome_defaults: {domain: com.example.editor, key: spellCheck, type: bool, value: false,
                                     root: "{{ apphome_root }}", executable: "{{ apphome_defaults }}"}
            """)
        #expect(refused == Recap(changed: 0, failed: 1), "\(refusal)")
        #expect(refusal.stdout.contains("Key spellCheck of domain com.example.editor is managed by \(t.managed.path)/com.example.editor.plist"), "\(refusal)")
        #expect(refusal.stdout.contains("\"changed\": false"), "\(refusal)")
        #expect(t.snapshot() == before)
    }
}
