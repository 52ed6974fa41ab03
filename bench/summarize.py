#!/usr/bin/env python3
"""Prints the benchmark tables and the final summary block of bench/run.sh.

  summarize.py DIR

DIR holds what run.sh left there: hyperfine exports `read.json`, `write.json`,
`startup.json` (commands named with -n) and `codec.log`, the raw output of the codec
benchmarks, one `== <tool>` header line before each tool's output. Any of them may be
missing when that part was skipped.
"""
import json
import os
import re
import sys

# The targets: defaults read at most half of dconf read, defaults write at most half of
# gsettings set, measured in the same run.
TARGETS = {"read": ("dconf read", 0.5), "write": ("gsettings", 0.5)}
# defaults' start-up: at most this many ms more than /bin/true's (mean of each).
STARTUP_MARGIN_MS = 0.5


def load(path):
    try:
        with open(path) as f:
            return {r["command"]: r for r in json.load(f)["results"]}
    except FileNotFoundError:
        return None


def ms(seconds):
    return seconds * 1000.0


def fmt(x):
    return "%.2f" % x if x < 10 else "%.1f" % x if x < 100 else "%.0f" % x


def table(title, results, base):
    print("\n%s (mean ± σ, min, runs; ratio to %s)" % (title, base))
    print("  %-12s %18s %10s %6s %8s" % ("command", "mean", "min", "runs", "ratio"))
    reference = results[base]["mean"] if base in results else None
    for name, r in results.items():
        ratio = "%.2f" % (r["mean"] / reference) if reference else "-"
        print("  %-12s %10s ± %5s %8s ms %5d %8s" % (
            name, fmt(ms(r["mean"])), fmt(ms(r["stddev"] or 0)), fmt(ms(r["min"])), len(r["times"]), ratio))


def parse_codec(path):
    """{tool: {"decode"|"encode": (best, median)}} from lines like
    `plistlib decode 10.0 MB: best X ms, median Y ms` after a `== <tool>` header."""
    found = {}
    tool = None
    try:
        lines = open(path).read().splitlines()
    except FileNotFoundError:
        return found
    for line in lines:
        if line.startswith("== "):
            tool = line[3:].strip()
            continue
        m = re.search(r"\b(decode|encode)\b.*best ([0-9.]+) ms, median ([0-9.]+) ms", line)
        if m and tool:
            found.setdefault(tool, {})[m.group(1)] = (float(m.group(2)), float(m.group(3)))
    return found


def main():
    directory = sys.argv[1]
    read = load(os.path.join(directory, "read.json"))
    write = load(os.path.join(directory, "write.json"))
    startup = load(os.path.join(directory, "startup.json"))
    codec = parse_codec(os.path.join(directory, "codec.log"))

    if read:
        table("defaults read D K  vs  dconf read  vs  gsettings get  vs  python3 plistlib", read, "dconf read")
    if write:
        table("defaults write D K -int N  vs  gsettings set  vs  python3 plistlib read-modify-write", write, "gsettings")
    if startup:
        table("start-up: `defaults read D K` beside /bin/true and dconf read", startup, "dconf read")
    if codec:
        print("\ncodec, 10 MB binary plist (best / median of N runs, in-process)")
        for tool, ops in codec.items():
            cells = ["%s %s / %s ms" % (op, fmt(ops[op][0]), fmt(ops[op][1])) for op in ("decode", "encode") if op in ops]
            print("  %-28s %s" % (tool, "   ".join(cells)))

    print("\n==================== summary ====================")
    met_all = True
    for name, results in (("read", read), ("write", write)):
        if not results:
            print("%-6s: skipped" % name)
            continue
        peer, target = TARGETS[name]
        d = ms(results["defaults"]["mean"])
        b = ms(results[peer]["mean"])
        others = " | ".join("%s %s ms" % (n, fmt(ms(r["mean"]))) for n, r in results.items() if n != "defaults")
        ratio = d / b
        met = ratio <= target
        met_all &= met
        verb = "get/set" if name == "read" else "set"
        print("%-6s: defaults %s ms | %s | ratio defaults/%s %.2f (target ≤ %.1f) %s"
              % (name, fmt(d), others, peer if peer != "gsettings" else "gsettings " + verb, ratio, target,
                 "MET" if met else "NOT MET"))
    if startup:
        print("start : " + " | ".join("%s %s ms" % (n, fmt(ms(r["mean"]))) for n, r in startup.items()), end="")
        if "defaults" in startup and "/bin/true" in startup:
            more = ms(startup["defaults"]["mean"]) - ms(startup["/bin/true"]["mean"])
            print(" | defaults - /bin/true %.2f ms (target ≤ %g) %s"
                  % (more, STARTUP_MARGIN_MS, "MET" if more <= STARTUP_MARGIN_MS else "NOT MET"))
        else:
            print()
    else:
        print("start : skipped")
    for op in ("decode", "encode"):
        cells = ["%s %s ms" % (tool, fmt(ops[op][0])) for tool, ops in codec.items() if op in ops]
        print("%-6s: %s" % (op, " | ".join(cells) if cells else "skipped"), end="")
        ours = [ops[op][0] for tool, ops in codec.items() if op in ops and tool.startswith("plistbench")]
        peers = [(ops[op][0], tool) for tool, ops in codec.items() if op in ops and not tool.startswith("plistbench")]
        if ours and peers:
            print("  (best of each; plistbench/%s %.2f)" % (min(peers)[1], ours[0] / min(peers)[0]))
        else:
            print()
    print("read/write targets: %s" % ("all MET" if met_all else "NOT all met"))
    every_target(directory, read, write, startup)


