import Foundation
import KeyedArchive
import PropertyList

/// The folder of this test target's fixtures.
let fixturesDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures").path

/// The repository's top folder.
let repositoryDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

func fixture(_ name: String) throws -> [UInt8] {
    let path = fixturesDirectory + "/" + name
    guard let data = FileManager.default.contents(atPath: path) else { throw FixtureMissing(path: path) }
    return Array(data)
}

struct FixtureMissing: Error { var path: String }

/// The root of a fixture archive.
func decodedRoot(_ name: String) throws -> ArchiveValue {
    let archive = try KeyedArchive.decode(try fixture(name))
    guard let root = archive.root else { throw FixtureMissing(path: name + " has no root") }
    return root
}

/// Bytes of a UUID string ("71DC068E-3420-…").
func uuidBytes(_ text: String) -> [UInt8] {
    let hex = Array(text.replacingOccurrences(of: "-", with: "").utf8)
    return stride(from: 0, to: hex.count, by: 2).map { UInt8(String(decoding: hex[$0..<$0 + 2], as: UTF8.self), radix: 16)! }
}

/// Two graphs with the same shape: values equal, objects matched one to one
/// (a shared object on one side is shared on the other; cycles meet).
struct GraphComparison {
    private var pairs: [ObjectIdentifier: ObjectIdentifier] = [:]

    mutating func same(_ a: ArchiveValue, _ b: ArchiveValue) -> Bool {
        switch (a, b) {
        case (.object(let x), .object(let y)):
            if let seen = pairs[ObjectIdentifier(x)] { return seen == ObjectIdentifier(y) }
            pairs[ObjectIdentifier(x)] = ObjectIdentifier(y)
            guard x.classChain == y.classChain, x.fields.count == y.fields.count else { return false }
            for (k, v) in x.fields {
                guard let w = y.fields[k], same(v, w) else { return false }
            }
            return true
        case (.array(let x, let m), .array(let y, let n)), (.orderedSet(let x, let m), .orderedSet(let y, let n)), (.set(let x, let m), .set(let y, let n)):
            return m == n && x.count == y.count && zip(x, y).allSatisfy { same($0, $1) }
        case (.dictionary(let x, let m), .dictionary(let y, let n)):
            return m == n && x.count == y.count && zip(x, y).allSatisfy { same($0.key, $1.key) && same($0.value, $1.value) }
        default:
            return a == b
        }
    }
}

func sameGraph(_ a: ArchiveValue?, _ b: ArchiveValue?) -> Bool {
    guard let a, let b else { return a == nil && b == nil }
    var comparison = GraphComparison()
    return comparison.same(a, b)
}
