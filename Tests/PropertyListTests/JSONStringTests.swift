import PropertyList
import Testing

/// The one JSON string escaper: what JSON requires, and what each option adds.
@Suite struct JSONStringTests {
    static func literal(_ text: String, _ escaping: JSONString.Escapes = []) -> String {
        var out: [UInt8] = []
        JSONString.append(text, escaping: escaping, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    @Test(arguments: [
        ("plain é 😀", [], #""plain é 😀""#),
        ("q\"b\\s/", [], #""q\"b\\s/""#),
        ("\n\r\t\u{8}\u{C}\u{0}\u{1F}\u{7F}", [], #""\n\r\t\b\f\u0000\u001f\#u{7F}""#),
        ("a/b", .solidus, #""a\/b""#),
        ("</script>&", [], #""</script>&""#),
        ("</script>&\u{2028}\u{2029}\u{2027}\"", .html, #""\u003c/script\u003e\u0026\u2028\u2029\#u{2027}\"""#),
        ("x\u{2028}", .html, #""x\u2028""#),
        ("\u{2028}y", [], "\"\u{2028}y\""),
        ("", [.html, .solidus], #""""#),
    ] as [(String, JSONString.Escapes, String)])
    func escapesWhatJSONAndTheOptionsAsk(text: String, escaping: JSONString.Escapes, expected: String) {
        #expect(Self.literal(text, escaping) == expected)
    }

    @Test func typedJSONAndSmallDocumentsUseIt() {
        #expect(PlistCodec.jsonStringLiteral("a\"/\u{1}") == Self.literal("a\"/\u{1}"))
    }
}
