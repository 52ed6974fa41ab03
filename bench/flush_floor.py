#!/usr/bin/env python3
"""bench/flush_floor.py DIR [N]: the disk's own floor under prefsd's write latency.

Times, alone (one process, no prefsd, nothing else of ours running), N cycles of
  - the I/O of one prefsd commit into a spare, as ReplacementSpares does it: pwrite,
    ftruncate, fchmod and fdatasync of the spare, one renameat2(RENAME_EXCHANGE) of
    the spare and the domain (link and two renames where names cannot be swapped),
    fsync of the directory;
  - a lone pwrite + fdatasync of a 300-byte file, the least any durable write costs.
Every acknowledged write waits for its commit's I/O, so the storm's p99 cannot be
below the first line's p99 on the same file system. DIR is made and removed.
"""
import ctypes
import os
import shutil
import sys
import time

RENAME_EXCHANGE = 2
_libc = ctypes.CDLL(None, use_errno=True)
_renameat2 = getattr(_libc, 'renameat2', None)
AT_FDCWD = -100


def exchange(a, b):
    """Swaps the names a and b in one call; False where names cannot be swapped."""
    if _renameat2 is None:
        return False
    if _renameat2(AT_FDCWD, os.fsencode(a), AT_FDCWD, os.fsencode(b), RENAME_EXCHANGE) == 0:
        return True
    e = ctypes.get_errno()
    if e in (38, 22):  # ENOSYS, EINVAL: no swapping here
        return False
    raise OSError(e, os.strerror(e), a)


def percentiles(samples):
    samples.sort()
    n = len(samples)
    at = lambda f: samples[min(n - 1, int(n * f))] * 1e3
    return 'p50 %.3f  p90 %.3f  p99 %.3f  p99.9 %.3f ms' % (at(.5), at(.9), at(.99), at(.999))


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit('usage: bench/flush_floor.py DIR [N]')
    top = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) == 3 else 2000
    os.makedirs(top, mode=0o700)
    try:
        domain = os.path.join(top, 'com.example.floor.plist')
        spare = os.path.join(top, '.com.example.floor.plist.spare')
        previous = spare + '.prev'
        for path in (domain, spare):
            with open(path, 'wb') as f:
                f.write(b'z' * 300)
        directory = os.open(top, os.O_RDONLY | os.O_DIRECTORY)

        def commit(i):
            data = b'y' * (300 + i % 7)
            fd = os.open(spare, os.O_RDWR)
            os.pwrite(fd, data, 0)
            os.ftruncate(fd, len(data))
            os.fchmod(fd, 0o600)
            os.fdatasync(fd)
            os.close(fd)
            if not exchange(spare, domain):
                os.link(domain, previous)
                os.rename(spare, domain)
                os.rename(previous, spare)
            os.fsync(directory)

        def flush(i):
            fd = os.open(spare, os.O_RDWR)
            os.pwrite(fd, b'x' * 300, 0)
            os.fdatasync(fd)
            os.close(fd)

        for name, body in (('a commit\'s I/O', commit), ('pwrite + fdatasync', flush)):
            samples = []
            for i in range(n):
                start = time.perf_counter()
                body(i)
                samples.append(time.perf_counter() - start)
            print('floor: %-20s n=%d  %s' % (name, n, percentiles(samples)))
        os.close(directory)
    finally:
        shutil.rmtree(top, ignore_errors=True)


if __name__ == '__main__':
    main()
