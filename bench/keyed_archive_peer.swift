// bench/keyed_archive_peer.swift: swift-corelibs-foundation's NSKeyedArchiver and
// NSKeyedUnarchiver, the peer of AppHome's KeyedArchive in the interop tests
// (Tests/KeyedArchiveTests/InteropTests.swift) and in `make bench` (bench/keyed_archive.sh).
// Built with `swiftc -O`; cached under .build.
//
//   dump FILE               unarchive FILE (classes ScaryBugData and Node) and print its graph
//   write FILE              archive a graph of shared objects and a cycle; print its graph
//   bench-encode N RUNS OUT archive a generated graph of N nodes RUNS times; keep it in OUT
//   bench-decode FILE RUNS  unarchive FILE RUNS times
// Bench modes print "<operation> <best ms> <bytes>".
import Foundation

final class ScaryBugData: NSObject, NSCoding {
    var title: String
    var rating: Float
    init(title: String, rating: Float) { self.title = title; self.rating = rating }
    required init?(coder: NSCoder) {
        title = coder.containsValue(forKey: "Title") ? coder.decodeObject(forKey: "Title") as? String ?? "" : ""
        rating = coder.decodeFloat(forKey: "Rating")
    }
    func encode(with coder: NSCoder) {
        coder.encode(title, forKey: "Title")
        coder.encode(rating, forKey: "Rating")
    }
}

final class Node: NSObject, NSCoding {
    var name: String
    var weight: Int
    var shared: Node?
    var parent: Node?
    var children: [Node]
    var tags: [String: Any]
    init(name: String, weight: Int) { self.name = name; self.weight = weight; children = []; tags = [:] }
    required init?(coder: NSCoder) {
        // swift-corelibs-foundation traps (not fails) on decodeObject of a key that is absent.
        func object(_ key: String) -> Any? { coder.containsValue(forKey: key) ? coder.decodeObject(forKey: key) : nil }
        name = object("name") as? String ?? ""
        weight = coder.decodeInteger(forKey: "weight")
        shared = object("shared") as? Node
        parent = object("parent") as? Node
        children = object("children") as? [Node] ?? []
        tags = object("tags") as? [String: Any] ?? [:]
    }
    func encode(with coder: NSCoder) {
        coder.encode(name, forKey: "name")
        coder.encode(weight, forKey: "weight")
        if let shared { coder.encode(shared, forKey: "shared") }
        if let parent { coder.encode(parent, forKey: "parent") }
        if !children.isEmpty { coder.encode(children as NSArray, forKey: "children") }
        if !tags.isEmpty { coder.encode(tags as NSDictionary, forKey: "tags") }
    }
}

/// A canonical text of a graph; objects are numbered in the order met, a repeat is `#n`.
struct Dumper {
    var seen: [ObjectIdentifier: Int] = [:]

    mutating func dump(_ value: Any?) -> String {
        guard let value else { return "nil" }
        if let bug = value as? ScaryBugData { return "ScaryBugData(\(quote(bug.title)),\(bug.rating))" }
        if let node = value as? Node {
            let id = ObjectIdentifier(node)
            if let n = seen[id] { return "#\(n)" }
            seen[id] = seen.count + 1
            var out = "Node#\(seen[id]!)(\(quote(node.name)),\(node.weight)"
            if let s = node.shared { out += ",shared=" + dump(s) }
            if let p = node.parent { out += ",parent=" + dump(p) }
            if !node.children.isEmpty { out += ",children=" + dump(node.children as NSArray) }
            if !node.tags.isEmpty { out += ",tags=" + dump(node.tags as NSDictionary) }
            return out + ")"
        }
        if let s = value as? NSString, !(value is NSNumber) { return quote(s as String) }
        if let n = value as? NSNumber {
            let type = String(cString: n.objCType)
            if type == "c" || type == "B" { return n.boolValue ? "true" : "false" }
            if type == "d" || type == "f" { return "r:\(n.doubleValue)" }
            return "i:\(n.int64Value)"
        }
        if let d = value as? NSDate { return "date:\(d.timeIntervalSinceReferenceDate)" }
        if let d = value as? NSData { return "data:" + (d as Data).map { String(format: "%02x", $0) }.joined() }
        if value is NSNull { return "null" }
        if let u = value as? NSUUID { return "uuid:" + u.uuidString }
        if let u = value as? NSURL { return "url:" + u.absoluteString }
        if let a = value as? NSArray { return "[" + a.map { dump($0) }.joined(separator: ",") + "]" }
        if let s = value as? NSSet { return "set[" + s.map { dump($0) }.sorted().joined(separator: ",") + "]" }
        if let d = value as? NSDictionary {
            let keys = d.allKeys.map { "\($0)" }.sorted()
            return "{" + keys.map { quote($0) + ":" + dump(d[$0]) }.joined(separator: ",") + "}"
        }
        return "?\(type(of: value))"
    }

