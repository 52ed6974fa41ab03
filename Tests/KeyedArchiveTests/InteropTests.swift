import Foundation
import KeyedArchive
import PropertyList
import Synchronization
import TestSupport
import Testing

/// The peer's `Node` (bench/keyed_archive_peer.swift), in AppHome's coders.
final class Node: KeyedCoding {
    static let archivedClassName = "Node"
    var name: String
    var weight: Int
    var shared: Node?
    var children: [Node] = []
    var tags: [ArchiveEntry] = []

    init(name: String, weight: Int) {
        self.name = name
        self.weight = weight
    }

    func encode(with coder: KeyedArchiver) {
        coder.encode(name, forKey: "name")
        coder.encode(weight, forKey: "weight")
        coder.encode(shared, forKey: "shared")
        if !children.isEmpty { coder.encode(children, forKey: "children") }
        if !tags.isEmpty { coder.encode(ArchiveValue.dictionary(tags), forKey: "tags") }
    }

    init(coder: KeyedUnarchiver) throws {
        name = try coder.decodeString(forKey: "name") ?? ""
        weight = try coder.decodeInteger(forKey: "weight")
        shared = try coder.decodeObject(of: Node.self, forKey: "shared")
        children = try coder.decodeArray(of: Node.self, forKey: "children")
    }
}

/// The peer program, built once per run of the suite and cached under .build.
enum Peer {
    private static let built = Mutex<Result<String, PeerError>?>(nil)

    struct PeerError: Error, CustomStringConvertible { var description: String }

    static func path() throws -> String {
        try built.withLock { cached in
            if let cached { return try cached.get() }
            let result = Result<String, PeerError> { () throws(PeerError) -> String in try build() }
            cached = result
            return try result.get()
        }
    }

    private static func build() throws(PeerError) -> String {
        let source = repositoryDirectory + "/bench/keyed_archive_peer.swift"
        let dir = repositoryDirectory + "/.build/keyed-archive-peer"
        let binary = dir + "/keyed_archive_peer", stamp = dir + "/source.swift"
        guard let text = FileManager.default.contents(atPath: source) else { throw PeerError(description: "\(source) is missing") }
        if FileManager.default.isExecutableFile(atPath: binary), FileManager.default.contents(atPath: stamp) == text { return binary }
        try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        guard let r = try? ByteArgumentProcess.run("/opt/swift/usr/bin/swiftc", [Array("-O".utf8), Array(source.utf8), Array("-o".utf8), Array(binary.utf8)],
                                                   environment: ["PATH": "/opt/swift/usr/bin:/usr/bin:/bin"], timeout: 600), r.status == 0 else {
            throw PeerError(description: "swiftc could not build the peer")
        }
        _ = FileManager.default.createFile(atPath: stamp, contents: text)
        return binary
    }

    static func run(_ args: String...) throws -> ByteArgumentProcess.Result {
        try ByteArgumentProcess.run(try path(), args.map { Array($0.utf8) }, environment: ["PATH": "/usr/bin:/bin"], timeout: 120)
    }
}

/// The peer's canonical text of a graph, made from AppHome's decoded graph.
struct GraphText {
    var seen: [ObjectIdentifier: Int] = [:]

    mutating func text(_ value: ArchiveValue?) -> String {
        guard let value else { return "nil" }
        switch value {
        case .object(let o) where o.className.hasSuffix("ScaryBugData"):
            var rating: Float = 0
            if case .real(let r)? = o.fields["Rating"] { rating = Float(r) }
            return "ScaryBugData(\"\(o.fields["Title"]?.stringValue ?? "")\",\(rating))"
        case .object(let o):
            if let n = seen[ObjectIdentifier(o)] { return "#\(n)" }
            seen[ObjectIdentifier(o)] = seen.count + 1
            var out = "\(o.className.split(separator: ".").last!)#\(seen[ObjectIdentifier(o)]!)(\"\(o.fields["name"]?.stringValue ?? "")\","
            if case .integer(let w)? = o.fields["weight"] { out += "\(w)" }
            for key in ["shared", "parent", "children", "tags"] {
                if let v = o.fields[PlistKey(key)] { out += ",\(key)=" + text(v) }
            }
            return out + ")"
        case .string(let s, _): return "\"\(s)\""
        case .bool(let b): return b ? "true" : "false"
        case .integer(let n): return "i:\(n)"
        case .real(let r): return "r:\(r)"
        case .date(let d): return "date:\(d.secondsSinceReferenceDate)"
        case .data(let d, _): return "data:" + d.map { String(format: "%02x", $0) }.joined()
        case .null: return "null"
        case .array(let items, _): return "[" + items.map { text($0) }.joined(separator: ",") + "]"
        case .dictionary(let entries, _):
            let sorted = entries.sorted { ($0.key.stringValue ?? "") < ($1.key.stringValue ?? "") }
            return "{" + sorted.map { "\"\($0.key.stringValue ?? "")\":" + text($0.value) }.joined(separator: ",") + "}"
        default: return "?\(value.className)"
        }
    }
}

