#!/usr/bin/env python3
"""Compares cov_dump's output (jinst) with CovPeer's (JaCoCo 0.8.6).

compare.py JINST_OUT JACOCO_OUT [--min-probes P] [--min-lines L] [--min-classes C] [--show N]

Prints: probe counts equal for N of M classes; per-line status equal on X%
of lines; class counters identical for Y% of class analyses (every probe
variant of every class); and the first differences. Exits 1 below a minimum
(percentages).
"""
import sys


def load(path):
    """A class is named by its name and how often that name came before (a
    list may hold one class compiled several ways); both tools print the
    classes in list order."""
    probes, classes, lines, methods, unsupported = {}, {}, {}, {}, set()
    seen = {}
    with open(path, encoding="utf-8", errors="replace") as f:
        for raw in f:
            parts = raw.rstrip("\n").split(" ")
            tag = parts[0]
            if tag in ("P", "U", "S") and len(parts) > 1:
                seen[parts[1]] = seen.get(parts[1], -1) + 1
            if len(parts) > 1:
                parts[1] = f"{parts[1]}#{seen.get(parts[1], 0)}"
            if tag == "P":
                probes[parts[1]] = int(parts[2])
            elif tag == "U":
                unsupported.add(parts[1])
            elif tag == "K":
                classes[(parts[1], parts[2])] = " ".join(parts[3:])
            elif tag == "M":
                methods.setdefault((parts[1], parts[2]), []).append(" ".join(parts[3:]))
            elif tag == "L":
                lines[(parts[1], parts[2])] = dict(
                    (int(x.split(":")[0]), x.split(":", 1)[1]) for x in parts[3:] if x)
    return probes, classes, lines, methods, unsupported


def pct(a, b):
    return 100.0 * a / b if b else 100.0


def main():
    args = sys.argv[1:]
    opts = {"--min-probes": 0.0, "--min-lines": 0.0, "--min-classes": 0.0, "--show": 10}
    files = []
    i = 0
    while i < len(args):
        if args[i] in opts:
            opts[args[i]] = float(args[i + 1])
            i += 2
        else:
            files.append(args[i])
            i += 1
    jp, jk, jl, jm, ju = load(files[0])
    cp, ck, cl, cm, _ = load(files[1])
    names = sorted(set(cp) - ju)
    same_probes = [n for n in names if jp.get(n) == cp[n]]
    shown = 0
    for n in names:
        if jp.get(n) != cp[n] and shown < opts["--show"]:
            print(f"  probes differ: {n}: jinst {jp.get(n)} jacoco {cp[n]}")
            shown += 1
    keys = sorted(k for k in ck if k[0] not in ju)
    same_classes = 0
    total_lines = same_lines = 0
    status_lines = same_status = 0
    for k in keys:
        if jk.get(k) == ck[k]:
            same_classes += 1
        elif shown < opts["--show"]:
            print(f"  counters differ: {k[0]} variant {k[1]}:\n    jinst  {jk.get(k)}\n    jacoco {ck[k]}")
            for a, b in zip(jm.get(k, []), cm.get(k, [])):
                if a != b:
                    print(f"    method jinst  {a}\n    method jacoco {b}")
            shown += 1
        a, b = jl.get(k, {}), cl.get(k, {})
        for line in set(a) | set(b):
            total_lines += 1
            same_lines += a.get(line) == b.get(line)
            status_lines += 1
            same_status += a.get(line, "0").split(":")[0] == b.get(line, "0").split(":")[0]
    print(f"classes: {len(names)} compared, {len(ju)} refused by jinst (jsr/ret)")
    if not names:
        print("no class compared")
        return 1
    print(f"probe counts equal for {len(same_probes)} of {len(names)} classes ({pct(len(same_probes), len(names)):.2f}%)")
    print(f"per-line status equal on {same_status} of {status_lines} lines ({pct(same_status, status_lines):.3f}%);"
          f" line counters equal on {pct(same_lines, total_lines):.3f}%")
    print(f"class counters identical for {same_classes} of {len(keys)} class analyses ({pct(same_classes, len(keys)):.3f}%)")
    ok = (pct(len(same_probes), len(names)) >= opts["--min-probes"]
          and pct(same_status, status_lines) >= opts["--min-lines"]
          and pct(same_classes, len(keys)) >= opts["--min-classes"])
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