    func quote(_ s: String) -> String { "\"" + s + "\"" }
}

func unarchiver(_ data: Data) throws -> NSKeyedUnarchiver {
    let u = try NSKeyedUnarchiver(forReadingFrom: data)
    u.requiresSecureCoding = false
    u.setClass(ScaryBugData.self, forClassName: "ScaryBugData")
    u.setClass(Node.self, forClassName: "Node")
    return u
}

/// A graph of `count` nodes: a tree of fan-out 8 (no parent links: see `write`), each
/// node pointing at one of 64 shared nodes, strings and numbers on every node.
func generate(_ count: Int) -> Node {
    let shared = (0..<64).map { Node(name: "shared \($0)", weight: $0) }
    let root = Node(name: "root", weight: 0)
    var all = [root]
    var i = 1
    while all.count < count {
        let parent = all[(i - 1) / 8]
        let node = Node(name: "node \(i) of the generated graph", weight: i * 7)
        node.shared = shared[i % 64]
        node.tags = ["index": i, "label": "n\(i % 100)", "ratio": Double(i) / 3]
        parent.children.append(node)
        all.append(node)
        i += 1
    }
    return root
}

func milliseconds(_ body: () throws -> Void) rethrows -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    try body()
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6
}

let args = CommandLine.arguments
do {
    switch args.count > 1 ? args[1] : "" {
    case "dump":
        let u = try unarchiver(try Data(contentsOf: URL(fileURLWithPath: args[2])))
        var d = Dumper()
        print(d.dump(u.decodeObject(forKey: "root")))
    case "write":
        let shared = Node(name: "shared", weight: 7)
        let root = Node(name: "root", weight: 1)
        let a = Node(name: "a", weight: 2), b = Node(name: "b", weight: 3)
        // No parent links here: swift-corelibs-foundation recurses without end on a cycle
        // (init(coder:) cannot hand out the object it is making) and dies of a stack overflow.
        a.shared = shared; b.shared = shared
        root.children = [a, b]
        root.tags = ["bug": ScaryBugData(title: "Wolf Spider", rating: 5), "when": NSDate(timeIntervalSinceReferenceDate: 12.5),
                     "bytes": NSData(bytes: [1, 2, 3] as [UInt8], length: 3), "yes": true, "n": 42, "pi": 3.25,
                     "list": ["x", "y"], "nothing": NSNull(), "$dollar": "kept"]
        let data = try NSKeyedArchiver.archivedData(withRootObject: root, requiringSecureCoding: false)
        try data.write(to: URL(fileURLWithPath: args[2]))
        var d = Dumper()
        print(d.dump(root))
    case "bench-encode":
        let root = generate(Int(args[2])!)
        var best = Double.infinity
        var data = Data()
        for _ in 0..<Int(args[3])! {
            best = min(best, try milliseconds { data = try NSKeyedArchiver.archivedData(withRootObject: root, requiringSecureCoding: false) })
        }
        try data.write(to: URL(fileURLWithPath: args[4]))
        print("encode \(best) \(data.count)")
    case "bench-decode":
        let data = try Data(contentsOf: URL(fileURLWithPath: args[2]))
        var best = Double.infinity
        for _ in 0..<Int(args[3])! {
            best = min(best, try milliseconds {
                let u = try unarchiver(data)
                // The root is a node, or (the 10 MB archive) an array of nodes.
                let root = u.decodeObject(forKey: "root")
                guard root is Node || root is [Node] else { throw CocoaError(.coderReadCorrupt) }
            })
        }
        print("decode \(best) \(data.count)")
    default:
        FileHandle.standardError.write("usage: keyed_archive_peer dump FILE | write FILE | bench-encode N RUNS OUT | bench-decode FILE RUNS\n".data(using: .utf8)!)
        exit(2)
    }
} catch {
    FileHandle.standardError.write("keyed_archive_peer: \(error)\n".data(using: .utf8)!)
    exit(1)
}
