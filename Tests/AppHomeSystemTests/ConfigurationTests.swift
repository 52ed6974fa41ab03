import AppHomeSystem
import Testing

@Suite("the configuration read from the environment")
struct ConfigurationTests {
    static func parse(_ variables: [String: String]) -> Configuration {
        Configuration(variable: { variables[$0] })
    }

    @Test func anEmptyEnvironmentGivesTheDefaults() {
        let c = Self.parse([:])
        #expect(c == Configuration())
        #expect(c.root == nil)
        #expect(c.serviceMode == .success(.auto))
        #expect(c.socketPath == nil)
        #expect(c.keyStore == .automatic)
        #expect(!c.sessionBusAvailable)
        #expect(c.keyCacheSeconds == nil)
        #expect(c.bundleIdentifier == nil)
        #expect(c.socketActivation == nil)
        #expect(c.hookVariables.isEmpty)
        #expect(c.managedDirectory == Configuration.defaultManagedDirectory)
    }

    @Test func everyDocumentedVariableReachesItsField() {
        let c = Self.parse([
            "APPHOME_ROOT": "/r", "APPHOME_PREFSD": "Require", "APPHOME_SOCKET": "/s.sock",
            "APPHOME_KEYCHAIN_KEY_STORE": "file", "DBUS_SESSION_BUS_ADDRESS": "unix:path=/b",
            "APPHOME_KEYCHAIN_KEY_CACHE": "90", "APPHOME_BUNDLE_ID": "com.example.a",
            "LISTEN_PID": "42", "LISTEN_FDS": "1", "APPHOME_MANAGED_DIR": "/m",
        ])
        #expect(c.root == "/r")
        #expect(c.serviceMode == .success(.require))
        #expect(c.socketPath == "/s.sock")
        #expect(c.keyStore == .file)
        #expect(c.sessionBusAvailable)
        #expect(c.keyCacheSeconds == 90)
        #expect(c.bundleIdentifier == "com.example.a")
        #expect(c.socketActivation?.pid == 42 && c.socketActivation?.count == 1)
        #expect(c.managedDirectory == "/m")
    }

    @Test func anUnknownServiceModeIsKeptForTheCommandThatNeedsIt() {
        #expect(Self.parse(["APPHOME_PREFSD": "maybe"]).serviceMode == .failure(.unknownServiceMode("maybe")))
    }

    @Test func emptyVariablesCountAsUnset() {
        let c = Self.parse(["APPHOME_ROOT": "", "HOME": "/h", "APPHOME_PREFSD": "", "XDG_RUNTIME_DIR": "/run/u", "LISTEN_PID": ""])
        #expect(c.root == "/h/.local/share/apphome")
        #expect(c.serviceMode == .success(.auto))
        #expect(c.socketPath == "/run/u/apphome/prefsd.sock")
        #expect(c.socketActivation == nil)
    }

    @Test func hookVariablesHoldTheAllowListAsSetEvenWhenEmpty() {
        let c = Self.parse(["PATH": "/usr/bin:/bin", "LANG": "", "TZ": "UTC", "SECRET": "x", "APPHOME_ROOT": "/r"])
        #expect(c.hookVariables == ["PATH": "/usr/bin:/bin", "LANG": "", "TZ": "UTC"])
    }

    @Test func configurationsWithDifferentHookVariablesDiffer() {
        #expect(Self.parse(["TMPDIR": "/t"]) != Self.parse(["TMPDIR": "/u"]))
        #expect(Self.parse(["TMPDIR": "/t"]) == Configuration(hookVariables: ["TMPDIR": "/t"]))
    }

    @Test func hookVariablesCanBeReplaced() {
        var c = Self.parse(["PATH": "/bin", "HOME": "/h"])
        c.hookVariables = ["HOME": "/elsewhere", "LC_ALL": "C"]
        #expect(c.hookVariables == ["HOME": "/elsewhere", "LC_ALL": "C"])
        #expect(c == Configuration(root: "/h/.local/share/apphome", hookVariables: ["HOME": "/elsewhere", "LC_ALL": "C"]))
    }
}
