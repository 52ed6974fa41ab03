import CSodium
import Synchronization

/// Where ``SecureBytes`` get their memory: small buffers from slabs of
/// secure memory, large ones from `sodium_malloc` each.
///
/// `sodium_malloc` maps a region, puts guard pages around it, `mlock`s it
/// and, on `sodium_free`, unlocks and unmaps it: five system calls that
/// change the process's memory map, about 20 µs a buffer, and a keychain
/// look-up needs a dozen buffers (keys derived, a group's key table, the
/// secret). So a buffer of up to ``largestSlot`` bytes is a slot of a slab:
/// a 64 KiB `sodium_malloc` region (guarded, locked, left out of core
/// dumps like any other) cut into slots of one size, handed out in order.
/// A slot is zeroed when it is given back, before it goes on its size's
/// free list, and a free slot is reused before a new one; slabs
/// stay for the life of the process, so what is held is bounded by the
/// most buffers ever alive at once.
///
/// What a slot does not have is a guard page and a canary of its own: an
/// overrun of one slot reaches its neighbour instead of a guard page. Every
/// write into a ``SecureBytes`` is bounded by its count, and the buffers
/// above ``largestSlot`` (the secrets an app stores, up to a credential's
/// 1 MiB) keep `sodium_malloc`'s layout.
final class SecureArena: Sendable {
    /// The arena of every SecureBytes (tests make arenas of their own).
    static let shared = SecureArena()

    /// The slot sizes: powers of two from 32 bytes.
    static let slotSizes = [32, 64, 128, 256, 512, 1024, 2048, 4096]
    static var largestSlot: Int { slotSizes[slotSizes.count - 1] }
    /// Bytes of one slab.
    static let slabSize = 64 << 10

    private struct FreeLists {
        /// Free slots by size class, as addresses.
        var slots: [[UInt]] = Array(repeating: [], count: SecureArena.slotSizes.count)
        /// Every slab's address.
        var slabs: [UInt] = []
        /// By size class: the next never-used slot of its newest slab, and that slab's end.
        var next: [UInt] = Array(repeating: 0, count: SecureArena.slotSizes.count)
        var end: [UInt] = Array(repeating: 0, count: SecureArena.slotSizes.count)
    }
    private let lists = Mutex(FreeLists())

    init() {}

    /// Only an arena of a test ends: its slabs are freed (and zeroed) with it.
    deinit {
        lists.withLock { l in for base in l.slabs { sodium_free(UnsafeMutableRawPointer(bitPattern: base)) } }
    }

    /// The size class of a buffer of `count` bytes, or `nil` when it is
    /// larger than every slot.
    @inline(__always)
    static func sizeClass(_ count: Int) -> Int? {
        guard count <= largestSlot else { return nil }
        var c = 0
        while slotSizes[c] < count { c += 1 }
        return c
    }

    /// A buffer of at least `count` bytes and its size class (`nil`: from
    /// `sodium_malloc`, give it back with `sodium_free`).
    func allocate(_ count: Int) -> (UnsafeMutableRawPointer, Int?) {
        Sodium.ensureInitialized()
        guard let c = Self.sizeClass(count) else {
            guard let p = sodium_malloc(max(count, 1)) else { fatalError("sodium_malloc failed: out of memory") }
            return (p, nil)
        }
        let size = UInt(Self.slotSizes[c])
        let address: UInt = lists.withLock { l in
            if let p = l.slots[c].popLast() { return p }
            if l.next[c] + size <= l.end[c] {
                defer { l.next[c] += size }
                return l.next[c]
            }
            // A new slab for this size, used slot by slot.
            guard let slab = sodium_malloc(Self.slabSize) else { fatalError("sodium_malloc failed: out of memory") }
            let base = UInt(bitPattern: slab)
            l.slabs.append(base)
            l.next[c] = base + size
            l.end[c] = base + UInt(Self.slabSize)
            return base
        }
        return (UnsafeMutableRawPointer(bitPattern: address)!, c)
    }

    /// Gives back a buffer from ``allocate(_:)``, zeroed first.
    func free(_ pointer: UnsafeMutableRawPointer, sizeClass c: Int?) {
        guard let c else {
            sodium_free(pointer)
            return
        }
        sodium_memzero(pointer, Self.slotSizes[c])
        let address = UInt(bitPattern: pointer)
        lists.withLock { $0.slots[c].append(address) }
    }

    /// Slabs made so far (for tests).
    var slabCount: Int { lists.withLock { $0.slabs.count } }
}
