import PropertyList
import Testing

/// Every writable format reads back what it wrote, bit for bit.
@Suite struct RoundTripTests {
    static let formats: [PlistFormat] = [.binary, .xml, .json]

    static let scalars: [Sample] = [
        Sample("empty string", .string("")),
        Sample("ASCII string", .string("hello, world")),
        Sample("long ASCII string", .string(String(repeating: "abcdefghij", count: 100))),
        Sample("Unicode string", .string("Zürich café 東京")),
        Sample("emoji (surrogate pairs in UTF-16)", .string("🙂👍🏽 flags 🇫🇷")),
        Sample("control characters", .string("tab\t nl\n cr\r crlf\r\n nul\u{0} bell\u{7} esc\u{1B} del\u{7F}")),
        Sample("markup characters", .string("<a href=\"x\">&amp;</a> ]]> '")),
        Sample("non-characters", .string("\u{FFFE}\u{FFFF}")),
        Sample("integer 0", .integer(0)),
        Sample("integer -1", .integer(-1)),
        Sample("integer 255", .integer(255)),
        Sample("integer 256", .integer(256)),
        Sample("integer 65536", .integer(65536)),
        Sample("integer Int64.min", .integer(Int128(Int64.min))),
        Sample("integer Int64.max", .integer(Int128(Int64.max))),
        Sample("integer Int64.max + 1", .integer(Int128(Int64.max) + 1)),
        Sample("integer UInt64.max", .integer(Int128(UInt64.max))),
        Sample("real 0.0", .real(0.0)),
        Sample("real -0.0", .real(-0.0)),
        Sample("real 0.1", .real(0.1)),
        Sample("real 1.0", .real(1.0)),
        Sample("real 1e300", .real(1e300)),
        Sample("real 1e-7", .real(1e-7)),
        Sample("real smallest subnormal", .real(Double.leastNonzeroMagnitude)),
        Sample("real nan", .real(.nan)),
        Sample("real inf", .real(.infinity)),
        Sample("real -inf", .real(-.infinity)),
        Sample("bool true", .bool(true)),
        Sample("bool false", .bool(false)),
        Sample("date reference", .date(PlistDate(secondsSinceReferenceDate: 0))),
        Sample("date fractional", .date(PlistDate(secondsSinceReferenceDate: 123_456.789))),
        Sample("date tiny fraction", .date(PlistDate(secondsSinceReferenceDate: 1e-9))),
        Sample("date negative fraction", .date(PlistDate(secondsSinceReferenceDate: -0.25))),
        Sample("date year 1", .date(CivilTime(year: 1, month: 1, day: 1).date)),
        Sample("date year 9999", .date(CivilTime(year: 9999, month: 12, day: 31, hour: 23, minute: 59, second: 59).date)),
        Sample("date far past", .date(PlistDate(secondsSinceReferenceDate: -1e12))),
        Sample("date far future", .date(PlistDate(secondsSinceReferenceDate: 1e13 + 0.5))),
        Sample("uid 0", .uid(0)),
        Sample("uid 255", .uid(255)),
        Sample("uid 256", .uid(256)),
        Sample("uid UInt32.max", .uid(UInt64(UInt32.max))),
        Sample("uid UInt64.max", .uid(UInt64.max)),
        Sample("date before the Gregorian calendar", .date(CivilTime(year: 1582, month: 10, day: 4, hour: 23, minute: 59, second: 59).date)),
        Sample("date in year 0 (1 BC)", .date(CivilTime(year: 0, month: 2, day: 29).date)),
        Sample("date in year -4000", .date(CivilTime(year: -4000, month: 12, day: 31).date)),
        Sample("data empty", .data([])),
        Sample("data 1 byte", .data([0xFF])),
        Sample("data 1000 bytes", .data((0..<1000).map { UInt8(truncatingIfNeeded: $0 &* 7) })),
    ]

    static let containers: [Sample] = [
        Sample("empty array", .array([])),
        Sample("empty dictionary", .dictionary([:])),
        Sample("nested containers", .dictionary([
            "list": .array([.integer(1), .array([]), .dictionary([:]), .array([.string("x"), .bool(false)])]),
            "inner": .dictionary(["a": .dictionary(["b": .data([1, 2, 3])])]),
            "": .string("empty key"),
            "é": .real(2.5),
        ])),
        Sample("dictionary with one $ key", .dictionary(["$date": .string("not a date")])),
        Sample("nested $dict", .dictionary(["$dict": .dictionary(["$real": .integer(1)])])),
        Sample("shared strings", .array(Array(repeating: .string("same"), count: 20) + Array(repeating: .dictionary(["k": .string("same")]), count: 3))),
        Sample("array of 300 items (extended count)", .array((0..<300).map { .integer(Int128($0)) })),
        Sample("depth 1,000", nestedArrays(depth: 1000)),
        Sample("depth maximumDepth", nestedArrays(depth: PlistValue.maximumDepth)),
    ]

