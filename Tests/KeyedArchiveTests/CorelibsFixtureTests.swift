import Foundation
import KeyedArchive
import PropertyList
import Testing

/// swift-corelibs-foundation's own archive fixtures (Fixtures/corelibs/README.md), decoded to
/// what its TestNSKeyedUnarchiver.swift and FixtureValues.swift assert.
@Suite struct CorelibsFixtureTests {
    @Test func arrayTestIsTheArrayOfFourStrings() throws {
        #expect(try decodedRoot("corelibs/NSKeyedUnarchiver-ArrayTest.plist")
            == .array([.string("baa"), .string("baa"), .string("black"), .string("sheep")]))
    }

    @Test func complexTestIsTheDictionaryOfUUIDURLStringAndArray() throws {
        guard case .dictionary(let entries, false) = try decodedRoot("corelibs/NSKeyedUnarchiver-ComplexTest.plist") else {
            Issue.record("not an immutable dictionary")
            return
        }
        var byKey: [String: ArchiveValue] = [:]
        for e in entries { byKey[e.key.stringValue!] = e.value }
        #expect(byKey.count == 4)
        #expect(byKey["uuid"] == .uuid(uuidBytes("71DC068E-3420-45FF-919E-3A267D55EC22")))
        #expect(byKey["url"] == .url(base: URLBase(base: nil, relative: "https://www.swift.org"), relative: "index.xml"))
        #expect(byKey["string"] == .string("hello"))
        #expect(byKey["array"] == .array([.null, .string("hello"), .integer(34545), .dictionary([ArchiveEntry("key", .string("val"))])]))
    }

    @Test func concreteValueTestIsAnNSValueOfThreeInt32s() throws {
        let root = try decodedRoot("corelibs/NSKeyedUnarchiver-ConcreteValueTest.plist")
        let value = try #require(root.objectValue)
        #expect(value.className == "NSValue")
        #expect(value.fields["$0"] == .string("[3i]"))
        let array = try #require(value.fields["$1"]?.objectValue)
        #expect(array.className == "_NSKeyedCoderOldStyleArray")
        #expect(array.fields["$0"] == .integer(1) && array.fields["$1"] == .integer(2) && array.fields["$2"] == .integer(3))
        #expect(array.fields["NS.count"] == .integer(3) && array.fields["NS.type"] == .integer(105))
    }

    @Test func rangeRectAndEdgeInsetsAreNSValuesWithTheirSpecialFields() throws {
        let range = try #require(try decodedRoot("corelibs/NSKeyedUnarchiver-RangeTest.plist").objectValue)
        #expect(range.fields["NS.special"] == .integer(4))
        #expect(range.fields["NS.rangeval.location"] == .integer(97345))
        #expect(range.fields["NS.rangeval.length"] == .integer(98345))
        let rect = try #require(try decodedRoot("corelibs/NSKeyedUnarchiver-RectTest.plist").objectValue)
        #expect(rect.fields["NS.special"] == .integer(3))
        #expect(rect.fields["NS.rectval"] == .string("{{400, 300}, {200, 300}}"))
        let insets = try #require(try decodedRoot("corelibs/NSKeyedUnarchiver-EdgeInsetsTest.plist").objectValue)
        #expect(insets.fields["NS.special"] == .integer(12))
        #expect(insets.fields["NS.edgeval.top"] == .real(1) && insets.fields["NS.edgeval.left"] == .real(2))
        #expect(insets.fields["NS.edgeval.bottom"] == .real(3) && insets.fields["NS.edgeval.right"] == .real(4))
        #expect(insets.inlineKeys.contains("NS.edgeval.top"))
    }

    @Test func orderedSetURLAndUUIDTests() throws {
        #expect(try decodedRoot("corelibs/NSKeyedUnarchiver-OrderedSetTest.plist")
            == .orderedSet([.string("valgeir"), .string("nico"), .string("puzzle")]))
        #expect(try decodedRoot("corelibs/NSKeyedUnarchiver-URLTest.plist")
            == .url(base: URLBase(base: nil, relative: "https://www.example.com"), relative: "foo.xml"))
        #expect(try decodedRoot("corelibs/NSKeyedUnarchiver-UUIDTest.plist")
            == .uuid(uuidBytes("0AD863BA-7584-40CF-8896-BD87B3280C34")))
    }

    @Test func notificationTestIsAnNSNotificationObject() throws {
        let note = try #require(try decodedRoot("corelibs/NSKeyedUnarchiver-NotificationTest.plist").objectValue)
        #expect(note.className == "NSNotification")
        #expect(note.fields["NS.name"] == .string("notification-name"))
        #expect(note.fields["NS.object"] == .string("notification-object"))
        #expect(note.fields["NS.userinfo"] == .dictionary([ArchiveEntry("notification-key", .string("notification-val"))]))
    }

    static let numbers: Set<ArchiveValue> = [.integer(1), .integer(2), .integer(3), .integer(4), .integer(5)]

    @Test func macOSSetsAndOrderedSetsHoldOneToFive() throws {
        for (name, mutable) in [("NSSet", false), ("NSMutableSet", true)] {
            guard case .set(let items, let m) = try decodedRoot("corelibs/\(name)-Numbers.archive") else {
                Issue.record("\(name) is not a set"); continue
            }
            #expect(m == mutable && Set(items) == Self.numbers && items.count == 5)
            #expect(try decodedRoot("corelibs/\(name)-Empty.archive") == .set([], mutable: mutable))
        }
        for (name, mutable) in [("NSOrderedSet", false), ("NSMutableOrderedSet", true)] {
            #expect(try decodedRoot("corelibs/\(name)-Numbers.archive")
                == .orderedSet([.integer(1), .integer(2), .integer(3), .integer(4), .integer(5)], mutable: mutable))
            #expect(try decodedRoot("corelibs/\(name)-Empty.archive") == .orderedSet([], mutable: mutable))
        }
    }

    @Test func macOSCountedSetKeepsItsObjectsAndCounts() throws {
        let set = try #require(try decodedRoot("corelibs/NSCountedSet-NumbersAppearingSeveralTimes.archive").objectValue)
        #expect(set.classChain.first == "NSCountedSet")
        #expect(set.fields["NS.count"] == .integer(5))
        var seen: Set<ArchiveValue> = []
        for k in 0..<5 {
            #expect(set.fields[PlistKey("NS.count\(k)")] == .integer(5))
            seen.insert(try #require(set.fields[PlistKey("NS.object\(k)")]))
        }
        #expect(seen == Self.numbers)
    }

    @Test func macOSIndexPathHoldsItsIndexesInMutableData() throws {
        let path = try #require(try decodedRoot("corelibs/NSIndexPath-ManyIndices.archive").objectValue)
        #expect(path.className == "NSIndexPath")
        #expect(path.fields["NSIndexPathLength"] == .integer(6))
        #expect(path.fields["NSIndexPathData"] == .data([4, 8, 15, 16, 23, 42], mutable: true))
    }

    @Test func macOSMeasurementIsFortyFiveMiles() throws {
        let m = try #require(try decodedRoot("corelibs/NSMeasurement-Length.archive").objectValue)
        #expect(m.fields["NS.value"] == .real(45))
        let unit = try #require(m.fields["NS.unit"]?.objectValue)
        #expect(unit.fields["NS.symbol"] == .string("mi"))
        let converter = try #require(unit.fields["NS.converter"]?.objectValue)
        #expect(converter.classChain == ["NSUnitConverterLinear", "NSUnitConverter", "NSObject"])
        #expect(converter.fields["NS.coefficient"] == .real(1609.34))
    }

    @Test func everyFixtureDecodesAndSurvivesARoundTrip() throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: fixturesDirectory + "/corelibs")
            .filter { $0.hasSuffix(".plist") || $0.hasSuffix(".archive") }
        #expect(names.count == 46)
        for name in names {
            let archive = try KeyedArchive.decode(try fixture("corelibs/" + name))
            let again = try KeyedArchive.decode(try archive.encode(format: .binary))
            #expect(sameGraph(archive.root, again.root), "\(name)")
            _ = try KeyedArchiveGraphForm.value(of: archive)
        }
    }
}
