import Testing
@testable import Preferences

@Suite struct DomainTests {
    @Test(arguments: ["-g", "-globalDomain", "NSGlobalDomain", "Apple Global Domain"])
    func recognisesEveryGlobalSpelling(argument: String) throws {
        #expect(try Domain(argument: argument) == .global)
    }

    @Test func takesAbsolutePathsAsFiles() throws {
        #expect(try Domain(argument: "/tmp/x/settings") == .file(path: "/tmp/x/settings.plist"))
        #expect(try Domain(argument: "/tmp/x/settings.plist") == .file(path: "/tmp/x/settings.plist"))
        #expect(try Domain(argument: "/tmp/x/settings").description == "/tmp/x/settings")
    }

    @Test(arguments: ["", ".", "..", "../x", "a/b", "com..evil", "a\u{0}b", "tab\there", String(repeating: "x", count: 201), "/tmp/../etc/passwd", "/"])
    func writeRejectsDomainsThatCouldEscapeTheRoot(argument: String) {
        #expect(throws: PreferencesError.self) { try Domain(argument: argument) }
    }

    @Test(arguments: [
        ("", "a domain name must not be empty"),
        ("..", "a domain name must not contain '..'"),
        ("com..evil", "a domain name must not contain '..'"),
        ("a/b", "a domain name must not contain '/' (give an absolute path for a file)"),
        ("a\u{0}b", "it contains a NUL character"),
        (String(repeating: "é", count: 101), "a domain name must be at most 200 bytes"),
        ("tab\there", "a domain name must not contain control characters"),
        ("del\u{7F}", "a domain name must not contain control characters"),
        // A combining mark after '/', '.' or NUL makes one Character of them; the bytes still count.
        ("a/\u{301}b", "a domain name must not contain '/' (give an absolute path for a file)"),
        ("x..\u{301}", "a domain name must not contain '..'"),
        ("a\u{0}\u{301}b", "it contains a NUL character"),
        ("/tmp/a\u{0}\u{301}b", "it contains a NUL character"),
        ("/tmp/../etc/passwd", "a path domain must not contain '.' or '..' components"),
        ("/", "a path domain must name a file"),
    ])
    func refusesEachUnsafeNameWithItsReason(argument: String, reason: String) {
        #expect(throws: PreferencesError.invalidDomainName(argument, reason: reason)) { try Domain(argument: argument) }
    }

    @Test(arguments: ["com.example.app", "a.b-c_d", "Ünïcödé.app", "x.\u{301}y", String(repeating: "x", count: 200)])
    func acceptsNamesThatAreOneSafeFileName(argument: String) throws {
        #expect(try Domain(argument: argument) == .named(argument))
    }

    @Test func resolvesEveryDomainFormToOneFile() throws {
        let resolver = DomainResolver(root: "/r/")
        let host = { () throws(PreferencesError) -> String in "HOST" }
        #expect(try resolver.path(for: .named("com.a"), hostIdentifier: host) == "/r/Library/Preferences/com.a.plist")
        #expect(try resolver.path(for: .global, hostIdentifier: host) == "/r/Library/Preferences/.GlobalPreferences.plist")
        #expect(try resolver.path(for: .named("com.a"), scope: .currentHost, hostIdentifier: host) == "/r/Library/Preferences/ByHost/com.a.HOST.plist")
        #expect(try resolver.path(for: .global, scope: .currentHost, hostIdentifier: host) == "/r/Library/Preferences/ByHost/.GlobalPreferences.HOST.plist")
        #expect(try resolver.path(for: .named("com.a"), scope: .named("box"), hostIdentifier: host) == "/r/Library/Preferences/ByHost/com.a.box.plist")
        #expect(try resolver.path(for: .file(path: "/x/y.plist"), scope: .currentHost, hostIdentifier: host) == "/x/y.plist")
        #expect(throws: PreferencesError.invalidHostName("../x")) {
            try resolver.path(for: .named("com.a"), scope: .named("../x"), hostIdentifier: host)
        }
    }

    /// Two names with the same text in two normal forms are two files, so
    /// two domains; the same bytes are one (equal, and one key).
    @Test func domainsAreTheirBytes() {
        let composed = "com.caf\u{e9}", decomposed = "com.cafe\u{301}"
        #expect(composed == decomposed)  // Swift's String would make them one
        #expect(Domain.named(composed) != Domain.named(decomposed))
        #expect(Domain.file(path: "/p/" + composed) != Domain.file(path: "/p/" + decomposed))
        #expect(Domain.named(composed) == Domain.named("com.caf\u{e9}"))
        #expect(Domain.named(composed) != .global && Domain.named("a") != Domain.file(path: "a"))
        #expect(Set([Domain.named(composed), .named(decomposed), .named(composed)]).count == 2)
    }

    /// A slash or NUL that a combining mark follows is one `Character`
    /// with it, but the file system still sees the byte.
    @Test(arguments: ["a/\u{301}b", "a\u{0}\u{301}", "/\u{301}", "x..\u{301}", ""])
    func aHostNameIsCheckedByItsBytes(_ name: String) {
        let resolver = DomainResolver(root: "/r")
        #expect(throws: PreferencesError.invalidHostName(name)) {
            try resolver.path(for: .named("com.a"), scope: .named(name), hostIdentifier: { () throws(PreferencesError) -> String in "H" })
        }
    }

    @Test func routesAnInstalledAppsDomainToItsHome() throws {
        let resolver = DomainResolver(root: "/r", appPreferencesDirectory: { $0 == "com.app" ? "/r/Applications/U/Library/Preferences" : nil })
        let host = { () throws(PreferencesError) -> String in "H" }
        #expect(try resolver.path(for: .named("com.app"), hostIdentifier: host) == "/r/Applications/U/Library/Preferences/com.app.plist")
        #expect(try resolver.path(for: .named("com.other"), hostIdentifier: host) == "/r/Library/Preferences/com.other.plist")
    }
}
