import SettingsApp
import Testing

@Suite struct AccessGateTests {
    let gate = AccessGate(address: .loopback(host: "127.0.0.1", port: 8123), token: "tok", session: "sess")

    @Test(arguments: [("127.0.0.1:8123", true), ("localhost:8123", true), ("evil.example:8123", false),
                      ("127.0.0.1:8124", false), ("127.0.0.1", false), ("", false)])
    func hostMustBeTheServedLoopbackAddress(_ host: String, _ allowed: Bool) {
        #expect(gate.hostAllowed(host) == allowed)
    }

    @Test func originMustBeThePageOwn() {
        #expect(gate.originAllowed("http://127.0.0.1:8123", host: "127.0.0.1:8123"))
        #expect(!gate.originAllowed("http://evil.example", host: "127.0.0.1:8123"))
        #expect(!gate.originAllowed(nil, host: "127.0.0.1:8123"))
        #expect(!gate.originAllowed("null", host: "127.0.0.1:8123"))
        #expect(!gate.originAllowed("http://evil.example:8123", host: "evil.example:8123"))
    }

    @Test func cookieCarriesTheSessionNotTheToken() {
        #expect(gate.cookieAllowed("a=b; apphome_settings=sess"))
        #expect(!gate.cookieAllowed("apphome_settings=tok"))
        #expect(!gate.cookieAllowed("apphome_settings=sess2"))
        #expect(!gate.cookieAllowed(nil))
        #expect(gate.setCookie.contains("HttpOnly") && gate.setCookie.contains("SameSite=Strict"))
    }

    @Test func acceptLanguageIsOrderedByWeight() {
        #expect(AcceptLanguage.languages("en;q=0.5, fr-CH, fr;q=0.9") == ["fr-CH", "fr", "en"])
        #expect(AcceptLanguage.languages("*, de;q=0") == [])
        #expect(AcceptLanguage.languages(nil) == [])
    }
}
