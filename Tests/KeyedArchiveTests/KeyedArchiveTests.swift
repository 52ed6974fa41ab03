import KeyedArchive
import PropertyList
import Testing

/// The "Scary Bugs" tutorial's bug document: a title and a rating, saved
/// as a keyed archive in the bug's folder.
final class ScaryBugData: KeyedCoding {
    static let archivedClassName = "ScaryBugData"
    var title: String
    var rating: Float

    init(title: String, rating: Float) {
        self.title = title
        self.rating = rating
    }

    func encode(with coder: KeyedArchiver) {
        coder.encode(title, forKey: "Title")
        coder.encode(rating, forKey: "Rating")
    }

    init(coder: KeyedUnarchiver) throws {
        title = try coder.decodeString(forKey: "Title") ?? ""
        rating = try coder.decodeFloat(forKey: "Rating")
    }
}

/// A model object with shared references and a key that needs escaping.
final class Folder: KeyedCoding {
    static let archivedClassName = "ScaryBugs.Folder"
    static let archivedSuperclassNames = ["ScaryBugs.Item", "NSObject"]
    var name: String
    var bugs: [ScaryBugData]
    var favourite: ScaryBugData?
    var count: Int
    var open: Bool
    var created: PlistDate?

    init(name: String, bugs: [ScaryBugData], favourite: ScaryBugData?) {
        self.name = name
        self.bugs = bugs
        self.favourite = favourite
        count = bugs.count
        open = true
    }

    func encode(with coder: KeyedArchiver) {
        coder.encode(name, forKey: "$name")
        coder.encode(bugs, forKey: "bugs")
        coder.encode(favourite, forKey: "favourite")
        coder.encode(count, forKey: "count")
        coder.encode(open, forKey: "open")
        coder.encode(created, forKey: "created")
    }

    init(coder: KeyedUnarchiver) throws {
        name = try coder.decodeString(forKey: "$name") ?? ""
        bugs = try coder.decodeArray(of: ScaryBugData.self, forKey: "bugs")
        favourite = try coder.decodeObject(of: ScaryBugData.self, forKey: "favourite")
        count = try coder.decodeInteger(forKey: "count")
        open = try coder.decodeBool(forKey: "open")
        created = try coder.decodeDate(forKey: "created")
    }
}

/// Archives of the NSKeyedArchiver layout, built by hand for hostile cases.
func archivePlist(objects: [PlistValue], top: [PlistKey: PlistValue] = ["root": .uid(1)],
                  archiver: PlistValue = .string("NSKeyedArchiver"), version: PlistValue = .integer(100000)) -> PlistValue {
    .dictionary(["$archiver": archiver, "$version": version, "$top": .dictionary(top), "$objects": .array(objects)])
}

func classRecord(_ names: String...) -> PlistValue {
    .dictionary(["$classname": .string(names[0]), "$classes": .array(names.map { .string($0) })])
}

@Suite struct KeyedArchiveTests {
    @Test func theScaryBugsDocumentRoundTripsThroughTheCoders() throws {
        let bug = ScaryBugData(title: "Wolf Spider", rating: 4.5)
        for format in [PlistFormat.binary, .xml] {
            let bytes = try KeyedArchiver.archivedData(withRootObject: bug, format: format)
            let back = try #require(try KeyedUnarchiver.unarchivedObject(ofClass: ScaryBugData.self, from: bytes))
            #expect(back.title == "Wolf Spider" && back.rating == 4.5)
        }
    }

    @Test func theArchiveHasFoundationsLayout() throws {
        let bug = ScaryBugData(title: "Lady Bug", rating: 3)
        let plist = try KeyedArchive(root: try KeyedArchiver.archivedData(withRootObject: bug).decodedRoot()).plist()
        let d = try #require(plist.dictionaryValue)
        #expect(d["$archiver"] == .string("NSKeyedArchiver") && d["$version"] == .integer(100000))
        #expect(d["$top"] == .dictionary(["root": .uid(1)]))
        let objects = try #require(d["$objects"]?.arrayValue)
        #expect(objects[0] == .string("$null"))
        let record = try #require(objects[1].dictionaryValue)
        #expect(record["Rating"] == .real(3))          // encodeFloat: stored in the object
        #expect(record["Title"] == .uid(2))            // a string: an object of its own, inline in $objects
        #expect(objects[2] == .string("Lady Bug"))
        #expect(record["$class"] == .uid(3))
        #expect(objects[3] == classRecord("ScaryBugData", "NSObject"))
    }

