import Foundation
import PropertyList
import Testing

/// Our files read by other implementations, and theirs read by us.
///
/// Values are compared through a canonical text both sides print: type
/// letter plus value, reals and dates as the hex of their IEEE 754 bits,
/// strings and data as hex, dictionary keys sorted by code point.
@Suite(.serialized) struct CrossImplementationTests {
    static let canonPython = """
        import datetime, plistlib, struct, sys

        def canon(v):
            if isinstance(v, bool): return "B1" if v else "B0"
            if isinstance(v, int): return "I%d" % v
            if isinstance(v, float): return "R" + struct.pack(">d", v).hex()
            if isinstance(v, str): return "S" + v.encode("utf-8").hex()
            if isinstance(v, bytes): return "X" + v.hex()
            if isinstance(v, datetime.datetime):
                seconds = (v - datetime.datetime(2001, 1, 1)) / datetime.timedelta(seconds=1)
                return "D" + struct.pack(">d", seconds).hex()
            if isinstance(v, list): return "A[" + ",".join(canon(x) for x in v) + "]"
            if isinstance(v, dict): return "K{" + ",".join(canon(k) + ":" + canon(v[k]) for k in sorted(v)) + "}"
            if isinstance(v, plistlib.UID): return "U%d" % v.data
            raise TypeError(type(v))

        """

    static func canon(_ v: PlistValue) -> String {
        func hex(_ bytes: some Sequence<UInt8>) -> String {
            bytes.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
        }
        func bits(_ d: Double) -> String {
            hex((0..<8).map { UInt8(truncatingIfNeeded: d.bitPattern >> UInt64(56 - 8 * $0)) })
        }
        switch v {
        case .bool(let b): return b ? "B1" : "B0"
        case .integer(let i): return "I\(i)"
        case .real(let d): return "R" + bits(d)
        case .string(let s): return "S" + hex(s.utf8)
        case .data(let d): return "X" + hex(d)
        case .date(let d): return "D" + bits(d.secondsSinceReferenceDate)
        case .uid(let n): return "U\(n)"
        case .array(let a): return "A[" + a.map(canon).joined(separator: ",") + "]"
        case .dictionary(let d):
            let keys = d.keys.sorted()
            return "K{" + keys.map { canon(.string($0.string)) + ":" + canon(d[$0]!) }.joined(separator: ",") + "}"
        }
    }

