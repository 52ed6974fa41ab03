import CommandSupport
import Foundation
import KeyedArchive
import PlutilCommand
import PropertyList
import TestSupport
import Testing

/// `plutil` against macOS's documented behaviour, and against the Swift toolchain's
/// Linux `plutil` (swift-corelibs-foundation) where the two agree.
@Suite struct PlutilTests {
    static let sample = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        <plist version="1.0">
        <dict>
        \t<key>name</key><string>a/b "q" é</string>
        \t<key>n</key><integer>42</integer>
        \t<key>r</key><real>1.5</real>
        \t<key>t</key><true/>
        \t<key>arr</key><array><integer>1</integer><string>x</string><dict><key>k</key><false/></dict></array>
        \t<key>Item10</key><string>z</string>
        \t<key>item2</key><string>y</string>
        \t<key>d.e</key><string>dot</string>
        </dict>
        </plist>
        """

    /// A scratch folder holding `sample.plist`.
    static func scratch() throws -> String {
        let dir = ScratchDirectory.make("plutil")
        try Data(sample.utf8).write(to: URL(fileURLWithPath: dir + "/sample.plist"))
        return dir
    }

    static func run(_ args: [String], input: [UInt8] = [], in dir: String) -> (status: Int32, out: String, err: String) {
        let console = CapturingConsole(input: input)
        let status = PlutilCommand.run(args.map { $0.replacingOccurrences(of: "@", with: dir + "/") }, console: console)
        return (status, String(decoding: console.standardOutputBytes, as: UTF8.self), console.standardError)
    }

    static let toolchainPlutil = "/opt/swift/usr/bin/plutil"

    /// Invocations whose output the toolchain's plutil gives the same way (`@` is the scratch folder).
    static let agreeing: [[String]] = [
        ["-lint", "@sample.plist"],
        // (Compact JSON is left out: the toolchain's key order is its hash order.)
        ["-convert", "json", "-r", "-o", "-", "@sample.plist"],
        ["-convert", "swift", "-o", "-", "@sample.plist"],
        ["-convert", "objc", "-o", "-", "@sample.plist"],
        ["-convert", "xml1", "-o", "-", "@sample.plist"],
        ["-extract", "arr", "raw", "@sample.plist"],
        ["-extract", "r", "raw", "@sample.plist"],
        ["-extract", "name", "raw", "-n", "@sample.plist"],
        ["-extract", "d\\.e", "raw", "@sample.plist"],
        ["-extract", "arr.2", "json", "-o", "-", "@sample.plist"],
        ["-extract", "arr.2", "xml1", "-o", "-", "@sample.plist"],
        ["-extract", "nope", "raw", "@sample.plist"],
        ["-extract", "n", "raw", "-expect", "string", "@sample.plist"],
        ["-extract", "n", "raw", "-expect", "bogus", "@sample.plist"],
        ["-type", "arr.2.k", "@sample.plist"],
        ["-type", "arr", "-expect", "array", "@sample.plist"],
        ["-type", "arr.2", "-expect", "array", "@sample.plist"],
        ["-p", "@sample.plist"],
        ["-create", "xml1", "-"],
        ["-insert", "arr.1", "-string", "ins", "-o", "-", "@sample.plist"],
        ["-insert", "n", "-integer", "1", "-o", "-", "@sample.plist"],
        ["-insert", "arr", "-bool", "YES", "-append", "-o", "-", "@sample.plist"],
        ["-insert", "new", "-json", "{\"a\":[1,2]}", "-o", "-", "@sample.plist"],
        ["-insert", "new.x", "-string", "s", "-o", "-", "@sample.plist"],
        ["-insert", "arr.9", "-string", "s", "-o", "-", "@sample.plist"],
        ["-replace", "n", "-float", "2.5", "-o", "-", "@sample.plist"],
        ["-remove", "arr.0", "-o", "-", "@sample.plist"],
        ["-remove", "missing", "-o", "-", "@sample.plist"],
        ["-lint", "@missing.plist", "@sample.plist"],
        [],
        ["-convert"],
        ["-convert", "foo", "@sample.plist"],
        ["-p", "-o", "x", "@sample.plist"],
        ["-lint", "-o", "x", "@sample.plist"],
        ["-lint", "-x", "@sample.plist"],
        ["-insert"],
        ["-insert", "k", "-bogus", "v", "@sample.plist"],
        ["-extract"],
        ["-remove"],
        ["-create"],
        ["-convert", "xml1"],
    ]

    @Test(arguments: 0..<agreeing.count)
    func agreesWithTheToolchainPlutil(index: Int) throws {
        guard FileManager.default.isExecutableFile(atPath: Self.toolchainPlutil) else { return }  // no toolchain plutil: nothing to compare
        let args = Self.agreeing[index]
        let dir = try Self.scratch()
        defer { ScratchDirectory.remove(dir) }
        let ours = Self.run(args, in: dir)
        let peer = try ByteArgumentProcess.run(Self.toolchainPlutil, args.map { Array($0.replacingOccurrences(of: "@", with: dir + "/").utf8) },
                                               environment: ["PATH": "/usr/bin:/bin"])
        #expect(ours.status == peer.status, "\(args): ours \(ours), theirs \(peer)")
        #expect(ours.out == peer.standardOutput, "\(args)")
        // The toolchain's messages about a file it cannot open come from Foundation; the others are plutil's own.
        if !args.contains("@missing.plist") {
            #expect(ours.err == peer.standardError, "\(args)")
        }
    }

    @Test func printShowsDataAndRealsAsMacOSDoes() throws {
        let dir = try Self.scratch()
        defer { ScratchDirectory.remove(dir) }
        let value = PlistValue.dictionary(["long": .data(Array(0..<32)), "short": .data([1, 2, 255]), "two": .real(2),
                                           "when": .date(PlistDate(secondsSinceReferenceDate: 0))])
        try Data(try PlistCodec.encode(value, format: .binary)).write(to: URL(fileURLWithPath: dir + "/d.plist"))
        let r = Self.run(["-p", "@d.plist"], in: dir)
        #expect(r.status == 0)
        #expect(r.out == """
            {
              "long" => {length = 32, bytes = 0x00010203 04050607 08090a0b 0c0d0e0f ... 18191a1b 1c1d1e1f }
              "short" => {length = 3, bytes = 0x0102ff}
              "two" => 2
              "when" => 2001-01-01 00:00:00 +0000
            }

