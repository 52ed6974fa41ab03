#if canImport(Glibc)
import AppHomeSystem
import Glibc
#endif
import Containers
import Foundation
import Keychain
import PrefsService
import PropertyList
import Testing

/// `security` through prefsd gives what it gives on the files: same
/// output, same statuses, same items.
@Suite struct SecurityThroughPrefsdTests {
    /// A root with app A, and (when `daemon`) a prefsd serving it.
    final class Setup {
        let scratch: SecurityScratch
        let service: InProcessService?
        let socket: String
        init(daemon: Bool) throws {
            scratch = SecurityScratch()
            try scratch.install("com.example.A")
            try scratch.install("com.example.B")
            socket = scratch.path + "/run/prefsd.sock"
            if daemon {
                var configuration = ServerConfiguration(root: scratch.root, socketPath: socket, ownerUID: getuid(), log: { _ in })
                configuration.keyPolicy = .fileOnly
                configuration.keychainClock = { PlistDate(secondsSince1970: 1_800_000_000) }
                service = try InProcessService(configuration: configuration)
            } else {
                service = nil
            }
        }
        func run(_ args: [String], stdin: String? = nil, app: String = "com.example.A") -> (status: Int32, out: String, err: String) {
            let mode = service == nil ? ["APPHOME_PREFSD": "off"] : ["APPHOME_PREFSD": "require", "APPHOME_SOCKET": socket]
            let r = scratch.run(args, stdin: stdin, app: app, extra: mode)
            return (r.status, r.out.replacingOccurrences(of: scratch.root, with: "<root>"), r.err.replacingOccurrences(of: scratch.root, with: "<root>"))
        }
        func credentialIssued(_ id: String) throws -> Bool {
            let manager = ContainerManager(root: scratch.root)
            let entry = try manager.entry(for: BundleIdentifier(id))
            return try AppCredential.read(home: manager.layout.home(uuid: entry.homeUUID, bundleName: entry.bundleName)) != nil
        }
    }

    static let steps: [(args: [String], stdin: String?, app: String)] = [
        (["add-generic-password", "-s", "svc", "-a", "me", "-j", "note"], "first\n", "com.example.A"),
        (["add-generic-password", "-s", "svc", "-a", "me"], "again\n", "com.example.A"),
        (["add-generic-password", "-U", "-s", "svc", "-a", "me", "-l", "Label"], "second\n", "com.example.A"),
        (["find-generic-password", "-s", "svc", "-w"], nil, "com.example.A"),
        (["find-generic-password", "-s", "svc", "-g"], nil, "com.example.A"),
        (["find-generic-password", "-s", "svc", "-w"], nil, "com.example.B"),
        (["delete-generic-password", "-s", "svc"], nil, "com.example.B"),
        (["add-internet-password", "-s", "example.com", "-a", "me", "-r", "htps", "-P", "443"], "web\n", "com.example.A"),
        (["dump-keychain", "-d"], nil, "com.example.A"),
        (["delete-generic-password", "-s", "svc", "-a", "me"], nil, "com.example.A"),
        (["find-generic-password", "-s", "svc"], nil, "com.example.A"),
        (["find-internet-password", "-s", "example.com", "-r", "nope"], nil, "com.example.A"),
    ]

    @Test func everyStepGivesTheSameOutputAndStatusInBothModes() throws {
        let files = try Setup(daemon: false), daemon = try Setup(daemon: true)
        var statuses: [Int32] = [], secrets: [String] = []
        for step in Self.steps {
            let expected = files.run(step.args, stdin: step.stdin, app: step.app)
            let got = daemon.run(step.args, stdin: step.stdin, app: step.app)
            statuses.append(got.status)
            if step.args.last == "-w" { secrets.append(got.out) }
            #expect(got.status == expected.status, "\(step.args) → \(got) vs \(expected)")
            #expect(got.out == expected.out, "\(step.args)")
            #expect(got.err == expected.err, "\(step.args)")
        }
        // Not only the same, but right: added, duplicate, updated, B sees nothing, deleted.
        #expect(statuses == [0, 45, 0, 0, 0, 44, 44, 0, 0, 0, 44, 44])
        #expect(secrets == ["second\n", ""])
        // The daemon did the work: it issued A's credential (only for a daemon call).
        #expect(try daemon.credentialIssued("com.example.A"))
        #expect(try !files.credentialIssued("com.example.A"))
    }

    @Test func itemsWrittenThroughPrefsdAreReadDirectlyAndTheOtherWay() throws {
        let setup = try Setup(daemon: true)
        #expect(setup.run(["add-generic-password", "-s", "svc", "-a", "me"], stdin: "through prefsd\n").status == 0)
        let direct = setup.scratch.run(["find-generic-password", "-s", "svc", "-w"], extra: ["APPHOME_PREFSD": "off"])
        #expect(direct.status == 0 && direct.out == "through prefsd\n", "\(direct)")
        #expect(setup.scratch.run(["add-generic-password", "-s", "direct", "-a", "me"], stdin: "on the files\n", extra: ["APPHOME_PREFSD": "off"]).status == 0)
        let viaDaemon = setup.run(["find-generic-password", "-s", "direct", "-w"])
        #expect(viaDaemon.status == 0 && viaDaemon.out == "on the files\n", "\(viaDaemon)")
    }

    @Test(arguments: [
        (["APPHOME_PREFSD": "require", "APPHOME_SOCKET": "/nonexistent/prefsd.sock"],
         "security: prefsd is not answering on /nonexistent/prefsd.sock: No such file or directory\n"),
        (["APPHOME_PREFSD": "sometimes"], "security: APPHOME_PREFSD is \"sometimes\"; use off, auto or require\n"),
    ])
    func aModeThatCannotBeHonouredFails(env: [String: String], message: String) throws {
        let s = SecurityScratch()
        try s.install("com.example.A")
        let r = s.run(["add-generic-password", "-s", "svc", "-a", "me"], stdin: "x\n", extra: env)
        #expect(r.status == 1 && r.err == message && r.out.isEmpty, "\(r)")
        let check = s.run(["find-generic-password", "-s", "svc"], extra: ["APPHOME_PREFSD": "off"])
        #expect(check.status == 44, "nothing was added: \(check)")
    }

    @Test func autoFallsBackToTheFilesWhenNoPrefsdAnswers() throws {
        let s = SecurityScratch()
        try s.install("com.example.A")
        let env = ["APPHOME_PREFSD": "auto", "APPHOME_SOCKET": s.path + "/none.sock"]
        #expect(s.run(["add-generic-password", "-s", "svc", "-a", "me"], stdin: "x\n", extra: env).status == 0)
        #expect(s.run(["find-generic-password", "-s", "svc", "-w"], extra: env).out == "x\n")
    }
}
