import Foundation
import Testing

/// The systemd units in examples/systemd, read by a test so that they cannot go stale.
@Suite("systemd units")
struct SystemdUnitTests {
    static var directory: URL { InstalledAppTests.examples.appendingPathComponent("systemd") }

    /// `key=value` lines of a unit (comments and section headers dropped).
    static func settings(_ name: String) throws -> [String: String] {
        let text = try String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8)
        var result: [String: String] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") && !line.hasPrefix("[") {
            guard let eq = line.firstIndex(of: "=") else { continue }
            result[String(line[..<eq])] = String(line[line.index(after: eq)...])
        }
        return result
    }

    @Test func theSocketUnitListensWhereClientsLookWithPrivateModes() throws {
        let socket = try Self.settings("prefsd.socket")
        #expect(socket["ListenStream"] == "%t/apphome/prefsd.sock")
        #expect(socket["SocketMode"] == "0600")
        #expect(socket["DirectoryMode"] == "0700")
    }

    @Test func theServiceRunsPrefsdInTheForegroundOnThatSocket() throws {
        let service = try Self.settings("prefsd.service")
        let exec = try #require(service["ExecStart"]).split(separator: " ").map(String.init)
        #expect(exec.first?.hasSuffix("/prefsd") == true)
        #expect(Array(exec.dropFirst()) == ["--foreground", "--socket", "%t/apphome/prefsd.sock"])
        #expect(service["Requires"] == "prefsd.socket")
    }
}