            """)
        let json = Self.run(["-convert", "json", "-o", "-", "@d.plist"], in: dir)
        #expect(json.status == 1 && json.err == "\(dir)/d.plist: Invalid object in plist for JSON format\n")
        let raw = Self.run(["-extract", "long", "raw", "@d.plist"], in: dir)
        #expect(raw.out == Base64.encode(Array(0..<32)) + "\n")
        #expect(Self.run(["-extract", "when", "raw", "@d.plist"], in: dir).out == "2001-01-01T00:00:00Z\n")
    }

    @Test func editsKeepTheFormatAndTheModeAndFailuresLeaveTheFileAlone() throws {
        let dir = try Self.scratch()
        defer { ScratchDirectory.remove(dir) }
        let path = dir + "/b.plist"
        try Data(try PlistCodec.encode(.dictionary(["a": .integer(1)]), format: .binary)).write(to: URL(fileURLWithPath: path))
        chmod(path, 0o644)
        #expect(Self.run(["-insert", "b", "-date", "2020-01-02T03:04:05Z", "@b.plist"], in: dir).status == 0)
        #expect(Self.run(["-replace", "a", "-data", "AQID", "@b.plist"], in: dir).status == 0)
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        #expect(PlistCodec.detectFormat(bytes) == .binary)
        #expect(try PlistCodec.decode(bytes) == .dictionary(["a": .data([1, 2, 3]), "b": .date(PlistDate(secondsSince1970: 1_577_934_245))]))
        var st = stat()
        stat(path, &st)
        #expect(st.st_mode & 0o777 == 0o644)
        let failed = Self.run(["-insert", "a", "-string", "x", "@b.plist"], in: dir)
        #expect(failed.status == 1 && failed.err == "\(path): Value already exists at key path a\n")
        #expect(Array(try Data(contentsOf: URL(fileURLWithPath: path))) == bytes)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir).sorted() == ["b.plist", "sample.plist"])
        // Several files: each is done, the status says one failed.
        let many = Self.run(["-lint", "@b.plist", "@nope.plist", "@sample.plist"], in: dir)
        #expect(many.status == 1 && many.out == "\(path): OK\n\(dir)/sample.plist: OK\n")
        #expect(many.err == "\(dir)/nope.plist: file does not exist or is not readable or is not a regular file\n")
        // Standard input, written to standard output.
        let stdin = Self.run(["-convert", "json", "-"], input: Array(Self.sample.utf8), in: dir)
        #expect(stdin.status == 0 && stdin.out.hasPrefix("{\"arr\":[1,\"x\",{\"k\":false}],"))
        // -e: beside the file.
        #expect(Self.run(["-convert", "xml1", "-e", "xml", "@b.plist"], in: dir).status == 0)
        #expect(FileManager.default.fileExists(atPath: dir + "/b.xml"))
    }

    @Test func lintRefusesAnInternalDTDSubsetAndSaysWhy() throws {
        let dir = try Self.scratch()
        defer { ScratchDirectory.remove(dir) }
        let text = "<?xml version=\"1.0\"?>\n<!DOCTYPE plist [ <!ENTITY a \"b\"> ]>\n<plist version=\"1.0\"><string>&a;</string></plist>\n"
        try Data(text.utf8).write(to: URL(fileURLWithPath: dir + "/dtd.plist"))
        let r = Self.run(["-lint", "@dtd.plist"], in: dir)
        #expect(r.status == 1)
        #expect(r.err.contains("<!DOCTYPE> with an internal subset ([ … ]) is not allowed in a property list"), "\(r.err)")
    }

    @Test func unarchiveShowsTheGraphAndArchiveMakesOne() throws {
        let dir = try Self.scratch()
        defer { ScratchDirectory.remove(dir) }
        let folder = Folder(name: "Scary", bugs: [ScaryBugData(title: "Wolf", rating: 5)], favourite: nil)
        try Data(try KeyedArchiver.archivedData(withRootObject: folder)).write(to: URL(fileURLWithPath: dir + "/f.archive"))
        let p = Self.run(["-p", "-unarchive", "@f.archive"], in: dir)
        #expect(p.status == 0)
        #expect(p.out == """
            {
              "$$name" => "Scary"
              "$class" => "ScaryBugs.Folder"
              "bugs" => [
                0 => {
                  "$class" => "ScaryBugData"
                  "Rating" => 5
                  "Title" => "Wolf"
                }
              ]
              "count" => 1
              "open" => true
            }

