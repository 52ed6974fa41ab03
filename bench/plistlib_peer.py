#!/usr/bin/env python3
"""The one-shot Python peer of `defaults read` / `defaults write`.

  plistlib_peer.py read  FILE KEY        print the value of KEY
  plistlib_peer.py write FILE KEY INT    set KEY to the integer INT

The write does what AppHome's store does: an exclusive flock on a lock file beside
the domain, read, modify, then a 0600 temp file in the same directory, fsync,
rename over the domain, fsync of the directory.
"""
import fcntl
import os
import plistlib
import sys


def load(path):
    try:
        with open(path, "rb") as f:
            return plistlib.load(f)
    except FileNotFoundError:
        return {}


def write(path, key, value):
    directory = os.path.dirname(os.path.abspath(path))
    name = os.path.basename(path)
    lock = os.open(os.path.join(directory, "." + name + ".lock"), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        d = load(path)
        d[key] = value
        data = plistlib.dumps(d, fmt=plistlib.FMT_BINARY)
        temp = os.path.join(directory, ".%s.%d.tmp" % (name, os.getpid()))
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        try:
            os.write(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.rename(temp, path)
        dfd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)
    finally:
        os.close(lock)


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "read":
        print(load(sys.argv[2])[sys.argv[3]])
    elif len(sys.argv) == 5 and sys.argv[1] == "write":
        write(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
