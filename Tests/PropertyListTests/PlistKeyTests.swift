import PropertyList
import Testing

/// Keys (and strings) that are canonically equivalent but made of other
/// scalars are different: Core Foundation, plistlib and libplist keep a
/// dictionary holding "é" (U+00E9) and "e" + U+0301 as two entries.
@Suite struct PlistKeyTests {
    static let composed = "\u{E9}"
    static let decomposed = "e\u{301}"
    static let both = PlistValue.dictionary([PlistKey(composed): .integer(1), PlistKey(decomposed): .integer(2)])

    @Test func equivalentKeysAreDifferentKeys() {
        #expect(Self.composed == Self.decomposed, "the premise: Swift's String calls them equal")
        #expect(PlistKey(Self.composed) != PlistKey(Self.decomposed))
        #expect(Set([PlistKey(Self.composed), PlistKey(Self.decomposed)]).count == 2)
        #expect(Self.both.dictionaryValue?.count == 2)
        #expect(PlistKey(Self.decomposed) < PlistKey(Self.composed), "code point order: U+0065 before U+00E9")
    }

    @Test func equivalentStringsAreDifferentValues() {
        #expect(PlistValue.string(Self.composed) != .string(Self.decomposed))
        #expect(Set([PlistValue.string(Self.composed), .string(Self.decomposed)]).count == 2)
        #expect(PlistValue.string(Self.composed) == .string("\u{E9}"))
    }

    @Test func aStringSubscriptNamesTheKeyByItsScalars() {
        var d = Self.both.dictionaryValue!
        #expect(d[Self.composed] == .integer(1))
        #expect(d[Self.decomposed] == .integer(2))
        d[Self.decomposed] = nil
        #expect(d.count == 1 && d[Self.composed] == .integer(1))
    }

    @Test(arguments: [PlistFormat.binary, .xml, .json])
    func everyFormatKeepsBothKeys(_ format: PlistFormat) throws {
        let bytes = try PlistCodec.encode(Self.both, format: format)
        let back = try PlistCodec.decode(bytes, format: format)
        #expect(back.dictionaryValue?.count == 2)
        #expect(back == Self.both)
    }

    @Test func anOldStyleLiteralKeepsBothKeys() throws {
        let back = try OldStyleText.parse("{ \"\(Self.composed)\" = one; \"\(Self.decomposed)\" = two; }")
        #expect(back == .dictionary([PlistKey(Self.composed): .string("one"), PlistKey(Self.decomposed): .string("two")]))
        let printed = OldStylePrinter.describeTopLevel(Self.both)
        #expect(printed.contains("\"\\\\U00e9\" = 1;") && printed.contains("\"e\\\\U0301\" = 2;"), "\(printed)")
    }

    @Test func aDictionaryValueNestedInAnArrayKeepsBothKeys() throws {
        let value = PlistValue.array([Self.both, .string(Self.composed), .string(Self.decomposed)])
        for format in [PlistFormat.binary, .xml] {
            let back = try PlistCodec.decode(try PlistCodec.encode(value, format: format), format: format)
            #expect(back == value)
        }
    }
}