            """)
        let json = Self.run(["-convert", "json", "-unarchive", "-o", "@f.json", "@f.archive"], in: dir)
        #expect(json.status == 0, "\(json)")
        #expect(Self.run(["-convert", "binary1", "-archive", "-o", "@g.archive", "@f.json"], in: dir).status == 0)
        let again = try #require(try KeyedUnarchiver.unarchivedObject(ofClass: Folder.self, from: Array(Data(contentsOf: URL(fileURLWithPath: dir + "/g.archive"))),
                                                                       classes: [ScaryBugData.self]))
        #expect(again.name == "Scary" && again.bugs.map(\.title) == ["Wolf"] && again.count == 1 && again.open)
        // A preference file holding an archive as data: -extract … -unarchive shows the graph.
        let archived = try KeyedArchive(root: .url(base: nil, relative: "https://example.com/")).encode()
        try Data(try PlistCodec.encode(.dictionary(["link": .data(archived)]), format: .binary)).write(to: URL(fileURLWithPath: dir + "/prefs.plist"))
        // The graph form's JSON may hold a scalar root (Schemas/keyed-archive.md).
        #expect(Self.run(["-extract", "link", "json", "-unarchive", "-o", "-", "@prefs.plist"], in: dir).out == "\"https:\\/\\/example.com\\/\"")
        #expect(Self.run(["-extract", "link", "json", "-o", "-", "@prefs.plist"], in: dir).status == 1)  // data is no JSON
        #expect(Self.run(["-extract", "link", "xml1", "-unarchive", "-o", "-", "@prefs.plist"], in: dir).out.contains("<string>https://example.com/</string>"))
        #expect(Self.run(["-p", "@prefs.plist"], in: dir).out.contains("\"link\" => {length = "))
        // Hostile: an archive whose root is out of range.
        let bad = archivePlist(objects: [.string("$null")])
        try Data(try PlistCodec.encode(bad, format: .binary)).write(to: URL(fileURLWithPath: dir + "/bad.archive"))
        let r = Self.run(["-p", "-unarchive", "@bad.archive"], in: dir)
        #expect(r.status == 1 && r.err == "\(dir)/bad.archive: invalid object reference: UID 1 is out of range ($objects has 1 entries)\n")
        #expect(Self.run(["-p", "-archive", "@bad.archive"], in: dir).err == "-archive is used only with -convert binary1|xml1.\n")
    }

    @Test func extractUnarchiveWalksTheObjectGraph() throws {
        let dir = try Self.scratch()
        defer { ScratchDirectory.remove(dir) }
        let wolf = ScaryBugData(title: "Wolf", rating: 5)
        let folder = Folder(name: "Scary", bugs: [wolf, ScaryBugData(title: "Moth", rating: 1), wolf], favourite: wolf)
        try Data(try KeyedArchiver.archivedData(withRootObject: folder)).write(to: URL(fileURLWithPath: dir + "/f.archive"))
        #expect(Self.run(["-extract", "bugs.1.Title", "raw", "-unarchive", "@f.archive"], in: dir).out == "Moth\n")
        // bugs.2 is a reference to bugs.0's showing: the path follows it.
        #expect(Self.run(["-extract", "bugs.2.Title", "raw", "-unarchive", "@f.archive"], in: dir).out == "Wolf\n")
        #expect(Self.run(["-extract", "favourite.Rating", "raw", "-unarchive", "@f.archive"], in: dir).out == "5.000000\n")
        // Inside a preference file, through the data that holds the archive.
        try Data(try PlistCodec.encode(.dictionary(["doc": .data(try KeyedArchiver.archivedData(withRootObject: folder))]), format: .binary))
            .write(to: URL(fileURLWithPath: dir + "/prefs.plist"))
        #expect(Self.run(["-extract", "doc.bugs.2.Title", "raw", "-unarchive", "@prefs.plist"], in: dir).out == "Wolf\n")
        #expect(Self.run(["-extract", "doc.bugs.7", "raw", "-unarchive", "@prefs.plist"], in: dir).status == 1)
    }

    @Test func convertJSONUnarchiveOfAStringOrURLRoot() throws {
        let dir = try Self.scratch()
        defer { ScratchDirectory.remove(dir) }
        let url = ArchiveValue.url(base: URLBase(base: nil, relative: "https://www.swift.org"), relative: "index.xml")
        try Data(try KeyedArchive(root: url).encode()).write(to: URL(fileURLWithPath: dir + "/u.archive"))
        try Data(try KeyedArchive(root: .string("text")).encode()).write(to: URL(fileURLWithPath: dir + "/s.archive"))
        let u = Self.run(["-convert", "json", "-unarchive", "-o", "-", "@u.archive"], in: dir)
        #expect(u.status == 0 && u.out == "\"https:\\/\\/www.swift.org\\/index.xml\"", "\(u)")
        #expect(Self.run(["-convert", "json", "-unarchive", "-o", "-", "@s.archive"], in: dir).out == "\"text\"")
    }

    @Test func controlCharactersReachATerminalOnlyEscaped() throws {
        let dir = try Self.scratch()
        defer { ScratchDirectory.remove(dir) }
        let hostile = "\u{1B}[2J\u{07}\u{00}\r\u{7F}\u{9B}1m"
        let object = ArchiveObject(className: "Evil" + hostile, fields: [PlistKey("k" + hostile): .string("v" + hostile)])
        try Data(try KeyedArchive(root: .object(object)).encode()).write(to: URL(fileURLWithPath: dir + "/e.archive"))
        try Data(try PlistCodec.encode(.dictionary([PlistKey("k" + hostile): .string("v" + hostile)]), format: .binary))
            .write(to: URL(fileURLWithPath: dir + "/e.plist"))
        let escaped = "\\u001b[2J\\u0007\\u0000\\u000d\\u007f\\u009b1m"
        for args in [["-p", "-unarchive", "@e.archive"], ["-p", "@e.plist"]] {
            let console = CapturingConsole()
            console.outputIsTerminal = true
            #expect(PlutilCommand.run(args.map { $0.replacingOccurrences(of: "@", with: dir + "/") }, console: console) == 0)
            let out = console.standardOutputBytes
            #expect(!out.contains(0x1B) && !out.contains(0x07) && !out.contains(0) && !out.contains(0x0D) && !out.contains(0x7F), "\(console.standardOutput)")
            #expect(console.standardOutput.contains("\"k\(escaped)\" => \"v\(escaped)\""), "\(console.standardOutput)")
            // Into a pipe or a file, -p writes the text as it is.
            #expect(Self.run(args, in: dir).out.contains("\"v" + hostile + "\""))
        }
        let console = CapturingConsole()
        console.outputIsTerminal = true
        _ = PlutilCommand.run(["-p", "-unarchive", dir + "/e.archive"], console: console)
        #expect(console.standardOutput.contains("\"$class\" => \"Evil\(escaped)\""))
        // An error names a hostile $archiver escaped, wherever it goes.
        let bad = archivePlist(objects: [.string("$null")], archiver: .string("NS\u{1B}]0;owned\u{07}"))
        try Data(try PlistCodec.encode(bad, format: .binary)).write(to: URL(fileURLWithPath: dir + "/bad.archive"))
        let r = Self.run(["-p", "-unarchive", "@bad.archive"], in: dir)
        #expect(r.status == 1 && r.err.contains("unsupported archiver \"NS\\x1B]0;owned\\x07\"") && !r.err.contains("\u{1B}"), "\(r.err)")
    }

    @Test func helpGoesToStandardOutputWithStatusZero() throws {
        let r = Self.run(["-help"], in: "/tmp")
        #expect(r.status == 0 && r.out.hasPrefix("plutil: [command_option] [other_options] file...") && r.err.isEmpty)
    }
}
