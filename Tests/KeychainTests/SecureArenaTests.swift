#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import Keychain

/// The secure memory behind SecureBytes: small buffers are slots of
/// sodium_malloc slabs, zeroed before reuse; large ones are regions of their own.
@Suite struct SecureArenaTests {
    @Test func sizeClassesCoverEverySmallCount() {
        #expect(SecureArena.sizeClass(0) == 0)
        #expect(SecureArena.sizeClass(1) == 0)
        #expect(SecureArena.sizeClass(32) == 0)
        #expect(SecureArena.sizeClass(33) == 1)
        #expect(SecureArena.sizeClass(4096) == SecureArena.slotSizes.count - 1)
        #expect(SecureArena.sizeClass(4097) == nil)
        for n in [1, 31, 32, 33, 100, 1000, 4096] {
            #expect(SecureArena.slotSizes[SecureArena.sizeClass(n)!] >= n)
        }
    }

    @Test func aSlotIsZeroedWhenGivenBack() {
        let arena = SecureArena()
        let (p, c) = arena.allocate(200)
        #expect(c == SecureArena.sizeClass(200))
        memset(p, 0xA5, 256)
        arena.free(p, sizeClass: c)
        // The slot is on its free list, zeroed; nothing of the old bytes is left.
        let bytes = UnsafeRawBufferPointer(start: p, count: 256)
        #expect(bytes.allSatisfy { $0 == 0 })
        let (q, d) = arena.allocate(256)
        #expect(q == p && d == c)   // the last slot given back is the first reused
        arena.free(q, sizeClass: d)
        #expect(arena.slabCount == 1)
    }

    @Test func largeBuffersAreRegionsOfTheirOwn() {
        let arena = SecureArena()
        let (p, c) = arena.allocate(1 << 20)
        #expect(c == nil)
        memset(p, 1, 1 << 20)
        arena.free(p, sizeClass: c)
        #expect(arena.slabCount == 0)
    }

    @Test func manyBuffersStayDistinctAndKeepTheirBytes() {
        let buffers = (0..<3000).map { i in SecureBytes([UInt8](repeating: UInt8(i % 251), count: 1 + i % 300)) }
        for (i, b) in buffers.enumerated() {
            #expect(b.count == 1 + i % 300)
            b.withUnsafeBytes { #expect($0.allSatisfy { $0 == UInt8(i % 251) }) }
        }
        let addresses = Set(buffers.map { $0.withUnsafeBytes { UInt(bitPattern: $0.baseAddress!) } })
        #expect(addresses.count == buffers.count)
    }

    @Test func concurrentUseNeitherLosesNorSharesSlots() async {
        await withTaskGroup(of: Bool.self) { group in
            for t in 0..<8 {
                group.addTask {
                    var ok = true
                    for i in 0..<2000 {
                        let b = SecureBytes([UInt8](repeating: UInt8(t), count: 16 + i % 100))
                        ok = ok && b.withUnsafeBytes { $0.allSatisfy { $0 == UInt8(t) } }
                    }
                    return ok
                }
            }
            for await ok in group { #expect(ok) }
        }
    }
}
