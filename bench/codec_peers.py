#!/usr/bin/env python3
"""Times Python's plistlib on the same binary plist plistbench measures.

    python3 bench/codec_peers.py <file.plist> [iterations]

Prints lines in plistbench's format so the numbers can be compared
directly: decode is plistlib.loads of the file's bytes, encode is
plistlib.dumps(FMT_BINARY) of the decoded value (no file I/O in either).
"""
import plistlib
import sys
import time


def report(what, size, times):
    times = sorted(times)
    median = times[len(times) // 2]
    print(f"{what} {size / 1048576:.1f} MB: best {times[0]:.1f} ms, median {median:.1f} ms")


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: codec_peers.py <file.plist> [iterations]")
    path = sys.argv[1]
    iterations = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    with open(path, "rb") as f:
        data = f.read()

    times = []
    value = None
    for _ in range(iterations):
        t0 = time.perf_counter()
        value = plistlib.loads(data)
        times.append((time.perf_counter() - t0) * 1000)
    report("plistlib decode", len(data), times)

    times = []
    out = b""
    for _ in range(iterations):
        t0 = time.perf_counter()
        out = plistlib.dumps(value, fmt=plistlib.FMT_BINARY, sort_keys=True)
        times.append((time.perf_counter() - t0) * 1000)
    report("plistlib encode", len(out), times)


if __name__ == "__main__":
    main()
