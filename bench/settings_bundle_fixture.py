#!/usr/bin/env python3
"""Writes a large Settings.bundle for the settings benchmark.

usage: settings_bundle_fixture.py OUT.bundle [SPECIFIERS] [LANGUAGES] [PAGES]

Root.plist holds a group per child pane; the rows are spread over Root and
nine child panes (binary plists, as Xcode ships them), cycling through every
Apple specifier type. Each of LANGUAGES .lproj directories has a complete
Root.strings in UTF-16 with a byte-order mark, so the bundle lints clean.
"""
import os
import plistlib
import sys

out = sys.argv[1]
total = int(sys.argv[2]) if len(sys.argv) > 2 else 500
languages = int(sys.argv[3]) if len(sys.argv) > 3 else 20
pages = int(sys.argv[4]) if len(sys.argv) > 4 else 10
titles = set()


def title(t):
    titles.add(t)
    return t


def row(n):
    key = f"key{n}"
    kind = n % 6
    if kind == 0:
        return {"Type": "PSGroupSpecifier", "Title": title(f"Section {n}"), "FooterText": title(f"Footer {n}")}
    if kind == 1:
        return {"Type": "PSToggleSwitchSpecifier", "Title": title(f"Toggle {n}"), "Key": key, "DefaultValue": n % 2 == 0}
    if kind == 2:
        return {"Type": "PSSliderSpecifier", "Key": key, "DefaultValue": 5.0, "MinimumValue": 0.0, "MaximumValue": 10.0}
    if kind == 3:
        return {"Type": "PSMultiValueSpecifier", "Title": title(f"Choice {n}"), "Key": key, "DefaultValue": "b",
                "Values": ["a", "b", "c"], "Titles": [title("Alpha"), title("Beta"), title("Gamma")]}
    if kind == 4:
        return {"Type": "PSTextFieldSpecifier", "Title": title(f"Text {n}"), "Key": key, "DefaultValue": "",
                "KeyboardType": "Alphabet", "AutocorrectionType": "No"}
    return {"Type": "PSRadioGroupSpecifier", "Title": title(f"Radio {n}"), "Key": key, "DefaultValue": 1,
            "Values": [1, 2], "Titles": [title("One"), title("Two")]}


os.makedirs(out, exist_ok=True)
per_page = total // pages
n = 0
root_rows = [{"Type": "PSGroupSpecifier", "Title": title("Pages")}]
for p in range(1, pages):
    root_rows.append({"Type": "PSChildPaneSpecifier", "Title": title(f"Page {p}"), "File": f"Page{p}"})
for p in range(pages):
    rows = root_rows if p == 0 else [{"Type": "PSGroupSpecifier", "Title": title(f"Page {p}")}]
    while len(rows) < per_page:
        n += 1
        rows.append(row(n))
    name = "Root" if p == 0 else f"Page{p}"
    with open(os.path.join(out, name + ".plist"), "wb") as f:
        plistlib.dump({"StringsTable": "Root", "PreferenceSpecifiers": rows}, f, fmt=plistlib.FMT_BINARY)
for i in range(languages):
    lproj = os.path.join(out, f"l{i:02d}.lproj")
    os.makedirs(lproj, exist_ok=True)
    text = "".join(f'"{t}" = "{t} ({i})";\n' for t in sorted(titles))
    with open(os.path.join(lproj, "Root.strings"), "wb") as f:
        f.write(text.encode("utf-16"))