    @Test func sharedObjectsAreWrittenOnceAndComeBackShared() throws {
        let wolf = ScaryBugData(title: "Wolf", rating: 5), moth = ScaryBugData(title: "Moth", rating: 1)
        let folder = Folder(name: "Scary", bugs: [wolf, moth, wolf], favourite: wolf)
        folder.created = PlistDate(secondsSinceReferenceDate: 86400.5)
        let bytes = try KeyedArchiver.archivedData(withRootObject: folder)
        let plist = try PlistCodec.decode(bytes)
        let objects = try #require(plist.dictionaryValue?["$objects"]?.arrayValue)
        // root, its class, "Scary", the array, its class, wolf, "Wolf", bug class, moth, "Moth", the date, its class, $null
        #expect(objects.filter { $0 == .string("Wolf") }.count == 1)
        #expect(objects.filter { $0 == classRecord("ScaryBugData", "NSObject") }.count == 1)
        let root = try #require(objects[1].dictionaryValue)
        #expect(root["$$name"] != nil && root["$name"] == nil)   // a key starting with $ is escaped
        #expect(root["count"] == .integer(3) && root["open"] == .bool(true))

        let back = try #require(try KeyedUnarchiver.unarchivedObject(ofClass: Folder.self, from: bytes, classes: [ScaryBugData.self]))
        #expect(back.name == "Scary" && back.count == 3 && back.open && back.created == folder.created)
        #expect(back.bugs.count == 3 && back.bugs[0] === back.bugs[2] && back.favourite === back.bugs[0])
        #expect(back.bugs.map(\.title) == ["Wolf", "Moth", "Wolf"])

        let graph = try #require(try KeyedArchive.decode(bytes).root?.objectValue)
        #expect(graph.classChain == ["ScaryBugs.Folder", "ScaryBugs.Item", "NSObject"])
    }

    @Test func aCycleOfObjectsIsKeptAndWrittenBack() throws {
        let parent = ArchiveObject(className: "Node"), child = ArchiveObject(className: "Node")
        parent.fields = ["child": .object(child), "name": .string("parent")]
        child.fields = ["parent": .object(parent), "name": .string("child"), "self": .object(child)]
        let bytes = try KeyedArchive(root: .object(parent)).encode()
        let back = try #require(try KeyedArchive.decode(bytes).root?.objectValue)
        let backChild = try #require(back.fields["child"]?.objectValue)
        #expect(backChild.fields["parent"]?.objectValue === back)
        #expect(backChild.fields["self"]?.objectValue === backChild)
        #expect(sameGraph(.object(parent), .object(back)))
        // The graph form shows the back references as {"$ref": UID}.
        let form = try KeyedArchiveGraphForm.value(of: try KeyedArchive.decode(bytes))
        let shownChild = try #require(form.dictionaryValue?["child"]?.dictionaryValue)
        #expect(shownChild["parent"] == .dictionary(["$ref": .integer(Int128(back.archiveUID!))]))
        #expect(shownChild["self"] == .dictionary(["$ref": .integer(Int128(backChild.archiveUID!))]))
    }

    @Test func aCycleThatInitCoderCannotMakeIsAnError() throws {
        let a = ArchiveObject(className: "ScaryBugData")
        a.fields = ["Title": .object(a)]
        let bytes = try KeyedArchive(root: .object(a)).encode()
        #expect(throws: KeyedArchiveError.self) { try KeyedUnarchiver.unarchivedObject(ofClass: ScaryBugData.self, from: bytes) }
    }