    /// Dates Python can hold exactly: years 1...9999, whole microseconds,
    /// and none before 1582-10-15, where Core Foundation's calendar is
    /// Julian and Python's proleptic Gregorian (tested on their own below).
    static let sample = PlistValue.dictionary([
        "strings": .array([
            .string(""), .string("plain"), .string("é Zürich 東京"), .string("🙂👍🏽"),
            .string("ctl \u{1} \t \r\n"), .string("plain"),
        ]),
        "integers": .array([
            .integer(0), .integer(-1), .integer(255), .integer(256), .integer(Int128(Int64.min)),
            .integer(Int128(Int64.max)), .integer(Int128(Int64.max) + 1), .integer(Int128(UInt64.max)),
        ]),
        "reals": .array([.real(0), .real(-0.0), .real(0.1), .real(1e300), .real(.nan), .real(.infinity), .real(-.infinity)]),
        "bools": .array([.bool(true), .bool(false)]),
        "dates": .array([
            .date(PlistDate(secondsSinceReferenceDate: 0)),
            .date(PlistDate(secondsSinceReferenceDate: 612_345_678.25)),
            .date(PlistDate(secondsSinceReferenceDate: -86_400.5)),
            .date(CivilTime(year: 1582, month: 10, day: 15).date),
            .date(CivilTime(year: 9999, month: 12, day: 31, hour: 23, minute: 59, second: 59).date),
        ]),
        "data": .array([.data([]), .data([0x7F]), .data((0..<1000).map { UInt8(truncatingIfNeeded: $0 * 13) })]),
        "empty": .dictionary(["a": .array([]), "d": .dictionary([:])]),
        "many": .array((0..<300).map { .integer(Int128($0 * 1000)) }),
        "nested": nestedArrays(depth: 50, innermost: .dictionary(["k": .string("v")])),
        "é": .string("non-ASCII key"),
        "Z": .string("uppercase sorts before lowercase"),
    ])

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    static func run(_ executable: String, _ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let output = out.fileHandleForReading.readDataToEndOfFile()
        let errors = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw Failure(description: "\(executable) \(arguments) failed: \(String(decoding: errors, as: UTF8.self))")
        }
        return String(decoding: output, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    static func python(_ script: String, _ arguments: [String]) throws -> String {
        try run("/usr/bin/env", ["python3", "-c", canonPython + script] + arguments)
    }

    static func temporaryDirectory() throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("plist-cross-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }

    @Test func plistlibReadsOurBinary() throws {
        let dir = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("ours.plist")
        try Data(PlistCodec.encode(Self.sample, format: .binary)).write(to: file)
        let theirs = try Self.python("with open(sys.argv[1], 'rb') as f: print(canon(plistlib.load(f)))", [file.path])
        #expect(theirs == Self.canon(Self.sample))
    }

    /// "é" (U+00E9) and "e" + U+0301: two keys for plistlib, so two for us,
    /// both ways, in both formats.
    @Test func canonicallyEquivalentKeysStayTwoKeysBothWays() throws {
        let dir = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        for format in ["FMT_BINARY", "FMT_XML"] {
            let theirs = dir.appendingPathComponent("py-\(format).plist")
            _ = try Self.python("""
                with open(sys.argv[1], 'wb') as f: plistlib.dump({'\\u00e9': 1, 'e\\u0301': 2, 'v': ['\\u00e9', 'e\\u0301']}, f, fmt=plistlib.\(format))
                """, [theirs.path])
            let decoded = try PlistCodec.decode(Array(try Data(contentsOf: theirs)))
            let expected = PlistValue.dictionary(["\u{E9}": .integer(1), "e\u{301}": .integer(2), "v": .array([.string("\u{E9}"), .string("e\u{301}")])])
            #expect(decoded == expected)
            let ours = dir.appendingPathComponent("ours-\(format).plist")
            try Data(PlistCodec.encode(decoded, format: format == "FMT_BINARY" ? .binary : .xml)).write(to: ours)
            let check = try Self.python("""
                with open(sys.argv[1], 'rb') as f: d = plistlib.load(f)
                print('OK' if d == {'\\u00e9': 1, 'e\\u0301': 2, 'v': ['\\u00e9', 'e\\u0301']} and len(d) == 3 else repr(d))
                """, [ours.path])
            #expect(check == "OK")
        }
    }

    @Test func weReadPlistlibBinaryAndXML() throws {
        let dir = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let binary = dir.appendingPathComponent("py.bplist")
        let xml = dir.appendingPathComponent("py.xml")
        // plistlib's XML writer refuses control characters and truncates
        // dates to whole seconds, so the value avoids both. -0.0 is left
        // out because plistlib's binary writer shares one object between
        // equal scalars, and 0.0 == -0.0 in Python.
        let script = """
            v = {
                "s": ["", "plain", "é 東京", "🙂", "<&>"],
                "i": [0, -1, 255, 256, -2**63, 2**63 - 1, 2**63, 2**64 - 1],
                "r": [0.0, 0.1, 1e300, 1e-07, float("nan"), float("inf"), float("-inf")],
                "b": [True, False],
                "d": [datetime.datetime(2001, 1, 1), datetime.datetime(1582, 10, 15), datetime.datetime(9999, 12, 31, 23, 59, 59)],
                "x": [b"", b"\\x00", bytes(range(256)) * 3],
                "e": [[], {}],
                "n": [[[[{"k": "v"}]]]],
                "many": list(range(0, 300000, 1000)),
            }
            with open(sys.argv[1], "wb") as f: plistlib.dump(v, f, fmt=plistlib.FMT_BINARY)
            with open(sys.argv[2], "wb") as f: plistlib.dump(v, f, fmt=plistlib.FMT_XML)
            print(canon(v))
            """
        let expected = try Self.python(script, [binary.path, xml.path])
        for file in [binary, xml] {
            let value = try PlistCodec.decode(Array(try Data(contentsOf: file)))
            #expect(Self.canon(value) == expected, "\(file.lastPathComponent)")
        }
    }

    /// libplist 2.2 (Debian 12) converts our binary file to XML, which we read.
    ///
    /// Documented skips, from what libplist 2.2's XML writer does:
    /// - dates lose their fractional seconds (truncated toward zero);
    /// - `-0.0` is written as `0.0` (the sign of zero is lost);
    /// - control characters are written raw (not valid XML 1.0; our reader
    ///   tolerates them), and CR is subject to XML line-end normalisation.
    /// Huge integers (`UInt64.max`, `Int64.min`) and years 1 and 9999 do
    /// survive in 2.2 (year 1 is written as "1-01-01", which our reader
    /// accepts), so they are not skipped.
    /// The sample is adjusted for exactly those, and each is checked to
    /// still hold, so an upgrade that fixes one shows up here.
    @Test func plistutilReadsOurBinary() throws {
        let plistutil = "/usr/bin/plistutil"
        guard FileManager.default.isExecutableFile(atPath: plistutil) else {
            print("SKIPPED plistutilReadsOurBinary: \(plistutil) is missing (install libplist-utils)")
            return
        }
        let dir = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let input = dir.appendingPathComponent("ours.plist")
        let output = dir.appendingPathComponent("out.xml")
        try Data(PlistCodec.encode(Self.sample, format: .binary)).write(to: input)
        _ = try Self.run(plistutil, ["-i", input.path, "-o", output.path])
        let value = try PlistCodec.decode(Array(try Data(contentsOf: output)))
        #expect(Self.canon(value) == Self.canon(Self.libplistView(of: Self.sample)))

        // The known limitations, pinned so that a fixed libplist is noticed.
        guard case .dictionary(let d) = value else { return }
        #expect(d["dates"]?.arrayValue?[1] == .date(PlistDate(secondsSinceReferenceDate: 612_345_678)))
        #expect(d["reals"]?.arrayValue?[1] == .real(0))
    }

    /// plistlib reads XML in UTF-16 with a byte-order mark and in 8-bit
    /// encodings its declaration names, and so do we; the same bytes give
    /// both of us the same value. plistlib does not recognise UTF-16
    /// without a mark, nor UTF-32, as XML ("Invalid file") where Core
    /// Foundation reads both, so those files are checked against the value
    /// only (the script asserts that plistlib still refuses them).
    @Test func weReadWideAndDeclaredEncodingsAsPlistlibDoes() throws {
        let dir = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let script = """
            import codecs, os
            v = {"name": "café Grüße", "list": ["é", "plain", "ÿ"], "n": 7}
            xml = plistlib.dumps(v, fmt=plistlib.FMT_XML).decode("utf-8")
            def declared(name): return xml.replace('encoding="UTF-8"', 'encoding="%s"' % name)
            files = {
                "utf-16.xml": declared("UTF-16").encode("utf-16"),
                "utf-16be-bom.xml": codecs.BOM_UTF16_BE + declared("UTF-16").encode("utf-16-be"),
                "latin1.xml": declared("ISO-8859-1").encode("latin-1"),
                "latin1-alias.xml": declared("latin1").encode("latin-1"),
                "cp1252.xml": declared("windows-1252").encode("cp1252"),
            }
            unreadable = {
                "utf-16le-nobom.xml": declared("UTF-16").encode("utf-16-le"),
                "utf-16be-nobom.xml": declared("UTF-16").encode("utf-16-be"),
                "utf-32.xml": declared("UTF-32").encode("utf-32"),
            }
            for name, data in files.items():
                assert plistlib.loads(data) == v, name
                with open(os.path.join(sys.argv[1], name), "wb") as f: f.write(data)
            for name, data in unreadable.items():
                try:
                    plistlib.loads(data)
                    raise SystemExit("plistlib now reads " + name)
                except SystemExit:
                    raise
                except Exception:
                    pass
                with open(os.path.join(sys.argv[1], name), "wb") as f: f.write(data)
            print(canon(v))
            """
        let expected = try Self.python(script, [dir.path])
        for name in ["utf-16.xml", "utf-16be-bom.xml", "utf-16le-nobom.xml", "utf-16be-nobom.xml", "latin1.xml", "latin1-alias.xml", "utf-32.xml", "cp1252.xml"] {
            let bytes = Array(try Data(contentsOf: dir.appendingPathComponent(name)))
            #expect(PlistCodec.detectFormat(bytes) == .xml, "\(name)")
            #expect(Self.canon(try PlistCodec.decode(bytes)) == expected, "\(name)")
        }
    }

    /// Before 1582-10-15 Core Foundation's calendar is Julian and Python's
    /// proleptic Gregorian. Binary files carry seconds, so both read the
    /// same instants; the Julian text we print for them is checked against
    /// Python's own Julian conversion (from the Julian day number), and our
    /// XML text, which plistlib parses field by field, must name the same
    /// Julian date.
    @Test func datesBefore1582AgreeInSecondsAndPrintInTheJulianCalendar() throws {
        let dir = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let binary = dir.appendingPathComponent("py.bplist")
        let script = """
            ds = [datetime.datetime(1, 1, 1), datetime.datetime(1000, 3, 1, 12, 30, 5), datetime.datetime(1582, 10, 14, 23, 59, 59),
                  datetime.datetime(1582, 10, 15), datetime.datetime(1500, 3, 20)]
            with open(sys.argv[1], "wb") as f: plistlib.dump(ds, f, fmt=plistlib.FMT_BINARY)
            def julian(d):
                jdn = d.toordinal() + 1721425
                c = jdn + 32082
                e = (4 * c + 3) // 1461
                g = c - 1461 * e // 4
                m = (5 * g + 2) // 153
                day = g - (153 * m + 2) // 5 + 1
                month = m + 3 - 12 * (m // 10)
                year = e - 4800 + m // 10
                return "%04d-%02d-%02d %02d:%02d:%02d +0000" % (year, month, day, d.hour, d.minute, d.second)
            print(canon(ds))
            print("|".join(julian(d) if d < datetime.datetime(1582, 10, 15) else d.strftime("%Y-%m-%d %H:%M:%S +0000") for d in ds))
            """
        let lines = try Self.python(script, [binary.path]).split(separator: "\n").map(String.init)
        let value = try PlistCodec.decode(Array(try Data(contentsOf: binary)))
        #expect(Self.canon(value) == lines[0])
        let dates = value.arrayValue ?? []
        let printed = dates.map { v -> String in
            if case .date(let d) = v { return OldStylePrinter.dateText(d) }
            return "not a date"
        }
        #expect(printed.joined(separator: "|") == lines[1])

        let xml = dir.appendingPathComponent("ours.xml")
        try Data(PlistCodec.encode(value, format: .xml)).write(to: xml)
        let theirs = try Self.python(
            "with open(sys.argv[1], 'rb') as f: print('|'.join('%04d-%02d-%02d %02d:%02d:%02d +0000' % (d.year, d.month, d.day, d.hour, d.minute, d.second) for d in plistlib.load(f)))",
            [xml.path])
        #expect(theirs == lines[1])
    }

    /// Keyed-archiver UIDs cross in binary both ways with plistlib, and
    /// libplist's XML (the `CF$UID` dictionary) reads back as UIDs.
    @Test func uidsCrossWithPlistlibAndLibplist() throws {
        let dir = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let theirs = dir.appendingPathComponent("py.bplist")
        let script = """
            v = {"$top": {"root": plistlib.UID(1)}, "$objects": ["$null", plistlib.UID(0), plistlib.UID(255), plistlib.UID(256),
                 plistlib.UID(2**16), plistlib.UID(2**32 - 1), plistlib.UID(2**32), plistlib.UID(2**64 - 1)]}
            with open(sys.argv[1], "wb") as f: plistlib.dump(v, f, fmt=plistlib.FMT_BINARY)
            print(canon(v))
            """
        let expected = try Self.python(script, [theirs.path])
        let value = try PlistCodec.decode(Array(try Data(contentsOf: theirs)))
        #expect(Self.canon(value) == expected)

        let ours = dir.appendingPathComponent("ours.bplist")
        try Data(PlistCodec.encode(value, format: .binary)).write(to: ours)
        #expect(try Self.python("with open(sys.argv[1], 'rb') as f: print(canon(plistlib.load(f)))", [ours.path]) == expected)

        let plistutil = "/usr/bin/plistutil"
        guard FileManager.default.isExecutableFile(atPath: plistutil) else {
            print("SKIPPED the libplist half of uidsCrossWithPlistlibAndLibplist: \(plistutil) is missing (install libplist-utils)")
            return
        }
        // libplist writes each UID as {CF$UID = n} in XML. libplist 2.2
        // writes an empty <plist> for a file with a UID above UInt32.max
        // (pinned below, so that a fixed libplist is noticed); Core
        // Foundation's UIDs are 32-bit, so the sample stays within them.
        let narrow = PlistValue.array([.uid(0), .uid(255), .uid(256), .uid(65_536), .uid(UInt64(UInt32.max))])
        let narrowFile = dir.appendingPathComponent("narrow.bplist")
        try Data(PlistCodec.encode(narrow, format: .binary)).write(to: narrowFile)
        let xml = dir.appendingPathComponent("libplist.xml")
        _ = try Self.run(plistutil, ["-i", narrowFile.path, "-o", xml.path])
        let text = String(decoding: try Data(contentsOf: xml), as: UTF8.self)
        #expect(text.contains("<key>CF$UID</key>"))
        #expect(try PlistCodec.decode(Array(text.utf8)) == narrow)

        let wide = dir.appendingPathComponent("wide.xml")
        _ = try Self.run(plistutil, ["-i", ours.path, "-o", wide.path])
        #expect(throws: PlistError.self) { try PlistCodec.decode(Array(try Data(contentsOf: wide))) }
    }

    /// `value` as libplist 2.2 reproduces it (see the skips above).
    static func libplistView(of value: PlistValue) -> PlistValue {
        switch value {
        case .string(let s):
            // The line-end normalisation any XML reader does to raw CRs.
            return .string(s.replacingOccurrences(of: "\r\n", with: "\n").replacingOccurrences(of: "\r", with: "\n"))
        case .real(let d) where d == 0:
            return .real(0)
        case .date(let d):
            return .date(PlistDate(secondsSinceReferenceDate: d.secondsSinceReferenceDate.rounded(.towardZero)))
        case .array(let a):
            return .array(a.map(libplistView))
        case .dictionary(let d):
            return .dictionary(d.mapValues(libplistView))
        default:
            return value
        }
    }
}