def other_targets(directory):
    """Rows of the parts that print their targets in their own words, not through
    bench/target.sh: a line with `target <= N` and its ratio (`ratio R, target`,
    or `R (target`), with the first two `N ms` figures as ours and the peer's."""
    rows = []
    for name in sorted(os.listdir(directory)):
        if not (name.startswith("part-") and name.endswith(".log")):
            continue
        for line in open(os.path.join(directory, name), errors="replace"):
            if line.startswith("target: "):
                continue
            m = re.search(r"(?:ratio ([0-9.]+), target|([0-9.]+) \(target) <= ([0-9.]+)", line)
            if not m:
                continue
            ratio = float(m.group(1) or m.group(2))
            bound = float(m.group(3))
            figures = re.findall(r"([0-9][0-9.,]*) ms", line)
            ours, peer = (figures[0], figures[1]) if len(figures) >= 2 else ("-", "-")
            label = re.sub(r"\s+", " ", line.split("(")[0].split("|")[0]).strip()[:60]
            rows.append((name[5:-4] + ": " + label, ours, peer, "ms" if ours != "-" else "", "%.3f" % ratio,
                         "<= %g" % bound, "met" if ratio <= bound else "MISSED"))
    return rows


def every_target(directory, read, write, startup):
    """One table of every target of the run, met or missed, ours beside the peer's."""
    rows = []
    if startup and "defaults" in startup and "/bin/true" in startup:
        d, t = ms(startup["defaults"]["mean"]), ms(startup["/bin/true"]["mean"])
        rows.append(("defaults start-up vs /bin/true (at most %g ms more)" % STARTUP_MARGIN_MS, "%.3f" % d, "%.3f" % t, "ms",
                     "%.3f" % (d / t), "<= +%g ms" % STARTUP_MARGIN_MS, "met" if d - t <= STARTUP_MARGIN_MS else "MISSED"))
    for name, results in (("read", read), ("write", write)):
        if results:
            peer, bound = TARGETS[name]
            d, b = ms(results["defaults"]["mean"]), ms(results[peer]["mean"])
            rows.append(("defaults %s vs %s" % (name, peer), "%.3f" % d, "%.3f" % b, "ms", "%.3f" % (d / b),
                         "<= %g" % bound, "met" if d / b <= bound else "MISSED"))
    try:
        for line in open(os.path.join(directory, "targets.tsv")):
            cells = line.rstrip("\n").split("\t")
            if len(cells) == 7:
                rows.append(tuple(cells))
    except FileNotFoundError:
        pass
    rows += other_targets(directory)
    print("\n==================== every target of this run ====================")
    print("%-66s %12s %12s %-9s %8s %9s  %s" % ("target", "ours", "peer", "unit", "ratio", "bound", "result"))
    for r in rows:
        print("%-66s %12s %12s %-9s %8s %9s  %s" % (r[0][:66], r[1], r[2], r[3], r[4], r[5], r[6]))
    counts = {k: sum(1 for r in rows if r[6] == k) for k in ("met", "MISSED", "FAILED")}
    print("%d targets: %d met, %d missed, %d parts failed" % (len(rows), counts["met"], counts["MISSED"], counts["FAILED"]))


if __name__ == "__main__":
    main()
