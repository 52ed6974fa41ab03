#if canImport(Glibc)
import Glibc
#endif
import AppHomeSystem

/// Prepares the process's heap for a large conversion (`plutil` alone: it runs
/// one command and exits).
///
/// A 10 MB archive becomes some 150 MB of values (the file's, the graph form's,
/// the JSON); with glibc's defaults that is 35,000 page faults and thousands of
/// `mprotect` calls as the decoding thread's arena grows a page at a time, a
/// third of the whole run. One arena (the decoding thread's `malloc` shares the
/// main heap), no `mmap` per large block, and the heap grown once by about what
/// the input will need, advised as transparent huge pages, make it some 1,000
/// faults. Nothing changes below `threshold` bytes of input (start-up of small
/// files is the budget there).
enum LargeInput {
    static let threshold = 1 << 20

    /// Called once, before a file of `bytes` bytes is decoded.
    static func prepareHeap(forInputBytes bytes: Int) {
        guard bytes >= threshold else { return }
        // mallopt(3) is in <malloc.h>, which Swift's Glibc module does not import.
        guard let mallopt = CLibrary.function("mallopt", as: (@convention(c) (Int32, Int32) -> Int32).self) else { return }
        let (trimThreshold, topPad, mmapMax, arenaMax): (Int32, Int32, Int32, Int32) = (-1, -2, -4, -8)   // M_* of <malloc.h>
        let expected = min(bytes * 16, 4 << 30)
        _ = mallopt(arenaMax, 1)
        _ = mallopt(mmapMax, 0)
        _ = mallopt(trimThreshold, Int32.max)
        _ = mallopt(topPad, 64 << 20)
        // Grow the heap once and give it back to malloc's top chunk: later blocks come from it.
        guard let block = malloc(expected) else { return }
        let page = 2 << 20
        let start = (Int(bitPattern: block) + page - 1) & ~(page - 1)
        let end = (Int(bitPattern: block) + expected) & ~(page - 1)
        if end > start { _ = madvise(UnsafeMutableRawPointer(bitPattern: start), end - start, MADV_HUGEPAGE) }
        free(block)
    }
}