/// Archives AppHome writes read back equal by swift-corelibs-foundation's NSKeyedUnarchiver and by
/// CPython's plistlib; archives NSKeyedArchiver writes on Linux decoded by AppHome.
@Suite(.serialized) struct InteropTests {
    static var available: Bool { FileManager.default.isExecutableFile(atPath: "/opt/swift/usr/bin/swiftc") }

    /// The graph the peer's `write` makes, built with AppHome's coders.
    static func graph() -> Node {
        let shared = Node(name: "shared", weight: 7)
        let root = Node(name: "root", weight: 1)
        let a = Node(name: "a", weight: 2), b = Node(name: "b", weight: 3)
        a.shared = shared
        b.shared = shared
        root.children = [a, b]
        let bug = ArchiveObject(classChain: ["ScaryBugData", "NSObject"], fields: ["Title": .string("Wolf Spider"), "Rating": .real(5)], inlineKeys: ["Rating"])
        root.tags = [ArchiveEntry("bug", .object(bug)), ArchiveEntry("when", .date(PlistDate(secondsSinceReferenceDate: 12.5))),
                     ArchiveEntry("bytes", .data([1, 2, 3])), ArchiveEntry("yes", .bool(true)), ArchiveEntry("n", .integer(42)),
                     ArchiveEntry("pi", .real(3.25)), ArchiveEntry("list", .array([.string("x"), .string("y")])),
                     ArchiveEntry("nothing", .null), ArchiveEntry("$dollar", .string("kept"))]
        return root
    }

    static let expected = #"Node#1("root",1,children=[Node#2("a",2,shared=Node#3("shared",7)),Node#4("b",3,shared=#3)],tags={"$dollar":"kept","bug":ScaryBugData("Wolf Spider",5.0),"bytes":data:010203,"list":["x","y"],"n":i:42,"nothing":null,"pi":r:3.25,"when":date:12.5,"yes":true})"#

    @Test func foundationReadsWhatAppHomeWrites() throws {
        guard Self.available else { return }
        let dir = ScratchDirectory.make("interop")
        defer { ScratchDirectory.remove(dir) }
        for format in [PlistFormat.binary, .xml] {
            let path = dir + "/ours-\(format).archive"
            try Data(try KeyedArchiver.archivedData(withRootObject: Self.graph(), format: format)).write(to: URL(fileURLWithPath: path))
            let r = try Peer.run("dump", path)
            #expect(r.status == 0, "\(r)")
            #expect(r.standardOutput == Self.expected + "\n", "\(format)")
        }
    }

    @Test func appHomeReadsWhatFoundationWrites() throws {
        guard Self.available else { return }
        let dir = ScratchDirectory.make("interop")
        defer { ScratchDirectory.remove(dir) }
        let path = dir + "/theirs.archive"
        let r = try Peer.run("write", path)
        #expect(r.status == 0 && r.standardOutput == Self.expected + "\n", "\(r)")
        let archive = try KeyedArchive.decode(Array(try Data(contentsOf: URL(fileURLWithPath: path))))
        var text = GraphText()
        #expect(text.text(archive.root) == Self.expected)
        // And through the coders: the shared node comes back as one instance.
        // swift-corelibs-foundation names a Swift class with its module, as Apple's Foundation does.
        #expect(archive.root?.objectValue?.className == "keyed_archive_peer.Node")
        let unarchiver = KeyedUnarchiver(archive: archive, classes: [])
        unarchiver.setClass(Node.self, forClassName: "keyed_archive_peer.Node")
        let root = try #require(try unarchiver.decodeObject(of: Node.self, forKey: "root"))
        #expect(root.children.count == 2 && root.children[0].shared === root.children[1].shared)
    }

    @Test func pythonsPlistlibReadsTheUIDs() throws {
        let dir = ScratchDirectory.make("interop")
        defer { ScratchDirectory.remove(dir) }
        let path = dir + "/bug.archive"
        let parent = ArchiveObject(className: "Node"), child = ArchiveObject(className: "Node")
        parent.fields = ["name": .string("parent"), "child": .object(child)]
        child.fields = ["name": .string("child"), "parent": .object(parent)]
        try Data(try KeyedArchive(root: .object(parent)).encode()).write(to: URL(fileURLWithPath: path))
        let script = """
            import plistlib, sys
            a = plistlib.load(open(sys.argv[1], 'rb'))
            o = a['$objects']
            root = o[a['$top']['root'].data]
            child = o[root['child'].data]
            assert isinstance(a['$top']['root'], plistlib.UID)
            assert o[child['parent'].data] is root
            print(a['$archiver'], a['$version'], o[root['$class'].data]['$classname'], o[root['name'].data], o[child['name'].data])
            """
        let r = try ByteArgumentProcess.run("/usr/bin/python3", [Array("-c".utf8), Array(script.utf8), Array(path.utf8)],
                                            environment: ["PATH": "/usr/bin:/bin"])
        #expect(r.status == 0 && r.standardOutput == "NSKeyedArchiver 100000 Node parent child\n", "\(r)")
    }
}
