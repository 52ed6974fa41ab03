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

/// A graph form with its ids numbered 1, 2, … in the order they first appear
/// (keys in sorted order): two forms of one graph compare equal.
func normalizedIDs(_ form: PlistValue) -> PlistValue {
    var numbers: [Int128: Int128] = [:]
    func number(_ id: Int128) -> Int128 {
        if let n = numbers[id] { return n }
        numbers[id] = Int128(numbers.count + 1)
        return numbers[id]!
    }
    func walk(_ v: PlistValue) -> PlistValue {
        switch v {
        case .array(let items): return .array(items.map(walk))
        case .dictionary(let d):
            var out: [PlistKey: PlistValue] = [:]
            for key in d.keys.sorted() {
                if key == "$id" || key == "$ref", case .integer(let id) = d[key]! { out[key] = .integer(number(id)) } else { out[key] = walk(d[key]!) }
            }
            return .dictionary(out)
        default: return v
        }
    }
    return walk(form)
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

    /// Objects that each hold the next one twice, `levels` deep, as raw archive bytes.
    static func doublingArchive(levels: Int, arrays: Bool) throws -> [UInt8] {
        var objects: [PlistValue] = [.string("$null"), arrays ? classRecord("NSArray", "NSObject") : classRecord("Node", "NSObject")]
        for k in 0..<levels {
            let next: PlistValue = .uid(k < levels - 1 ? UInt64(k + 3) : 0)
            if arrays {
                objects.append(.dictionary(["$class": .uid(1), "NS.objects": .array(k < levels - 1 ? [next, next] : [])]))
            } else {
                objects.append(.dictionary(["$class": .uid(1), "a": next, "b": next]))
            }
        }
        return try PlistCodec.encode(archivePlist(objects: objects, top: ["root": .uid(2)]), format: .binary)
    }

    @Test(arguments: [false, true])
    func sharingThatDoublesAtEachLevelIsShownOnceAndComesBackShared(arrays: Bool) throws {
        // 40 levels would be 2^40 values written out in full.
        let bytes = try Self.doublingArchive(levels: 40, arrays: arrays)
        let form = try KeyedArchiveGraphForm.value(ofArchive: try PlistCodec.decode(bytes))
        let json = try PlistCodec.encode(form, format: .xml)
        #expect(json.count < 40_000, "\(json.count) bytes")
        // The second reference to level 2 (UID 3) is a reference to its first showing.
        if arrays {
            let items = try #require(form.arrayValue)
            #expect(items[0].dictionaryValue?["$id"] == .integer(3) && items[0].dictionaryValue?["$value"] != nil)
            #expect(items[1] == .dictionary(["$ref": .integer(3)]))
        } else {
            let level1 = try #require(form.dictionaryValue)
            #expect(level1["a"]?.dictionaryValue?["$id"] == .integer(3))
            #expect(level1["b"] == .dictionary(["$ref": .integer(3)]))
        }
        // Back to an archive: one entry per level, as the archive had.
        let again = try KeyedArchiveGraphForm.archive(of: form).plist()
        let objects = try #require(again.dictionaryValue?["$objects"]?.arrayValue)
        #expect(objects.count == 42, "\(objects.count) objects")
        #expect(normalizedIDs(try KeyedArchiveGraphForm.value(ofArchive: again)) == normalizedIDs(form))
    }

    @Test func aSharedArrayAndACycleThroughArraysSurviveTheForm() throws {
        // root: [shared, shared, self-holding]; the third array holds itself.
        let objects: [PlistValue] = [
            .string("$null"), classRecord("NSArray", "NSObject"),
            .dictionary(["$class": .uid(1), "NS.objects": .array([.uid(3), .uid(3), .uid(5)])]),
            .dictionary(["$class": .uid(1), "NS.objects": .array([.uid(4)])]),
            .string("x"),
            .dictionary(["$class": .uid(1), "NS.objects": .array([.uid(5)])]),
        ]
        let plist = archivePlist(objects: objects, top: ["root": .uid(2)])
        let form = try KeyedArchiveGraphForm.value(ofArchive: plist)
        #expect(form == .array([
            .dictionary(["$id": .integer(3), "$value": .array([.string("x")])]),
            .dictionary(["$ref": .integer(3)]),
            .dictionary(["$id": .integer(5), "$value": .array([.dictionary(["$ref": .integer(5)])])]),
        ]))
        let back = try KeyedArchiveGraphForm.archive(of: form).plist()
        #expect(try #require(back.dictionaryValue?["$objects"]?.arrayValue).count == objects.count)
        #expect(normalizedIDs(try KeyedArchiveGraphForm.value(ofArchive: back)) == normalizedIDs(form))
    }

    @Test func aReferenceMayComeBeforeItsFirstShowing() throws {
        // Key order of another writer may put the $ref first: it still names the object.
        let form = PlistValue.dictionary([
            "$class": .string("Pair"),
            "a": .dictionary(["$ref": .integer(7)]),
            "b": .dictionary(["$class": .string("Leaf"), "$id": .integer(7), "back": .dictionary(["$ref": .integer(7)])]),
        ])
        let root = try #require(try KeyedArchiveGraphForm.archive(of: form).root?.objectValue)
        let a = try #require(root.fields["a"]?.objectValue), b = try #require(root.fields["b"]?.objectValue)
        #expect(a === b && b.fields["back"]?.objectValue === b)
        #expect(throws: KeyedArchiveError.self) { try KeyedArchiveGraphForm.archive(of: .dictionary(["$ref": .integer(1)])) }
        let twice = PlistValue.array([.dictionary(["$class": .string("A"), "$id": .integer(1)]), .dictionary(["$class": .string("A"), "$id": .integer(1)])])
        #expect(throws: KeyedArchiveError.self) { try KeyedArchiveGraphForm.archive(of: twice) }
    }

    @Test func aLongSharedStringIsShownOnceAndAShortOneEachTime() throws {
        let long = String(repeating: "y", count: 100)
        let objects: [PlistValue] = [
            .string("$null"), classRecord("NSArray", "NSObject"),
            .dictionary(["$class": .uid(1), "NS.objects": .array([.uid(3), .uid(3), .uid(4), .uid(4)])]),
            .string("short"), .string(long),
        ]
        let form = try KeyedArchiveGraphForm.value(ofArchive: archivePlist(objects: objects, top: ["root": .uid(2)]))
        #expect(form == .array([.string("short"), .string("short"),
                                .dictionary(["$id": .integer(4), "$value": .string(long)]), .dictionary(["$ref": .integer(4)])]))
        let back = try KeyedArchiveGraphForm.archive(of: form)
        #expect(back.root == .array([.string("short"), .string("short"), .string(long), .string(long)])
                || { if case .array(let items, _)? = back.root, case .shared = items[2] { return true }; return false }())
    }

    @Test func aURLWithABaseIsShownAsTheURLItDenotes() throws {
        let swift = ArchiveValue.url(base: URLBase(base: nil, relative: "https://www.swift.org"), relative: "index.xml")
        let form = try KeyedArchiveGraphForm.value(of: KeyedArchive(root: swift))
        #expect(form == .string("https://www.swift.org/index.xml"))
        // RFC 3986, section 5.4: the base http://a/b/c/d;p?q.
        let base = URLBase(base: nil, relative: "http://a/b/c/d;p?q")
        let examples: [(String, String)] = [
            ("g:h", "g:h"), ("g", "http://a/b/c/g"), ("./g", "http://a/b/c/g"), ("g/", "http://a/b/c/g/"),
            ("/g", "http://a/g"), ("//g", "http://g"), ("?y", "http://a/b/c/d;p?y"), ("g?y", "http://a/b/c/g?y"),
            ("#s", "http://a/b/c/d;p?q#s"), ("g#s", "http://a/b/c/g#s"), (";x", "http://a/b/c/;x"), ("", "http://a/b/c/d;p?q"),
            (".", "http://a/b/c/"), ("./", "http://a/b/c/"), ("..", "http://a/b/"), ("../g", "http://a/b/g"),
            ("../..", "http://a/"), ("../../g", "http://a/g"), ("../../../g", "http://a/g"), ("/./g", "http://a/g"),
            ("g.", "http://a/b/c/g."), ("..g", "http://a/b/c/..g"), ("./../g", "http://a/b/g"), ("g/../h", "http://a/b/c/h"),
            ("g;x=1/../y", "http://a/b/c/y"), ("g?y/./x", "http://a/b/c/g?y/./x"), ("g#s/../x", "http://a/b/c/g#s/../x"),
        ]
        for (relative, expected) in examples {
            #expect(KeyedArchiveGraphForm.urlString(base: base, relative: relative) == expected, "\(relative)")
        }
        // A base that is itself relative to another.
        let nested = URLBase(base: URLBase(base: nil, relative: "https://example.com/a/"), relative: "b/")
        #expect(KeyedArchiveGraphForm.urlString(base: nested, relative: "c.txt") == "https://example.com/a/b/c.txt")
    }

    @Test func controlCharactersFromAnArchiveAreEscapedInErrors() throws {
        let plist = archivePlist(objects: [.string("$null")], archiver: .string("NS\u{1B}]0;owned\u{07}Keyed"))
        #expect(throws: KeyedArchiveError.self) { try KeyedArchive.decode(plist: plist) }
        do { _ = try KeyedArchive.decode(plist: plist) } catch {
            #expect(error.description == "unsupported archiver \"NS\\x1B]0;owned\\x07Keyed\" (only NSKeyedArchiver archives can be read)")
        }
        // A class name in a message of the graph form.
        let objects: [PlistValue] = [.string("$null"), classRecord("NSDictionary", "NSObject"),
                                     .dictionary(["$class": .uid(1), "NS.keys": .array([.uid(3)]), "NS.objects": .array([.uid(3)])]),
                                     .dictionary(["$class": .uid(4)]), classRecord("Evil\u{1B}[2J", "NSObject")]
        do { _ = try KeyedArchiveGraphForm.value(ofArchive: archivePlist(objects: objects, top: ["root": .uid(2)])); Issue.record("shown") } catch {
            #expect(error.description.contains("Evil\\x1B[2J") && !error.description.contains("\u{1B}"), "\(error)")
        }
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
