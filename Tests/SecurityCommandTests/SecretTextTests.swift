import AppHomeSystem
import Testing

/// Bytes from lowercase hex, or nil when `text` is anything else.
func bytes(fromLowercaseHex text: Substring) -> [UInt8]? {
    guard !text.utf8.contains(where: { (0x41...0x46).contains($0) }) else { return nil }
    return Hex.decode(String(text))
}

/// 256 KiB of random bytes that are not valid UTF-8 (the first byte is
/// 0xFF) and do not end in a line end (which standard input drops).
func randomBinarySecret(count: Int = 256 * 1024) -> [UInt8] {
    var g = SystemRandomNumberGenerator()
    var b = (0..<count).map { _ in UInt8.random(in: 0...255, using: &g) }
    b[0] = 0xFF
    b[count - 1] = 0x42
    return b
}

/// Secrets go in and come out of `security` unaltered: every byte of
/// standard input (less one final line end) is stored; `-w` prints valid
/// UTF-8 as it is and anything else as lowercase hex of the exact bytes;
/// `-g` and `dump-keychain -d` quote text and print other bytes as `0x…`.
@Suite struct SecretTextTests {
    func scratch() throws -> SecurityScratch {
        let s = SecurityScratch()
        try s.install("com.example.A")
        return s
    }

    @Test(arguments: [
        (["add-generic-password", "-a", "alice", "-s", "bin"], ["find-generic-password", "-a", "alice", "-s", "bin"]),
        (["add-internet-password", "-a", "alice", "-s", "bin.example.com", "-r", "htps"], ["find-internet-password", "-s", "bin.example.com"]),
    ])
    func aSecretThatIsNotUTF8PrintsAsLowercaseHexOfItsExactBytes(add: [String], find: [String]) throws {
        let s = try scratch()
        let secret = randomBinarySecret()
        #expect(String(validating: secret, as: UTF8.self) == nil)
        let added = s.run(add, input: secret)
        #expect(added.status == 0 && added.err.isEmpty, "\(added.err)")
        let w = s.run(find + ["-w"])
        #expect(w.status == 0 && w.err.isEmpty)
        #expect(w.out.utf8.count == 2 * secret.count + 1 && w.out.last == "\n")
        #expect(bytes(fromLowercaseHex: w.out.dropLast()) == secret)
        let g = s.run(find + ["-g"])
        #expect(g.status == 0 && g.err.hasPrefix("password: 0x") && g.err.hasSuffix("\n"))
        #expect(bytes(fromLowercaseHex: g.err.dropFirst("password: 0x".count).dropLast()) == secret)
        let dump = s.run(["dump-keychain", "-d"])
        let data = try #require(dump.out.split(separator: "\n").first { $0.hasPrefix("0x") })
        #expect(bytes(fromLowercaseHex: data.dropFirst(2)) == secret)
    }

    @Test(arguments: ["line one\nline two é", "tab\tand \u{1}7 and \u{7F}", "x\0y", "abc0123"])
    func aUTF8SecretPrintsExactlyWithW(secret: String) throws {
        let s = try scratch()
        #expect(s.run(["add-generic-password", "-a", "alice", "-s", "text"], stdin: secret + "\n").status == 0)
        let w = s.run(["find-generic-password", "-s", "text", "-w"])
        #expect(w.status == 0 && Array(w.out.utf8) == Array(secret.utf8) + [0x0A])
    }