    @Test(arguments: formats, scalars + containers)
    func valueSurvivesRoundTrip(format: PlistFormat, sample: Sample) throws {
        let bytes = try PlistCodec.encode(sample.value, format: format)
        let decoded = try PlistCodec.decode(bytes, format: format)
        // XML dates are whole seconds, as Apple writes them (rounded down).
        let expected = format == .xml ? wholeSecondDates(sample.value) : sample.value
        #expect(identical(decoded, expected), "\(format): \(decoded) != \(expected)")
    }

    @Test(arguments: formats)
    func negativeZeroKeepsItsSign(format: PlistFormat) throws {
        let decoded = try PlistCodec.decode(try PlistCodec.encode(.real(-0.0), format: format), format: format)
        guard case .real(let d) = decoded else {
            Issue.record("decoded \(decoded)")
            return
        }
        #expect(d == 0 && d.sign == .minus)
    }

    @Test(arguments: formats)
    func encodingRejectsDepthBeyondMaximum(format: PlistFormat) {
        let deep = nestedArrays(depth: PlistValue.maximumDepth + 1)
        #expect(throws: PlistError.tooDeep(limit: PlistValue.maximumDepth)) {
            try PlistCodec.encode(deep, format: format)
        }
    }

    @Test(arguments: [PlistFormat.xml, .json])
    func decodingRejectsDepthBeyondMaximum(format: PlistFormat) {
        let n = PlistValue.maximumDepth + 1
        let text: String
        switch format {
        case .xml: text = String(repeating: "<array>", count: n) + String(repeating: "</array>", count: n)
        default: text = String(repeating: "[", count: n) + String(repeating: "]", count: n)
        }
        #expect(throws: PlistError.tooDeep(limit: PlistValue.maximumDepth)) {
            try PlistCodec.decode(Array(text.utf8), format: format)
        }
    }

    @Test func binaryDecodingRejectsDepthBeyondMaximum() {
        // Object i is an array holding object i + 1; the last one is empty.
        let n = PlistValue.maximumDepth + 1
        var objects: [[UInt8]] = (0..<(n - 1)).map { [0xA1] + bigEndian(UInt64($0 + 1), size: 2) }
        objects.append([0xA0])
        #expect(throws: PlistError.tooDeep(limit: PlistValue.maximumDepth)) {
            try PlistCodec.decode(assembleBinary(objects, refSize: 2))
        }
    }

    @Test func integersOutsideThePlistRangeAreUnrepresentable() {
        for format in Self.formats {
            #expect(throws: PlistError.self) { try PlistCodec.encode(.integer(Int128(UInt64.max) + 1), format: format) }
            #expect(throws: PlistError.self) { try PlistCodec.encode(.integer(Int128(Int64.min) - 1), format: format) }
        }
    }

    @Test func openStepIsNotWrittenByTheCodec() {
        #expect(throws: PlistError.self) { try PlistCodec.encode(.string("x"), format: .openStep) }
    }

    @Test(arguments: [
        ("bplist00", PlistFormat.binary),
        ("<?xml version=\"1.0\"?><plist/>", .xml),
        ("\u{FEFF}  \n<!DOCTYPE plist><plist/>", .xml),
        ("<plist version=\"1.0\"></plist>", .xml),
        ("{ a = b; }", .openStep),
        ("[1, 2]", .openStep),
        ("<0fbd>", .openStep),
    ])
    func detectFormatSniffsTheOpening(text: String, expected: PlistFormat) {
        #expect(PlistCodec.detectFormat(Array(text.utf8)) == expected)
    }

    @Test func decodeSniffsBinaryAndXML() throws {
        let value = PlistValue.dictionary(["k": .array([.integer(1), .real(2.5)])])
        for format in [PlistFormat.binary, .xml] {
            #expect(try PlistCodec.decode(PlistCodec.encode(value, format: format)) == value)
        }
    }
}
