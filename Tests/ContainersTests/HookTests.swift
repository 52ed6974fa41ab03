import Foundation
import Testing
@testable import Containers
import ContainersTestSupport

@Suite struct HookTests {
    func installSample(_ s: Scratch) throws -> (ContainerManager, ApplicationHome) {
        let manager = ContainerManager(root: s.root)
        let report = try manager.install(try AppBundle(path: s.makeBundle(info: Scratch.info(version: "7"))))
        return (manager, report.home)
    }

    func hook(_ s: Scratch, _ name: String, _ body: String, executable: Bool = true) throws {
        let path = s.root + "/Hooks/uninstall.d/" + name
        try s.write("#!/bin/sh\n" + body + "\n", to: path)
        chmod(path, executable ? 0o755 : 0o644)
    }

    @Test func hooksRunSortedWithTheAppsVariables() throws {
        let s = Scratch()
        let (manager, home) = try installSample(s)
        let log = s.path + "/log"
        try hook(s, "20-second", "echo \"second $APPHOME_BUNDLE_ID $APPHOME_VERSION $APPHOME_HOME $KEEP\" >> \(log)")
        try hook(s, "10-first", "echo \"first $APPHOME_BUNDLE_ID\" >> \(log)")
        try hook(s, "30-not-executable", "echo never >> \(log)", executable: false)
        try hook(s, ".hidden", "echo never >> \(log)")
        let report = try manager.uninstall(try BundleIdentifier("com.example.Sample"), environment: ["KEEP": "kept", "PATH": "/usr/bin:/bin"])
        #expect(s.read(log) == "first com.example.Sample\nsecond com.example.Sample 7 \(home.path) kept\n")
        #expect(report.hooks.map { FileSystem_lastComponent($0.path) } == ["10-first", "20-second"])
        #expect(report.hooks.allSatisfy { $0.succeeded })
    }

    @Test func failingHookIsReportedAndDoesNotStopTheOthers() throws {
        let s = Scratch()
        let (manager, home) = try installSample(s)
        let log = s.path + "/log"
        try hook(s, "1-fails", "exit 3")
        try hook(s, "2-runs", "echo ran >> \(log)")
        let report = try manager.uninstall(try BundleIdentifier("com.example.Sample"), environment: ["PATH": "/usr/bin:/bin"])
        #expect(report.hooks.map(\.termination) == [.exited(3), .exited(0)])
        #expect(report.hooks[0].failureDescription == "uninstall hook \(s.root)/Hooks/uninstall.d/1-fails failed with exit status 3")
        #expect(s.read(log) == "ran\n")
        #expect(!FileSystem_exists(home.path))
        #expect(try manager.registry.read().entries.isEmpty)
    }

    @Test func hookPastItsTimeoutIsKilledWithItsChildren() throws {
        let s = Scratch()
        let (manager, _) = try installSample(s)
        try hook(s, "slow", "sleep 30; echo late > \(s.path)/late")
        let start = Date()
        let report = try manager.uninstall(try BundleIdentifier("com.example.Sample"), environment: ["PATH": "/usr/bin:/bin"], hookTimeout: 0.3)
        #expect(Date().timeIntervalSince(start) < 5)
        #expect(report.hooks.map(\.termination) == [.timedOut])
        #expect(report.hooks[0].failureDescription?.hasSuffix("timed out and was killed") == true)
    }
}
