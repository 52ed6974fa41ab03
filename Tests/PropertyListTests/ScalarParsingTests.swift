import Testing
@testable import PropertyList

@Suite struct ScalarParsingTests {
    @Test(arguments: [
        ("0", Int128(0)), ("42", 42), ("-1", -1), ("+7", 7),
        ("9223372036854775807", Int128(Int64.max)), ("-9223372036854775808", Int128(Int64.min)),
        ("18446744073709551615", Int128(UInt64.max)),
    ])
    func parsesWholeIntegers(text: String, expected: Int128) {
        #expect(ScalarParsing.integer(text) == expected)
    }

    @Test(arguments: ["", "12ab", "1.5", " 1", "1 ", "-", "18446744073709551616", "-9223372036854775809", "0x10"])
    func rejectsIntegersThatAreNotWhole(text: String) {
        #expect(ScalarParsing.integer(text) == nil)
    }

    @Test func parsesRealsStrictly() {
        #expect(ScalarParsing.real("0.5") == 0.5)
        #expect(ScalarParsing.real("-2e3") == -2000)
        #expect(ScalarParsing.real("1") == 1)
        #expect(ScalarParsing.real("-0.0")?.sign == .minus)
        #expect(ScalarParsing.real("-inf") == -.infinity)
        for bad in ["", "abc", "1.5x", " 1", "0x1p3", "1e400", "-1e999"] { #expect(ScalarParsing.real(bad) == nil, "\(bad)") }
    }

    @Test(arguments: [("true", true), ("YES", true), ("Yes", true), ("false", false), ("NO", false), ("no", false)])
    func parsesBooleanWords(text: String, expected: Bool) {
        #expect(ScalarParsing.bool(text) == expected)
    }

    @Test func rejectsOtherBooleanWords() {
        for bad in ["1", "0", "y", "maybe", ""] { #expect(ScalarParsing.bool(bad) == nil) }
    }

    @Test func parsesHexData() {
        #expect(ScalarParsing.hexData("DEADbeef") == [0xde, 0xad, 0xbe, 0xef])
        #expect(ScalarParsing.hexData("abc") == nil, "an odd count of digits is refused, as the literal <abc> is")
        #expect(ScalarParsing.hexData("") == [])
        #expect(ScalarParsing.hexData("xyz") == nil)
        #expect(ScalarParsing.hexData("ab cd") == nil)
    }

    @Test func parsesDatesInBothForms() throws {
        let a = try #require(ScalarParsing.date("2025-04-07 12:30:13 +0000"))
        let b = try #require(ScalarParsing.date("2025-04-07T12:30:13Z"))
        let c = try #require(ScalarParsing.date("2025-04-07T14:30:13+02:00"))
        let d = try #require(ScalarParsing.date("2025-04-07 14:30:13 +0200"))
        #expect(a == b && b == c && c == d)
        #expect(a.secondsSince1970 == 1_744_029_013)
        #expect(ScalarParsing.date("2001-01-01T00:00:00.25Z")?.secondsSinceReferenceDate == 0.25)
        #expect(ScalarParsing.date("1969-12-31")?.secondsSince1970 == -86_400)
    }

    @Test func rejectsMalformedDates() {
        for bad in ["", "yesterday", "2025-13-01", "2025-02-30T00:00:00Z", "2025-04-07 12:30:13", "2025-04-07T12:30:13", "2025-04-07T25:00:00Z", "2025-04-07T12:30:13Zjunk"] {
            #expect(ScalarParsing.date(bad) == nil, "\(bad)")
        }
    }

    @Test func civilTimeRoundTripsFarDates() throws {
        for seconds in [-1e12, -62_135_596_800.0, 0, 1e9, 253_402_300_799.0, 1e12] {
            let date = PlistDate(secondsSince1970: seconds)
            let civil = try #require(CivilTime(date))
            #expect(civil.date == date)
        }
        #expect(CivilTime(PlistDate(secondsSince1970: 0))?.descriptionFormat == "1970-01-01 00:00:00 +0000")
    }
}
