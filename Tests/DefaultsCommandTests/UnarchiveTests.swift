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
}
