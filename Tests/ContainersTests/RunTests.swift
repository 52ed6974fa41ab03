import Foundation
import Testing
@testable import Containers
import Backups
import ContainersTestSupport

@Suite struct RunTests {
    @Test func runSetsTheHomeEnvironmentAndWorkingDirectory() throws {
        let s = Scratch()
        let manager = ContainerManager(root: s.root)
        let home = try manager.install(try AppBundle(path: s.makeBundle(info: Scratch.info()))).home
        let out = s.path + "/env"
        let termination = try manager.run(try BundleIdentifier("com.example.Sample"),
                                          command: ["/bin/sh", "-c", "pwd > \(out); env >> \(out); exit 5"],
                                          base: ["PATH": "/usr/bin:/bin", "HOME": "/home/someone", "KEEP": "1"],
                                          options: RunOptions(sandbox: false))
        #expect(termination == .exited(5))
        #expect(termination.shellStatus == 5)
        let lines = (s.read(out) ?? "").split(separator: "\n").map(String.init)
        #expect(lines.first == home.path)
        let expected = [
            "HOME=\(home.path)", "CFFIXED_USER_HOME=\(home.path)", "TMPDIR=\(home.path)/tmp/",
            "XDG_DATA_HOME=\(home.path)/Library/Application Support", "XDG_CACHE_HOME=\(home.path)/Library/Caches",
            "APPHOME_BUNDLE_ID=com.example.Sample", "APPHOME_HOME=\(home.path)", "APPHOME_ROOT=\(s.root)", "KEEP=1",
        ]
        for line in expected { #expect(lines.contains(line), "\(line)") }
    }

    /// `CFBundleExecutable` names a file inside the signed bundle, judged by
    /// its bytes: "../" + U+0301 + "x" has no "/" character (the slash and
    /// the mark are one), but the kernel reads it as the parent of the
    /// bundle, the home the app itself can write.
    @Test(arguments: ["../\u{301}Sample", "Resources/\u{301}", "..", ""])
    func anExecutableOutsideTheBundleIsRefused(_ name: String) throws {
        let s = Scratch()
        let manager = ContainerManager(root: s.root)
        var info = Scratch.info()
        info["CFBundleExecutable"] = .string(name)
        let home = try manager.install(try AppBundle(path: s.makeBundle(info: info))).home
        try Data("#!/bin/sh\necho outside\n".utf8).write(to: URL(fileURLWithPath: home.path + "/\u{301}Sample"))
        chmod(home.path + "/\u{301}Sample", 0o755)
        #expect(throws: ContainersError.invalidBundle(path: home.app, reason: "CFBundleExecutable '\(name)' is not a file name")) {
            _ = try manager.executable(of: try BundleIdentifier("com.example.Sample"))
        }
        info["CFBundleExecutable"] = .string("Sample")
        info["CFBundleVersion"] = .string("2")
        _ = try manager.update(try AppBundle(path: s.makeBundle("v2", info: info)))
        let id = try BundleIdentifier("com.example.Sample")
        #expect(try manager.executable(of: id) == manager.home(for: id).app + "/Sample")
    }

    @Test func signalBecomes128PlusSignal() throws {
        let s = Scratch()
        let manager = ContainerManager(root: s.root)
        _ = try manager.install(try AppBundle(path: s.makeBundle(info: Scratch.info())))
        let t = try manager.run(try BundleIdentifier("com.example.Sample"), command: ["/bin/sh", "-c", "kill -TERM $$"], base: [:],
                                   options: RunOptions(sandbox: false))
        #expect(t == .signalled(SIGTERM))
        #expect(t.shellStatus == 128 + SIGTERM)
    }

    @Test func aRunningAppIsNeitherUpdatedNorUninstalledNorRestoredOver() throws {
        let s = Scratch()
        let manager = ContainerManager(root: s.root)
        let id = try BundleIdentifier("com.example.Sample")
        let installed = try manager.install(try AppBundle(path: s.makeBundle(info: Scratch.info())))
        try s.write("kept", to: installed.home.documents + "/note")
        let backup = try manager.backup(id)
        let v2 = try AppBundle(path: s.makeBundle("v2", info: Scratch.info(version: "2")))
        let running = try RunLock.shared(manager.layout.runLockPath(uuid: installed.entry.homeUUID))
        #expect(throws: ContainersError.appRunning("com.example.Sample")) { try manager.update(v2) }
        #expect(throws: ContainersError.appRunning("com.example.Sample")) { try manager.uninstall(id) }
        #expect(throws: ContainersError.appRunning("com.example.Sample")) { try manager.restore(from: backup.manifestPath) }
        #expect(try manager.entry(for: id) == installed.entry)
        #expect(s.read(installed.home.documents + "/note") == "kept")
        running.unlock()
        let updated = try manager.update(v2)
        #expect(updated.entry.version == "2")
        #expect(!FileManager.default.fileExists(atPath: manager.layout.runLockPath(uuid: installed.entry.homeUUID)))
    }

    /// bubblewrap and friends are looked up on `PATH` by bytes: empty and
    /// relative entries are skipped, the first executable file wins.
    @Test func sandboxProgramsAreLookedUpOnPath() throws {
        let s = Scratch()
        let bin = s.path + "/b\u{301}in"
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        #expect(FileManager.default.createFile(atPath: bin + "/tool", contents: Data("#!/bin/sh\n".utf8), attributes: [.posixPermissions: 0o755]))
        #expect(FileManager.default.createFile(atPath: s.path + "/tool", contents: Data(), attributes: [.posixPermissions: 0o644]))
        #expect(SandboxLauncher.lookUp("tool", path: "::relative:\(s.path):\(bin):/usr/bin") == bin + "/tool", "not executable: passed over")
        #expect(SandboxLauncher.lookUp("sh", path: "/nowhere::/bin") == "/bin/sh")
        #expect(SandboxLauncher.lookUp("tool", path: "/nowhere") == nil)
        #expect(SandboxLauncher.lookUp("sh", path: nil) != nil, "/usr/bin:/bin by default")
    }

    @Test func missingProgramIsASystemError() throws {
        let s = Scratch()
        let manager = ContainerManager(root: s.root)
        _ = try manager.install(try AppBundle(path: s.makeBundle(info: Scratch.info())))
        #expect(throws: ContainersError.self) {
            try manager.run(try BundleIdentifier("com.example.Sample"), command: [s.path + "/no-such-program"], base: [:])
        }
    }
}
