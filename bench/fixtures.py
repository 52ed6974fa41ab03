#!/usr/bin/env python3
"""Writes the benchmark's realistic ~100-key preference domain twice over:

- as a binary plist for `defaults import` (and the plistlib peer), and
- as a GSettings schema with the same keys, types and defaults, plus a file of
  `key<TAB>GVariant value` lines so the dconf database can be filled with the same
  values (dconf stores only values that differ from the schema's defaults).

Usage: fixtures.py OUT_PLIST OUT_SCHEMA_DIR OUT_VALUES
"""
import datetime
import plistlib
import re
import sys

SCHEMA_ID = "org.apphome.bench"


def domain():
    """An editor-like app's preferences: ~100 keys of every common type."""
    d = {
        "FontSize": 13,
        "FontName": "Menlo-Regular",
        "ShowLineNumbers": True,
        "TabWidth": 4,
        "Theme": "Solarized Dark",
        "ZoomLevel": 1.25,
        "WindowFrame": "{{100, 200}, {1280, 800}}",
        "LastUpdateCheck": datetime.datetime(2025, 4, 7, 12, 30, 13),
        "RecentFiles": ["/home/user/project%d/main.swift" % i for i in range(10)],
        "NSNavLastRootDirectory": "~/Documents",
        "SUEnableAutomaticChecks": True,
        "SUHasLaunchedBefore": True,
    }
    kinds = ["string", "int", "bool", "real", "array", "date"]
    for i in range(100 - len(d)):
        kind = kinds[i % len(kinds)]
        name = "Pref%s%02d" % (kind.capitalize(), i)
        if kind == "string":
            d[name] = "value number %d for a setting" % i
        elif kind == "int":
            d[name] = i * 37
        elif kind == "bool":
            d[name] = i % 4 == 2
        elif kind == "real":
            d[name] = i / 8.0 + 0.1
        elif kind == "array":
            d[name] = ["item-%d-%d" % (i, j) for j in range(i % 5 + 1)]
        else:
            d[name] = datetime.datetime(2024, 1 + i % 12, 1 + i % 28, i % 24, 0, 0)
    return d


def gsettings_key(name):
    """FontSize -> font-size; GSettings keys are lowercase words joined by '-'."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "-", name).lower()[:32]


def gvariant(value):
    """(type string, GVariant text) for a plist value."""
    if isinstance(value, bool):
        return "b", "true" if value else "false"
    if isinstance(value, int):
        return "i", str(value)
    if isinstance(value, float):
        return "d", repr(value)
    if isinstance(value, str):
        return "s", "'%s'" % value.replace("\\", "\\\\").replace("'", "\\'")
    if isinstance(value, datetime.datetime):
        epoch = value.replace(tzinfo=datetime.timezone.utc).timestamp()
        return "x", str(int(epoch))
    if isinstance(value, list):
        return "as", "[" + ", ".join(gvariant(v)[1] for v in value) + "]"
    raise TypeError(type(value))


def default_for(type_string):
    return {"b": "false", "i": "0", "d": "0.0", "s": "''", "x": "0", "as": "@as []"}[type_string]


def main():
    out_plist, schema_dir, out_values = sys.argv[1:4]
    d = domain()
    with open(out_plist, "wb") as f:
        plistlib.dump(d, f, fmt=plistlib.FMT_BINARY)

    lines = ['<?xml version="1.0" encoding="UTF-8"?>', "<schemalist>",
             '  <schema id="%s" path="/org/apphome/bench/">' % SCHEMA_ID]
    values = []
    for name, value in sorted(d.items()):
        key = gsettings_key(name)
        type_string, text = gvariant(value)
        lines.append('    <key name="%s" type="%s"><default>%s</default></key>'
                     % (key, type_string, default_for(type_string).replace("&", "&amp;").replace("<", "&lt;")))
        values.append("%s\t%s" % (key, text))
    lines += ["  </schema>", "</schemalist>", ""]
    with open("%s/%s.gschema.xml" % (schema_dir, SCHEMA_ID), "w") as f:
        f.write("\n".join(lines))
    with open(out_values, "w") as f:
        f.write("\n".join(values) + "\n")


if __name__ == "__main__":
    main()