    @Test func booleansStayApartFromOneAndZero() throws {
        let root = ArchiveValue.array([.bool(true), .integer(1), .bool(false), .integer(0), .real(1)])
        let bytes = try KeyedArchive(root: root).encode()
        #expect(try KeyedArchive.decode(bytes).root == root)
        let objects = try #require(try PlistCodec.decode(bytes).dictionaryValue?["$objects"]?.arrayValue)
        #expect(objects.contains(.bool(true)) && objects.contains(.integer(1)) && objects.contains(.real(1)))
    }

    @Test func everyFoundationValueRoundTrips() throws {
        let url = ArchiveValue.url(base: URLBase(base: nil, relative: "https://example.com/"), relative: "a b.html")
        let root = ArchiveValue.dictionary([
            ArchiveEntry("s", .string("x")), ArchiveEntry("ms", .string("y", mutable: true)),
            ArchiveEntry("d", .data([1, 2])), ArchiveEntry("md", .data([3], mutable: true)),
            ArchiveEntry("date", .date(PlistDate(secondsSinceReferenceDate: -1.25))),
            ArchiveEntry("a", .array([.null], mutable: true)), ArchiveEntry("set", .set([.integer(1)], mutable: true)),
            ArchiveEntry("os", .orderedSet([.string("o")])), ArchiveEntry("uuid", .uuid(Array(0..<16))),
            ArchiveEntry("url", url), ArchiveEntry("md2", .dictionary([], mutable: true)),
        ])
        for format in [PlistFormat.binary, .xml] {
            #expect(try KeyedArchive.decode(try KeyedArchive(root: root).encode(format: format)).root == root)
        }
    }

    // MARK: - Hostile archives

    static let hostile: [(String, PlistValue, String)] = [
        ("UID out of range", archivePlist(objects: [.string("$null"), .dictionary(["$class": .uid(2), "x": .uid(99)]), classRecord("A")]),
         "invalid object reference: UID 99 is out of range ($objects has 3 entries)"),
        ("root out of range", archivePlist(objects: [.string("$null")]), "UID 1 is out of range"),
        ("its own class", archivePlist(objects: [.string("$null"), .dictionary(["$class": .uid(1)])]), "the object is its own class"),
        ("no $classes", archivePlist(objects: [.string("$null"), .dictionary(["$class": .uid(2)]), .dictionary(["$classname": .string("A")])]),
         "a class record without a $classes array"),
        ("$classes not strings", archivePlist(objects: [.string("$null"), .dictionary(["$class": .uid(2)]),
                                                        .dictionary(["$classname": .string("A"), "$classes": .array([.integer(1)])])]),
         "$classes holds a integer, not a class name"),
        ("class is an object", archivePlist(objects: [.string("$null"), .dictionary(["$class": .uid(2)]), .dictionary(["$class": .uid(1)])]),
         "a class record that is itself an object"),
        ("wrong archiver", archivePlist(objects: [.string("$null")], archiver: .string("NSArchiver")), "unsupported archiver \"NSArchiver\""),
        ("wrong version", archivePlist(objects: [.string("$null")], version: .integer(99999)), "unsupported keyed archive $version 99999"),
        ("version not a number", archivePlist(objects: [.string("$null")], version: .string("100000")), "unsupported keyed archive $version (a string)"),
        ("not a dictionary", .array([]), "not a keyed archive"),
        ("array count mismatch", archivePlist(objects: [.string("$null"), .dictionary(["$class": .uid(2), "NS.keys": .array([.uid(3)]), "NS.objects": .array([])]),
                                                        classRecord("NSDictionary", "NSObject"), .string("k")]),
         "NS.keys has 1 entries and NS.objects 0"),
        ("UUID of 3 bytes", archivePlist(objects: [.string("$null"), .dictionary(["$class": .uid(2), "NS.uuidbytes": .data([1, 2, 3])]), classRecord("NSUUID")]),
         "NS.uuidbytes holds 3 bytes, not 16"),
        ("a UID as an object", archivePlist(objects: [.string("$null"), .uid(1)]), "a UID where an object was expected"),
    ]

    @Test(arguments: 0..<hostile.count)
    func aHostileArchiveIsAClearError(index: Int) throws {
        let (name, plist, expected) = Self.hostile[index]
        for format in [PlistFormat.binary, .xml] {
            let bytes = try PlistCodec.encode(plist, format: format)
            do {
                let archive = try KeyedArchive.decode(bytes)
                Issue.record("\(name): decoded \(String(describing: archive.root))")
            } catch {
                #expect(error.description.contains(expected), "\(name): \(error.description)")
            }
        }
    }

