import Testing
import PrefsProtocol

@Suite struct FrameReaderTests {
    static func header(version: UInt8 = Frame.version, reserved: UInt8 = 0, length: UInt32) -> [UInt8] {
        Frame.magic + [version, reserved, UInt8(length >> 24), UInt8((length >> 16) & 0xFF), UInt8((length >> 8) & 0xFF), UInt8(length & 0xFF)]
    }

    @Test func aFrameArrivingByteByByteIsReturnedOnceComplete() throws {
        var reader = FrameReader()
        let frame = Frame.encode([1, 2, 3])
        #expect(frame == Self.header(length: 3) + [1, 2, 3])
        for byte in frame.dropLast() {
            reader.append([byte])
            #expect(try reader.next() == nil)
            #expect(!reader.hasCompleteFrame)
        }
        reader.append([frame.last!])
        #expect(reader.hasCompleteFrame)
        #expect(try reader.next() == [1, 2, 3])
        #expect(try reader.next() == nil)
        #expect(reader.pendingByteCount == 0)
    }

    @Test func severalFramesInOneReadComeOutInOrder() throws {
        var reader = FrameReader()
        reader.append(Frame.encode([1]) + Frame.encode([]) + Frame.encode([2, 2]))
        #expect(try reader.next() == [1])
        #expect(try reader.next() == [])
        #expect(try reader.next() == [2, 2])
        #expect(try reader.next() == nil)
    }

    @Test(arguments: [
        (header(length: 0xFFFF_FFFF), FrameError.tooLarge(announced: 0xFFFF_FFFF, limit: 1024),
         "a frame of 4294967295 bytes is over the limit of 1024 bytes"),
        (header(version: 2, length: 0), .unsupportedVersion(2), "protocol version 2 is not supported (this side speaks version 1)"),
        (header(reserved: 1, length: 0), .reservedBits(1), "the reserved header byte is 1, not 0"),
        (Array("GET /".utf8), .badMagic, "the frame does not start with the prefsd magic bytes"),
        ([0x00], .badMagic, "the frame does not start with the prefsd magic bytes"),
    ])
    func aBadHeaderIsRefusedBeforeItsPayloadArrives(bytes: [UInt8], error: FrameError, message: String) {
        var reader = FrameReader(maximumPayload: 1024)
        reader.append(bytes)
        #expect(reader.hasCompleteFrame)
        #expect(throws: error) { try reader.next() }
        #expect(error.description == message)
    }

    @Test func theLimitItselfIsAccepted() throws {
        var reader = FrameReader(maximumPayload: 4)
        reader.append(Frame.encode([1, 2, 3, 4]))
        #expect(try reader.next() == [1, 2, 3, 4])
    }
}
