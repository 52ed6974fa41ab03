import Foundation
import Testing

/// Files as a Mac has them, made by Python's plistlib: `defaults` reads
/// them, prints them as macOS does and keeps what it does not change.
@Suite("files as Core Foundation writes them")
struct CoreFoundationFileTests {
    static let d = "com.example.cf"

    @Test func aDomainWithKeyedArchiverUIDsReadsPrintsAndKeepsThem() throws {
        let root = try TempRoot()
        try root.writePlist("{'archive': {'$top': {'root': plistlib.UID(1)}, '$objects': ['$null', {'$class': plistlib.UID(2)}]}}",
                            to: root.domainFile(Self.d), format: "binary")
        let read = try root.succeed(["read", Self.d, "archive"])
        #expect(read.stdout.contains("\"$class\" = \"<CFKeyedArchiverUID 0x0 [0x0]>{value = 2}\";"))
        #expect(read.stdout.contains("root = \"<CFKeyedArchiverUID 0x0 [0x0]>{value = 1}\";"))
        let json = try root.succeed(["--format", "json", "read", Self.d, "archive"])
        #expect(json.stdout.contains("\"root\": {\"$uid\": 1}"))
        let xml = try root.succeed(["export", Self.d, "-"])
        #expect(xml.stdout.contains("<key>CF$UID</key>"))
        try root.succeed(["write", Self.d, "other", "-int", "5"])
        try root.expectPlist(root.domainFile(Self.d),
                             equals: "{'other': 5, 'archive': {'$top': {'root': plistlib.UID(1)}, '$objects': ['$null', {'$class': plistlib.UID(2)}]}}")
    }

    @Test(arguments: ["utf-16", "utf-16-be", "iso-8859-1"])
    func importReadsXMLInTheEncodingItDeclares(_ encoding: String) throws {
        let root = try TempRoot()
        let fixture = root.workFile("in.plist")
        let made = try root.python("""
            encoding = sys.argv[2]
            xml = plistlib.dumps({'name': 'café', 'n': 1}).decode('utf-8')
            name = 'UTF-16' if encoding.startswith('utf-16') else encoding.upper()
            data = xml.replace('encoding="UTF-8"', 'encoding="%s"' % name).encode(encoding)
            if encoding == 'utf-16-be': data = b'\\xfe\\xff' + data
            open(sys.argv[1], 'wb').write(data)
            print('OK')
            """, [fixture.path, encoding])
        #expect(made.stdout == "OK\n", "\(made)")
        try root.succeed(["import", Self.d, fixture.path])
        try root.expectPlist(root.domainFile(Self.d), equals: "{'name': 'café', 'n': 1}")
    }

    @Test func importRefusesAnUnknownEncodingAndLeavesTheDomain() throws {
        let root = try TempRoot()
        try root.succeed(["write", Self.d, "kept", "-int", "1"])
        let before = try Data(contentsOf: root.domainFile(Self.d))
        let fixture = root.workFile("in.plist")
        try root.write("<?xml version=\"1.0\" encoding=\"foobar\"?><plist version=\"1.0\"><dict/></plist>", to: fixture)
        let result = try root.run(["import", Self.d, fixture.path])
        #expect(result.status == 1)
        #expect(result.stderr.contains("unsupported encoding \"foobar\""))
        #expect(try Data(contentsOf: root.domainFile(Self.d)) == before)
    }

    @Test func exportWritesWholeSecondsThatPlistlibReadsBack() throws {
        let root = try TempRoot()
        try root.succeed(["write", Self.d, "when", "-date", "2024-02-29 23:59:59 +0000"])
        try root.succeed(["write", Self.d, "size", "-float", "1800"])
        let xml = try root.succeed(["export", Self.d, "-"])
        #expect(xml.stdout.contains("<date>2024-02-29T23:59:59Z</date>"))
        #expect(xml.stdout.contains("<real>1800</real>"))
        let file = root.workFile("out.xml")
        try xml.stdoutData.write(to: file)
        try root.expectPlist(file, equals: "{'when': datetime.datetime(2024, 2, 29, 23, 59, 59), 'size': 1800.0}")
    }

    @Test func distantPastPrintsAsMacOSPrintsIt() throws {
        let root = try TempRoot()
        try root.succeed(["write", Self.d, "d", "-date", "0001-01-01 00:00:00 +0000"])
        #expect(try root.succeed(["read", Self.d, "d"]).stdout == "0001-01-01 00:00:00 +0000\n")
        #expect(try root.succeed(["export", Self.d, "-"]).stdout.contains("<date>0001-01-01T00:00:00Z</date>"))
        #expect(try root.succeed(["--format", "json", "read", Self.d, "d"]).stdout == "{\"$date\": \"0001-01-01T00:00:00Z\"}\n")
    }
}