    /// `-g` (and `dump-keychain -d`) quote a text secret as macOS does, with
    /// three-digit octal escapes, so the quoted form reads back unambiguously.
    @Test(arguments: [
        ("line one\nline two é", #""line one\nline two é""#),
        ("\u{1}7 \"q\" \\", #""\0017 \"q\" \\""#),
    ])
    func dashGQuotesATextSecretUnambiguously(secret: String, quoted: String) throws {
        let s = try scratch()
        #expect(s.run(["add-generic-password", "-a", "alice", "-s", "text"], stdin: secret).status == 0)
        #expect(s.run(["find-generic-password", "-s", "text", "-g"]).err == "password: \(quoted)\n")
        #expect(s.run(["dump-keychain", "-d"]).out.contains("data:\n\(quoted)\n"))
    }

    /// Several lines on standard input are kept as they are; only one final
    /// line end (`\n` or `\r\n`) is dropped, as `echo` and `printf '%s\n'` add one.
    @Test(arguments: [
        ("first\nsecond\nthird\n", "first\nsecond\nthird"),
        ("first\nsecond\n\n", "first\nsecond\n"),
        ("crlf\r\n", "crlf"),
        ("no line end", "no line end"),
    ])
    func standardInputIsStoredWholeLessOneFinalLineEnd(input: String, stored: String) throws {
        let s = try scratch()
        #expect(s.run(["add-generic-password", "-a", "alice", "-s", "lines"], stdin: input).status == 0)
        #expect(s.run(["find-generic-password", "-s", "lines", "-w"]).out == stored + "\n")
    }

    @Test func theHelpSaysWhatIsReadAndPrinted() throws {
        let s = try scratch()
        let help = s.run(["add-generic-password", "--help"]).out
        #expect(!help.contains("one line"))
        #expect(help.contains("all of standard input"))
        let find = s.run(["find-generic-password", "--help"]).out
        #expect(find.contains("lowercase hex"))
    }

    /// `echo pw | security add-internet-password … -w`: a trailing `-w` (the
    /// "prompt me" form) reads a piped standard input instead of failing for
    /// want of a terminal.
    @Test(arguments: [
        (["add-internet-password", "-a", "u", "-s", "host", "-w"], ["find-internet-password", "-s", "host", "-w"]),
        (["add-generic-password", "-a", "u", "-s", "svc", "-w"], ["find-generic-password", "-s", "svc", "-w"]),
        (["add-generic-password", "-U", "-a", "u", "-s", "svc", "-w"], ["find-generic-password", "-s", "svc", "-w"]),
    ])
    func aTrailingDashWReadsAPipedStandardInput(add: [String], find: [String]) throws {
        let s = try scratch()
        let r = s.run(add, stdin: "pw\n")
        #expect(r.status == 0 && r.err.isEmpty, "\(r.err)")
        #expect(s.run(find).out == "pw\n")
    }

    /// An empty standard input (nothing, or only a line end) stores nothing
    /// and says so; the item keeps its old secret under `-U`.
    @Test(arguments: ["", "\n", "\r\n"], [false, true])
    func anEmptyStandardInputIsAnErrorAndStoresNothing(input: String, trailingW: Bool) throws {
        let s = try scratch()
        let tail = trailingW ? ["-w"] : []
        let r = s.run(["add-generic-password", "-a", "u", "-s", "svc"] + tail, stdin: input)
        #expect(r.status == 1)
        #expect(r.err == "security: standard input is empty: no secret to store (pipe the secret in, or pass -w '' to store an empty one)\n")
        #expect(r.out == "")
        #expect(s.run(["find-generic-password", "-s", "svc"]).status == 44)
        #expect(s.run(["add-generic-password", "-a", "u", "-s", "svc"], stdin: "old").status == 0)
        #expect(s.run(["add-generic-password", "-U", "-a", "u", "-s", "svc"] + tail, stdin: input).status == 1)
        #expect(s.run(["find-generic-password", "-s", "svc", "-w"]).out == "old\n")
    }

    @Test func anExplicitEmptyDashWStoresAnEmptySecret() throws {
        let s = try scratch()
        let r = s.run(["add-generic-password", "-a", "u", "-s", "svc", "-w", ""], stdin: "")
        #expect(r.status == 0 && r.err.isEmpty, "\(r.err)")
        #expect(s.run(["find-generic-password", "-s", "svc", "-w"]).out == "\n")
        #expect(s.run(["find-generic-password", "-s", "svc", "-g"]).err == "password: \"\"\n")
    }
}
