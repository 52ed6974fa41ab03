import PrefsProtocol
import PropertyList
import Testing

/// An uninstall request carries only the variables hooks may get, never the caller's whole environment.
@Suite struct HookEnvironmentTests {
    @Test(arguments: [
        ([:], [:]),
        (["PATH": "/usr/bin", "HOME": "/h", "LANG": "C.UTF-8", "LC_ALL": "C", "TZ": "UTC", "TMPDIR": "/t"],
         ["PATH": "/usr/bin", "HOME": "/h", "LANG": "C.UTF-8", "LC_ALL": "C", "TZ": "UTC", "TMPDIR": "/t"]),
        (["TZ": "UTC", "DBUS_SESSION_BUS_ADDRESS": "unix:path=/x", "APPHOME_KEYCHAIN_KEY_STORE": "file", "GITHUB_TOKEN": "t"],
         ["TZ": "UTC"]),
        (["path": "/lower/case/is/another/variable", "XDG_RUNTIME_DIR": "/run/user/1"], [:]),
    ] as [([String: String], [String: String])])
    func onlyAllowedVariablesAreKept(environment: [String: String], kept: [String: String]) {
        #expect(HookEnvironment(from: environment).variables == kept)
    }

    @Test func theAllowListIsTheDocumentedOne() {
        #expect(HookEnvironment.allowed == ["PATH", "HOME", "LANG", "LC_ALL", "TZ", "TMPDIR"])
    }

    @Test func aRequestNamingOtherVariablesHasThemDroppedWhenDecoded() throws {
        let request = Request.uninstall(bundleIdentifier: "com.example.App", hookEnvironment: HookEnvironment(from: ["LANG": "C.UTF-8"]))
        guard case .dictionary(var d) = try PlistCodec.decode(try request.encode(id: 9), format: .binary) else {
            Issue.record("the request is not a dictionary")
            return
        }
        #expect(d["hookEnvironment"] == .dictionary(["LANG": .string("C.UTF-8")]))
        d["hookEnvironment"] = .dictionary(["LANG": .string("C.UTF-8"), "SECRET_TOKEN": .string("s3cret"), "PATH": .string("/bin")])
        let (id, decoded) = Request.decode(try PlistCodec.encode(.dictionary(d), format: .binary))
        #expect(id == 9)
        #expect(try decoded.get() == .uninstall(bundleIdentifier: "com.example.App",
                                                hookEnvironment: HookEnvironment(from: ["LANG": "C.UTF-8", "PATH": "/bin"])))
    }
}
