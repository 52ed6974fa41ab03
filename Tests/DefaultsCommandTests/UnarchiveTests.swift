import KeyedArchive
import PropertyList
import Testing

/// `defaults read` shows an archived value as data, as macOS does; `read --unarchive` as its graph.
@Suite struct DefaultsUnarchiveTests {
    @Test func readShowsArchivesAsDataAndReadUnarchiveAsTheirGraph() throws {
        let h = Harness()
        let bug = ArchiveObject(className: "ScaryBugData", fields: ["Title": .string("Moth"), "Rating": .real(2)])
        let archived = try KeyedArchive(root: .object(bug)).encode()
        h.run("write", "com.t", "bug", "-data", archived.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined())
        let plain = h.run("read", "com.t", "bug")
        #expect(plain.status == 0 && plain.out.hasPrefix("{length = \(archived.count), bytes = 0x62706c69 73743030"), "\(plain.out)")
        let graph = h.run("read", "--unarchive", "com.t", "bug")
        #expect(graph.status == 0)
        #expect(graph.out == "{\n    \"$class\" = ScaryBugData;\n    Rating = 2;\n    Title = Moth;\n}\n", "\(graph.out)")
        let domain = h.run("read", "--unarchive", "com.t")
        #expect(domain.status == 0 && domain.out.contains("Title = Moth;"))
    }

    @Test func anArchiveThatDoublesAtEachLevelIsShownOnceEach() throws {
        // 40 levels of objects that each hold the next one twice: 1 KB, 2^40 values written out in full.
        var objects: [PlistValue] = [.string("$null"), .dictionary(["$classname": .string("Node"), "$classes": .array([.string("Node"), .string("NSObject")])])]
        for k in 0..<40 {
            let next: PlistValue = .uid(k < 39 ? UInt64(k + 3) : 0)
            objects.append(.dictionary(["$class": .uid(1), "a": next, "b": next]))
        }
        let archive = try PlistCodec.encode(.dictionary(["$archiver": .string("NSKeyedArchiver"), "$version": .integer(100000),
                                                         "$top": .dictionary(["root": .uid(2)]), "$objects": .array(objects)]), format: .binary)
        let h = Harness()
        h.run("write", "com.t", "doc", "-data", archive.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined())
        let graph = h.run("read", "--unarchive", "com.t", "doc")
        #expect(graph.status == 0 && graph.out.utf8.count < 100_000, "\(graph.out.utf8.count) bytes: \(graph.out.suffix(300))")
        #expect(graph.out.contains("\"$ref\" = 3;"), "\(graph.out.prefix(400))")
    }
}