    @Test func aHundredThousandDeepChainIsRefusedNotACrash() throws {
        let n = 100_000
        var objects: [PlistValue] = [.string("$null"), classRecord("Link", "NSObject")]
        for k in 0..<n { objects.append(.dictionary(["$class": .uid(1), "next": .uid(UInt64(k + 3 < n + 2 ? k + 3 : 0))])) }
        let bytes = try PlistCodec.encode(archivePlist(objects: objects, top: ["root": .uid(2)]), format: .binary)
        #expect(throws: KeyedArchiveError.tooDeep(limit: KeyedArchive.maximumDepth)) { try KeyedArchive.decode(bytes) }
        // 100,000 nested arrays fail the same way.
        var arrays: [PlistValue] = [.string("$null"), classRecord("NSArray", "NSObject")]
        for k in 0..<n { arrays.append(.dictionary(["$class": .uid(1), "NS.objects": .array(k + 1 < n ? [.uid(UInt64(k + 3))] : [])])) }
        let nested = try PlistCodec.encode(archivePlist(objects: arrays, top: ["root": .uid(2)]), format: .binary)
        #expect(throws: KeyedArchiveError.tooDeep(limit: KeyedArchive.maximumDepth)) { try KeyedArchive.decode(nested) }
    }

    @Test func sharingThatDoublesAtEachLevelStaysLinearToDecodeAndIsBoundedToShow() throws {
        // Each array holds the next one twice: 60 levels would be 2^60 values written out.
        var objects: [PlistValue] = [.string("$null"), classRecord("NSArray", "NSObject")]
        for k in 0..<60 { objects.append(.dictionary(["$class": .uid(1), "NS.objects": .array(k < 59 ? [.uid(UInt64(k + 3)), .uid(UInt64(k + 3))] : [])])) }
        let bytes = try PlistCodec.encode(archivePlist(objects: objects, top: ["root": .uid(2)]), format: .binary)
        let archive = try KeyedArchive.decode(bytes)
        // The bound is the same code at any size; a small one keeps the test quick.
        #expect(throws: KeyedArchiveError.tooLarge(limit: 100_000)) { try KeyedArchiveGraphForm.value(of: archive, maximumValues: 100_000) }
        #expect(throws: KeyedArchiveError.tooLarge(limit: 100_000)) { try archive.plist(maximumValues: 100_000) }
    }

    @Test func aCountFieldThatClaimsBillionsIsOnlyAField() throws {
        let objects: [PlistValue] = [.string("$null"), .dictionary(["$class": .uid(2), "NS.count": .integer(4_000_000_000)]),
                                     classRecord("NSOrderedSet", "NSObject")]
        let archive = try KeyedArchive.decode(try PlistCodec.encode(archivePlist(objects: objects), format: .binary))
        #expect(archive.root == .orderedSet([]))
    }

    @Test func theGraphFormGoesBackToAnArchive() throws {
        let form = PlistValue.dictionary(["$class": .string("ScaryBugData"), "Title": .string("Bee"), "Rating": .real(2),
                                          "tags": .array([.string("a")]), "$$odd": .dictionary(["$$k": .integer(1)])])
        let archive = try KeyedArchiveGraphForm.archive(of: form)
        let back = try #require(try KeyedUnarchiver.unarchivedObject(ofClass: ScaryBugData.self, from: try archive.encode()))
        #expect(back.title == "Bee" && back.rating == 2)
        #expect(try KeyedArchiveGraphForm.value(of: try KeyedArchive.decode(try archive.encode())) == form)
        #expect(throws: KeyedArchiveError.self) { try KeyedArchiveGraphForm.archive(of: .dictionary(["$ref": .integer(1)])) }
    }
}

extension Array where Element == UInt8 {
    func decodedRoot() throws -> ArchiveValue {
        guard let root = try KeyedArchive.decode(self).root else { throw FixtureMissing(path: "no root") }
        return root
    }
}
