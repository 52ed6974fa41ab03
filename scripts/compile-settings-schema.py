#!/usr/bin/env python3
"""Compiles Schemas/settings-bundle.schema.json into the binary property list
the SettingsBundle target embeds (Schemas/settings-bundle.schema.bplist).

The JSON file is the source; the binary form only exists because it decodes
several times faster, which keeps a validated `defaults write` within 10% of
an unvalidated one. `swift test` (SchemaTests) fails when the two differ.

usage: scripts/compile-settings-schema.py
"""
import json
import os
import plistlib
import sys

top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
source = os.path.join(top, "Schemas", "settings-bundle.schema.json")
target = os.path.join(top, "Schemas", "settings-bundle.schema.bplist")


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
data = plistlib.dumps(schema, fmt=plistlib.FMT_BINARY, sort_keys=True)
tmp = target + ".tmp"
with open(tmp, "wb") as f:
    f.write(data)
    f.flush()
    os.fsync(f.fileno())
os.replace(tmp, target)
print(f"wrote {os.path.relpath(target, top)} ({len(data)} bytes)")
