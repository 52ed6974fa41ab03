import PropertyList
import Testing

/// One good binary fixture and named ways of breaking it. Every broken
/// file must throw a `PlistError`; none may crash or read out of bounds.
@Suite struct BinaryMutationTests {
    /// Objects of the good fixture:
    /// 0 `{name: "plist", list: [1, 2.5, "é"]}`
    static let goodObjects: [[UInt8]] = [
        [0xD2, 3, 1, 4, 2],                 // 0: dict, keys 3 ("list") and 1 ("name"), values 4 and 2
        [0x54] + ascii("name"),             // 1
        [0x55] + ascii("plist"),            // 2
        [0x54] + ascii("list"),             // 3
        [0xA3, 5, 6, 7],                    // 4: array
        [0x10, 0x01],                       // 5: integer 1
        [0x23] + bigEndian(2.5.bitPattern, size: 8),  // 6: real
        [0x61, 0x00, 0xE9],                 // 7: "é" in UTF-16BE, last object
    ]

    static let goodValue = PlistValue.dictionary([
        "name": .string("plist"),
        "list": .array([.integer(1), .real(2.5), .string("é")]),
    ])

    @Test func goodFixtureDecodes() throws {
        #expect(try PlistCodec.decode(assembleBinary(Self.goodObjects)) == Self.goodValue)
    }

    struct Mutation: Sendable, CustomStringConvertible {
        var description: String
        var bytes: @Sendable () -> [UInt8]
        init(_ name: String, _ bytes: @escaping @Sendable () -> [UInt8]) {
            description = name
            self.bytes = bytes
        }
    }

    static func replacing(_ index: Int, with object: [UInt8]) -> [UInt8] {
        var objects = goodObjects
        objects[index] = object
        return assembleBinary(objects)
    }

    static func patchingTrailer(at position: Int, _ bytes: [UInt8]) -> [UInt8] {
        var file = assembleBinary(goodObjects)
        let trailer = file.count - 32
        file.replaceSubrange((trailer + position)..<(trailer + position + bytes.count), with: bytes)
        return file
    }

    static let mutations: [Mutation] = [
        Mutation("truncated trailer") { Array(assembleBinary(goodObjects).dropLast(10)) },
        Mutation("empty file after magic") { ascii("bplist00") },
        Mutation("bad magic") { var f = assembleBinary(goodObjects); f[7] = UInt8(ascii: "1"); return f },
        Mutation("offset size 0") { patchingTrailer(at: 6, [0]) },
        Mutation("offset size 9") { patchingTrailer(at: 6, [9]) },
        Mutation("reference size 0") { patchingTrailer(at: 7, [0]) },
        Mutation("object count 0") { patchingTrailer(at: 8, bigEndian(0, size: 8)) },
        Mutation("object count huge") { patchingTrailer(at: 8, bigEndian(UInt64.max, size: 8)) },
        Mutation("top object out of range") { patchingTrailer(at: 16, bigEndian(8, size: 8)) },
        Mutation("offset table beyond the file") { patchingTrailer(at: 24, bigEndian(UInt64.max / 2, size: 8)) },
        Mutation("offset out of range") {
            var file = assembleBinary(goodObjects)
            let tableStart = file.count - 32 - goodObjects.count
            file[tableStart + 1] = 0xF0
            return file
        },
        Mutation("offset into the header") {
            var file = assembleBinary(goodObjects)
            file[file.count - 32 - goodObjects.count + 2] = 3
            return file
        },
        Mutation("reference out of range") { replacing(4, with: [0xA3, 5, 6, 99]) },
        Mutation("self-referencing array") { replacing(4, with: [0xA3, 5, 6, 4]) },
        Mutation("two-object cycle") {
            var objects = goodObjects
            objects[4] = [0xA1, 8]
            objects.append([0xA1, 4])
            return assembleBinary(objects)
        },
        Mutation("dictionary containing itself") { replacing(0, with: [0xD2, 3, 1, 0, 2]) },
        Mutation("bad integer width") { replacing(5, with: [0x15] + Array(repeating: 0, count: 32)) },
        Mutation("16-byte integer above UInt64.max") { replacing(5, with: [0x14, 0, 0, 0, 0, 0, 0, 0, 1] + Array(repeating: 0, count: 8)) },
        Mutation("bad real width") { replacing(6, with: [0x21, 0, 0]) },
        Mutation("bad date marker") { replacing(6, with: [0x32] + Array(repeating: 0, count: 8)) },
        Mutation("odd UTF-16 length") { replacing(7, with: [0x62, 0x00, 0xE9, 0x00]) },
        Mutation("unpaired high surrogate") { replacing(7, with: [0x62, 0xD8, 0x3D, 0x00, 0x41]) },
        Mutation("unpaired low surrogate") { replacing(7, with: [0x61, 0xDE, 0x00]) },
        Mutation("non-ASCII byte in ASCII string") { replacing(2, with: [0x55] + ascii("pl") + [0xE9] + ascii("st")) },
        Mutation("string count past the end") { replacing(7, with: [0x5F, 0x10, 0x7F]) },
        Mutation("extended count with a non-integer marker") { replacing(4, with: [0xAF, 0x23, 0x01]) },
        Mutation("non-string dictionary key") { replacing(0, with: [0xD2, 5, 1, 4, 2]) },
        Mutation("array as dictionary key") { replacing(0, with: [0xD2, 4, 1, 4, 2]) },
        Mutation("UID of nine bytes") { replacing(5, with: [0x88, 0x01]) },
        Mutation("set object") { replacing(4, with: [0xC3, 5, 6, 7]) },
        Mutation("null object") { replacing(5, with: [0x00, 0x00]) },
        Mutation("fill byte") { replacing(5, with: [0x0F, 0x00]) },
        Mutation("unknown marker") { replacing(5, with: [0x70, 0x00]) },
    ]

