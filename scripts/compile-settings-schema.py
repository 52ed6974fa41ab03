#!/usr/bin/env python3
"""Compiles Schemas/settings-bundle.schema.json into the binary property lists
the SettingsBundle target embeds:

- Schemas/settings-bundle.schema.bplist: the whole schema (lint, messages);
- Schemas/settings-bundle.kinds.bplist: format, version and, per type, only
  kind, key and profile: all a validated `defaults write` needs to walk pages.

The JSON file is the source; the binary forms exist because they decode
several times faster, which keeps a validated `defaults write` within 10% of
an unvalidated one. `swift test` (SchemaTests) fails when they are stale.

usage: scripts/compile-settings-schema.py
"""
import json
import os
import plistlib
import sys

top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
source = os.path.join(top, "Schemas", "settings-bundle.schema.json")
target = os.path.join(top, "Schemas", "settings-bundle.schema.bplist")
kinds_target = os.path.join(top, "Schemas", "settings-bundle.kinds.bplist")


def check(value, path="$"):
    # Typed-JSON tags ($real, $date, $data, $dict) would need the AppHome codec; the schema uses none.
    if isinstance(value, dict):
        if len(value) == 1 and next(iter(value)).startswith("$"):
            sys.exit(f"{source}: {path}: typed-JSON tags are not supported here")
        for k, v in value.items():
            check(v, f"{path}.{k}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            check(v, f"{path}[{i}]")
    elif isinstance(value, float):
        sys.exit(f"{source}: {path}: reals are not supported here")


with open(source) as f:
    schema = json.load(f)
check(schema)
kinds = {"format": schema["format"], "version": schema["version"],
         "types": {name: {k: t[k] for k in ("kind", "key", "profile") if k in t} for name, t in schema["types"].items()}}


def write(value, path):
    data = plistlib.dumps(value, fmt=plistlib.FMT_BINARY, sort_keys=True)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    print(f"wrote {os.path.relpath(path, top)} ({len(data)} bytes)")


write(schema, target)
write(kinds, kinds_target)