    @Test(arguments: mutations)
    func mutationThrowsPlistError(mutation: Mutation) {
        let bytes = mutation.bytes()
        #expect(throws: PlistError.self) { try PlistCodec.decode(bytes, format: .binary) }
    }

    @Test func cycleErrorSaysSo() {
        do {
            _ = try PlistCodec.decode(Self.replacing(4, with: [0xA3, 5, 6, 4]))
            Issue.record("decoded a cyclic file")
        } catch {
            guard case .malformed(let format, let detail) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(format == "binary")
            #expect(detail.contains("cycle"))
        }
    }

    @Test func uidLongerThanEightBytesNamesItsOffsetAndSize() {
        do {
            _ = try PlistCodec.decode(Self.replacing(5, with: [0x88, 0x01]))
            Issue.record("decoded a nine-byte UID")
        } catch {
            #expect(error.description.contains("UID at offset"))
            #expect(error.description.contains("is 9 bytes long (at most 8)"))
        }
    }

    @Test func sharedObjectsAreAllowed() throws {
        // Object 1 (an array) is referenced three times.
        let file = assembleBinary([[0xA3, 1, 1, 1], [0xA1, 2], [0x10, 7]])
        let inner = PlistValue.array([.integer(7)])
        #expect(try PlistCodec.decode(file) == .array([inner, inner, inner]))
    }

    @Test func manyTimesSharedObjectsDecodeQuickly() throws {
        // 64 levels, each an array holding the next level twice: 2^64 paths.
        var objects: [[UInt8]] = (0..<64).map { (level: Int) -> [UInt8] in
            let next = UInt8(level + 1)
            return [0xA2, next, next]
        }
        objects.append([0x09])
        let value = try PlistCodec.decode(assembleBinary(objects))
        #expect(value.typeName == "array")
    }

    @Test func everyTruncationThrowsOrDecodes() {
        let file = assembleBinary(Self.goodObjects)
        for n in 0..<file.count {
            #expect(throws: PlistError.self) { try PlistCodec.decode(Array(file.prefix(n)), format: .binary) }
        }
    }

    @Test func everySingleByteFlipIsSafe() {
        let file = assembleBinary(Self.goodObjects)
        for i in 0..<file.count {
            for bit in 0..<8 {
                var copy = file
                copy[i] ^= 1 << UInt8(bit)
                // Either outcome is fine; the point is that neither crashes.
                _ = try? PlistCodec.decode(copy, format: .binary)
            }
        }
    }

    @Test func writerUniquesStringsAndSortsKeys() throws {
        let value = PlistValue.dictionary(["b": .string("a"), "a": .string("b"), "c": .array([.string("a"), .string("b")])])
        let bytes = try PlistCodec.encode(value, format: .binary)
        // Strings "a", "b" (once each) and key "c": three string objects.
        let trailer = Array(bytes.suffix(32))
        let objectCount = trailer[8..<16].reduce(0) { $0 << 8 | Int($1) }
        #expect(objectCount == 5)  // dict, "a", "b", "c", array
        #expect(try PlistCodec.decode(bytes) == value)
    }
}
